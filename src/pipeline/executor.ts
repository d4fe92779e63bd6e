import {
  BREAK,
  Kind,
  execute,
  getDirectiveValues,
  getOperationAST,
  getVariableValues,
  visit,
  type ASTNode,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLError,
} from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';
import { gatewayError } from '../errors.js';

/** An `Accept` that can take an incremental answer (multipart/mixed or text/event-stream, or a wildcard). */
const STREAMS = /multipart\/(mixed|\*)|text\/(event-stream|\*)|\*\/\*/i;

/**
 * Why an incremental document cannot run as asked, before any resolver (and so any call):
 * an `Accept` that takes no stream (Yoga would run it, bill it, then answer an empty 406), or
 * an `@stream` with a negative `initialCount` (graphql-tools fails on it mid-execution).
 */
function incrementalRefusal(args: ExecutionArgs): GraphQLError | undefined {
  const accept = (args.contextValue as { request?: Request }).request?.headers.get('accept');
  if (accept && !STREAMS.test(accept)) {
    return gatewayError(
      'BAD_REQUEST',
      'Con @defer o @stream, la respuesta llega por partes: acepte multipart/mixed o text/event-stream (cabecera Accept).',
      {
        extensions: { http: { status: 406 } },
      },
    );
  }
  const stream = args.schema.getDirective('stream');
  const operation = getOperationAST(args.document, args.operationName);
  // The variables as execution will see them, defaults filled in (a failure to coerce is execution's to report).
  const coerced = getVariableValues(
    args.schema,
    operation?.variableDefinitions ?? [],
    (args.variableValues ?? {}) as Record<string, unknown>,
  );
  const variables = coerced.coerced ?? {};
  let negative = false;
  visit(args.document, {
    Field(node) {
      if (!stream || !node.directives?.some((d) => d.name.value === 'stream')) return undefined;
      const values = getDirectiveValues(stream, node, variables);
      if (typeof values?.['initialCount'] === 'number' && values['initialCount'] < 0) {
        negative = true;
        return BREAK;
      }
      return undefined;
    },
  });
  return negative ? gatewayError('INVALID_INPUT', 'El initialCount de @stream no puede ser negativo.') : undefined;
}

/**
 * Whether any node of a document passes `test`, worked out once per parsed document (parsed
 * documents are cached, so once per text; the WeakMap lets uncached ones go).
 */
function anyNode(test: (node: ASTNode) => boolean): (document: DocumentNode) => boolean {
  const seen = new WeakMap<DocumentNode, boolean>();
  return (document) => {
    let found = seen.get(document);
    if (found === undefined) {
      found = false;
      visit(document, {
        enter(node) {
          if (!test(node)) return undefined;
          found = true;
          return BREAK;
        },
      });
      seen.set(document, found);
    }
    return found;
  };
}

/** Whether a document asks for incremental delivery. */
const isIncremental = anyNode((node) => node.kind === Kind.DIRECTIVE && (node.name.value === 'defer' || node.name.value === 'stream'));

type Execute = (args: ExecutionArgs) => unknown;

/** Runs of one operation before it is compiled: a document sent once is never compiled for nothing. */
const COMPILE_ON_RUN = 2;

/**
 * Whether graphql-jit may answer an operation of this document: a query (running it again
 * must be free of effects) without fragments (where graphql-jit was seen to order fields
 * differently) and without variable defaults (graphql-jit read an omitted `$v: T! = d` as not
 * provided).
 */
const isCompilable = (document: DocumentNode) => !hasUncompilable(document);
const hasUncompilable = anyNode(
  (node) =>
    node.kind === Kind.FRAGMENT_DEFINITION ||
    node.kind === Kind.FRAGMENT_SPREAD ||
    node.kind === Kind.INLINE_FRAGMENT ||
    (node.kind === Kind.OPERATION_DEFINITION && node.operation !== 'query') ||
    (node.kind === Kind.VARIABLE_DEFINITION && node.defaultValue !== undefined),
);

