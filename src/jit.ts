import { getOperationAST, type DocumentNode, type ExecutionArgs, type GraphQLError } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';

export interface JitOptions {
  /** Runs of one operation of one document before it is compiled (1: on its first run). */
  after: number;
  /** Told when graphql-jit cannot compile an operation; graphql-js keeps running it. */
  onCompileError?: (errors: readonly GraphQLError[]) => void;
}

/**
 * graphql-jit for the operations that come back. Compiling costs far more than one run (about
 * a millisecond), so an operation is compiled on its `after`-th run: a client sending a new
 * document every time never makes the gateway compile for nothing, and the documents apps
 * repeat, nearly all of the traffic, run compiled. Parsed documents are cached (same text,
 * same DocumentNode), so counting by node counts by text; the WeakMap lets uncached ones go.
 * Only operations the document really holds are counted, so a client cannot grow the map
 * with made-up operation names. Subscriptions, and anything graphql-jit cannot compile, stay
 * with graphql-js (the executor set before this plugin).
 *
 * Written here rather than with @envelop/graphql-jit, whose cache holds one compiled query per
 * document whatever `operationName` asks for: a document with two operations ran the first
 * one for both (test/e2e/jit.test.ts), which GraphiQL, sending its whole editor, would hit.
 * That plugin also answers an operation it cannot compile with the compile error on every run.
 */
export function useJit({ after, onCompileError }: JitOptions): Plugin {
  /** Per document and operation name: runs so far, then the compiled query, or false for graphql-js. */
  const state = new WeakMap<DocumentNode, Map<string, number | CompiledQuery | false>>();
  return {
    onExecute({ args, setExecuteFn }) {
      const operation = getOperationAST(args.document, args.operationName);
      if (!operation) return; // graphql-js reports the unknown operation.
      const key = args.operationName ?? '';
      let byOperation = state.get(args.document);
      if (!byOperation) state.set(args.document, (byOperation = new Map()));
      let entry = byOperation.get(key) ?? 0;
      if (typeof entry === 'number') {
        if (entry + 1 < after) {
          byOperation.set(key, entry + 1);
          return;
        }
        entry = false;
        if (operation.operation !== 'subscription') {
          const compiled = compileQuery(args.schema, args.document, args.operationName ?? undefined);
          if (isCompiledQuery(compiled)) entry = compiled;
          else onCompileError?.(compiled.errors ?? []);
        }
        byOperation.set(key, entry);
      }
      if (entry) {
        const query = entry.query;
        setExecuteFn(((a: ExecutionArgs) => query(a.rootValue, a.contextValue, a.variableValues)) as never);
      }
    },
  };
}
