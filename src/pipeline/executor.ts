import {
  BREAK,
  execute,
  getDirectiveValues,
  getOperationAST,
  getVariableValues,
  visit,
  type DocumentNode,
  type ExecutionArgs,
  type GraphQLError,
} from 'graphql';
import { handleStreamOrSingleExecutionResult, type Plugin } from 'graphql-yoga';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { madePace } from '../schema/stream-pace.js';
import { refusal } from '../errors.js';
import { answerMediaType } from './yoga-mirror.js';

/**
 * Set on the server context by a transport that answers with one JSON result and nothing else
 * (the node:http fast path): an incremental operation that reaches it is refused before any call.
 * The fast path hands such documents to Yoga, which streams; this holds should one get through.
 */
export const ONE_RESULT_ONLY = Symbol('gateway.oneResultOnly');

/**
 * Why an incremental document cannot run as asked, before any resolver (and so any call):
 * an `Accept` that takes no stream (Yoga would run it, bill it, then answer an empty 406), or
 * an `@stream` with a negative `initialCount` (graphql-tools fails on it mid-execution).
 */
function incrementalRefusal(args: ExecutionArgs): GraphQLError | undefined {
  const context = args.contextValue as { request?: Request; [ONE_RESULT_ONLY]?: boolean };
  const accept = context.request?.headers.get('accept');
  // Yoga's own choice of media type: with none for a stream, it would run the operation, then answer an empty 406.
  if (answerMediaType(accept, true) === undefined || context[ONE_RESULT_ONLY]) {
    return refusal('streamNeedsAccept');
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
  return negative ? refusal('streamNegative') : undefined;
}

/**
 * @defer and @stream (@graphql-yoga/plugin-defer-stream), with its validation rules added only for
 * a document that uses them: the plugin swaps graphql-js's overlapping-fields rule for its own on
 * every request, filtering the whole rule list by name each time, which was a measured cost of
 * every operation (docs/performance.md). For any other document the two rules judge alike.
 */
export function useIncrementalDelivery(): Plugin {
  const plugin: Plugin = useDeferStream();
  // Its two hooks: the directives added to the schema, and the rules.
  const { onSchemaChange, onValidate } = plugin;
  if (Object.keys(plugin).some((hook) => hook !== 'onSchemaChange' && hook !== 'onValidate')) {
    throw new Error('@graphql-yoga/plugin-defer-stream has a hook useIncrementalDelivery does not pass on: see src/pipeline/executor.ts');
  }
  return {
    ...(onSchemaChange ? { onSchemaChange } : {}),
    onValidate: (payload) => (onValidate && isIncremental(payload.params.documentAST) ? onValidate(payload) : undefined),
  };
}

/** Whether a document asks for incremental delivery, worked out once per parsed document. */
const incremental = new WeakMap<DocumentNode, boolean>();
function isIncremental(document: DocumentNode): boolean {
  let found = incremental.get(document);
  if (found === undefined) {
    found = false;
    visit(document, {
      Directive(node) {
        if (node.name.value === 'defer' || node.name.value === 'stream') {
          found = true;
          return BREAK;
        }
        return undefined;
      },
    });
    incremental.set(document, found);
  }
  return found;
}

/**
 * The executor: graphql-js's own `execute`, which keeps response keys in selection order (the
 * spec's serialized map ordering); Yoga's default executor orders them by resolution time.
 * graphql-js 16 cannot run `@defer` or `@stream`: a document that uses them runs on Yoga's
 * default executor (@graphql-tools/executor), which delivers them incrementally.
 *
 * Not graphql-jit, though cheaper: its answers differ from graphql-js's (test/e2e/repeated-answers.test.ts
 * holds the same answer every run), and it writes argument strings into the code it generates,
 * which a crafted string escapes: code run by an unauthenticated query (docs/performance.md).
 */
export function useExecutor(): Plugin {
  const graphqlJs = execute as (args: ExecutionArgs) => unknown;
  return {
    onExecute: ({ args, setExecuteFn, setResultAndStopExecution }) => {
      if (!isIncremental(args.document)) return setExecuteFn(graphqlJs as never);
      const refusal = incrementalRefusal(args);
      if (refusal) return setResultAndStopExecution({ errors: [refusal] });
      // Each part as its writer pulls it: a streamed list reads on at that pace (src/schema/stream-pace.ts).
      const context: object = args.contextValue;
      return { onExecuteDone: (done) => handleStreamOrSingleExecutionResult(done, ({ result }) => madePace(context)?.pulled(result)) };
    },
    // A subscription's events go out over SSE only: asked for anything else, it is refused before it starts.
    onSubscribe: ({ args, setResultAndStopExecution }) => {
      const context = args.contextValue as { request?: Request; [ONE_RESULT_ONLY]?: boolean };
      if (answerMediaType(context.request?.headers.get('accept'), true) === 'text/event-stream' && !context[ONE_RESULT_ONLY]) return;
      setResultAndStopExecution({
        errors: [refusal('subscriptionsOverSse')],
      });
    },
  };
}
