import { execute, getOperationAST, type DocumentNode, type ExecutionArgs, type GraphQLError } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';

export interface ExecutorOptions {
  /** Runs of one operation of one document before graphql-jit compiles it (1: on its first run); undefined: graphql-js only. */
  jitAfter: number | undefined;
  /** Told when graphql-jit cannot compile an operation; graphql-js keeps running it. */
  onCompileError?: (errors: readonly GraphQLError[]) => void;
}

type Execute = (args: ExecutionArgs) => unknown;

/**
 * The executor, as one envelop plugin: graphql-js, or graphql-jit for the operations that come
 * back. Both keep response keys in selection order (the spec's serialized map ordering); Yoga's
 * default executor orders them by resolution time. One plugin rather than two (graphql-js set
 * by one, then replaced by the other), because each onExecute hook is a step of envelop's
 * asynchronous hook walk on every request, with the objects it allocates.
 *
 * Compiling costs far more than one run (about a millisecond), so an operation is compiled on
 * its `jitAfter`-th run: a client sending a new document every time never makes the gateway
 * compile for nothing, and the documents apps repeat, nearly all of the traffic, run compiled.
 * Parsed documents are cached (same text, same DocumentNode), so counting by node counts by
 * text; the WeakMap lets uncached ones go. Only operations the document really holds are
 * counted, so a client cannot grow the map with made-up operation names. Subscriptions,
 * operations with default values of variables, and anything graphql-jit cannot compile stay
 * with graphql-js.
 *
 * Written here rather than with @envelop/graphql-jit, whose cache holds one compiled query per
 * document whatever `operationName` asks for: a document with two operations ran the first
 * one for both (test/e2e/jit.test.ts), which GraphiQL, sending its whole editor, would hit.
 * That plugin also answers an operation it cannot compile with the compile error on every run.
 */
export function useExecutor({ jitAfter, onCompileError }: ExecutorOptions): Plugin {
  const graphqlJs = execute as Execute;
  if (jitAfter === undefined) return { onExecute: ({ setExecuteFn }) => setExecuteFn(graphqlJs as never) };
  const after = jitAfter;
  /** Per document and operation name: runs so far, then the compiled executor, or false for graphql-js. */
  const state = new WeakMap<DocumentNode, Map<string, number | Execute | false>>();
  const choose = (args: ExecutionArgs): Execute => {
    const operation = getOperationAST(args.document, args.operationName);
    if (!operation) return graphqlJs; // graphql-js reports the unknown operation.
    const key = args.operationName ?? '';
    let byOperation = state.get(args.document);
    if (!byOperation) state.set(args.document, (byOperation = new Map()));
    const entry = byOperation.get(key) ?? 0;
    if (typeof entry !== 'number') return entry || graphqlJs;
    if (entry + 1 < after) {
      byOperation.set(key, entry + 1);
      return graphqlJs;
    }
    let compiledFn: Execute | false = false;
    // graphql-jit 0.8.7 refuses an omitted `$v: T! = default` as "not provided": graphql-js runs those.
    const defaults = operation.variableDefinitions?.some((v) => v.defaultValue !== undefined) ?? false;
    if (operation.operation !== 'subscription' && !defaults) {
      const compiled = compileQuery(args.schema, args.document, args.operationName ?? undefined);
      if (isCompiledQuery(compiled)) {
        const query = compiled.query;
        compiledFn = (a) => query(a.rootValue, a.contextValue, a.variableValues);
      } else onCompileError?.(compiled.errors ?? []);
    }
    byOperation.set(key, compiledFn);
    return compiledFn || graphqlJs;
  };
  return { onExecute: ({ args, setExecuteFn }) => setExecuteFn(choose(args) as never) };
}