/**
 * graphql-jit for the queries that come back, with graphql-js writing every answer that has an
 * error. A compiled query's answer is used only when it has none (its bodies then match
 * graphql-js's byte for byte: test/e2e/executors.test.ts); otherwise graphql-js runs the
 * operation again over the same request, whose loaders hold every load already made, answers
 * and failures alike, so no call is made twice. Variables are coerced by graphql-js first, so
 * that what it refuses is refused in its words.
 */
function hybrid(graphqlJs: Execute, { onCompileError, onAnswer }: Omit<ExecutorOptions, 'jit'>): Execute {
  const compiledAnswer = (result: ExecutionResult) => {
    onAnswer?.('graphql-jit');
    return result;
  };
  /** Per document and operation name: runs so far, then the compiled executor, or false for graphql-js. */
  const state = new WeakMap<DocumentNode, Map<string, number | Execute | false>>();
  const compile = (args: ExecutionArgs): Execute | false => {
    const compiled = compileQuery(args.schema, args.document, args.operationName ?? undefined);
    if (!isCompiledQuery(compiled)) {
      onCompileError?.(compiled.errors ?? []);
      return false;
    }
    const operation = getOperationAST(args.document, args.operationName);
    const definitions = operation?.variableDefinitions ?? [];
    const settle = (args: ExecutionArgs) => (result: ExecutionResult) => (result.errors?.length ? graphqlJs(args) : compiledAnswer(result));
    return (args) => {
      let variables = args.variableValues;
      if (definitions.length > 0) {
        const coerced = getVariableValues(args.schema, definitions, (variables ?? {}) as Record<string, unknown>);
        if (coerced.errors) return graphqlJs(args);
        variables = coerced.coerced;
      }
      const result = compiled.query(args.rootValue, args.contextValue, variables);
      return 'then' in result ? result.then(settle(args)) : settle(args)(result);
    };
  };
  return (args) => {
    if (!isCompilable(args.document)) return graphqlJs(args);
    const key = args.operationName ?? '';
    let byOperation = state.get(args.document);
    if (!byOperation) state.set(args.document, (byOperation = new Map()));
    const entry = byOperation.get(key) ?? 0;
    if (typeof entry !== 'number') return (entry || graphqlJs)(args);
    // Only operations the document holds are counted: a made-up operation name grows nothing.
    if (!getOperationAST(args.document, args.operationName)) return graphqlJs(args);
    if (entry + 1 < COMPILE_ON_RUN) {
      byOperation.set(key, entry + 1);
      return graphqlJs(args);
    }
    const compiled = compile(args);
    byOperation.set(key, compiled);
    return (compiled || graphqlJs)(args);
  };
}

export interface ExecutorOptions {
  /** graphql-jit for the queries that come back (GRAPHQL_JIT=on); false: graphql-js alone. */
  jit: boolean;
  /** Told when graphql-jit cannot compile an operation; graphql-js keeps running it. */
  onCompileError?: (errors: readonly GraphQLError[]) => void;
  /** Told which executor wrote each answer (not those of `@defer`/`@stream`). */
  onAnswer?: (executor: 'graphql-jit' | 'graphql-js') => void;
}

/**
 * The executor: graphql-js's own `execute`, which keeps response keys in selection order (the
 * spec's serialized map ordering; Yoga's default executor orders them by resolution time), or
 * graphql-jit where it gives the same bytes (`hybrid`, above). graphql-js 16 cannot run
 * `@defer` or `@stream`: a document that uses them runs on Yoga's default executor
 * (@graphql-tools/executor), which delivers them incrementally.
 */
export function useExecutor({ jit, ...options }: ExecutorOptions): Plugin {
  const graphqlJs: Execute = (args) => {
    options.onAnswer?.('graphql-js');
    return execute(args);
  };
  const chosen = jit ? hybrid(graphqlJs, options) : graphqlJs;
  return {
    onExecute: ({ args, setExecuteFn, setResultAndStopExecution }) => {
      if (!isIncremental(args.document)) return setExecuteFn(chosen as never);
      const refusal = incrementalRefusal(args);
      if (refusal) setResultAndStopExecution({ errors: [refusal] });
    },
  };
}
