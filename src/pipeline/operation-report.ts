import { LRUCache } from 'lru-cache';
import { getOperationAST, type ExecutionArgs, type ExecutionResult, type GraphQLError } from 'graphql';
import { finalAsyncIterator, isAsyncIterable, mapAsyncIterator, type Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import { requestState, spent, type RequestState } from '../schema/request-state.js';
import type { Metrics } from '../telemetry/metrics.js';
import { Tracing } from '../telemetry/tracing.js';

export interface OperationReportOptions {
  logger: Logger;
  metrics: Metrics;
  tracing: Tracing | undefined;
}

type MaybeStream = ExecutionResult | readonly ExecutionResult[] | AsyncIterable<unknown>;
const NONE: readonly ExecutionResult[] = [];

/**
 * What each GraphQL operation did, reported once, three ways: one JSON log line, the
 * operation metrics, and (with tracing on) the operation's span. Request id, operation
 * name, HTTP status, duration, upstream calls, plan queries, cache hits, error codes. Never
 * headers, variables or bodies: nothing that could hold a token or SOL credentials is ever
 * handed to the logger, a label or an attribute.
 *
 * Its steps are called by the Yoga plugin below and by the node:http fast path
 * (src/http/fast-path.ts), so both paths report alike.
 */
/** Callers remembered as accepted by the service. */
const ACCEPTED_CALLERS = 10_000;

export class OperationReport {
  readonly #lineLogger: Logger;
  readonly #metrics: Metrics;
  readonly #tracing: Tracing | undefined;
  /** Callers the service has accepted lately (a paid answer, a cache hit under their token) or signed in: their operations' names are kept in /metrics. */
  readonly #accepted = new LRUCache<string, true>({ max: ACCEPTED_CALLERS });

  constructor({ logger, metrics, tracing }: OperationReportOptions) {
    // The line holds only fixed fields (a sanitized request id, a GraphQL name, numbers, error
    // codes), so the redaction's wildcard walk, the costliest part of a line (docs/performance.md),
    // has nothing to find in it. Every other log call keeps the redaction.
    this.#lineLogger = logger.child({}, { redact: { paths: [] } });
    this.#metrics = metrics;
    this.#tracing = tracing;
  }

  /**
   * Whether this request's operation name may take a place among /metrics' labels: its caller signed in, or was accepted
   * by the service, now or lately. A made-up token proves nothing, and its names are counted as "other".
   */
  #proven(state: RequestState): boolean {
    if (state.signedIn) return true;
    if (!state.caller) return false;
    if (state.cacheHits > 0 || state.upstreamCalls.some((c) => c.queries > 0)) this.#accepted.set(state.caller, true);
    return this.#accepted.has(state.caller);
  }

  /** The request arrived; `isOperation` tells a GraphQL operation from a page, preflight or other path. */
  begin(request: Request, isOperation: boolean): void {
    const state = requestState(request);
    state.isOperation = isOperation;
    if (this.#tracing && isOperation) state.span = this.#tracing.startOperation(request.headers);
  }

  /** Execution starts: the operation's name and type are known. */
  executing(args: ExecutionArgs): void {
    const request = (args.contextValue as { request?: Request }).request;
    if (!request) return;
    const operation = getOperationAST(args.document, args.operationName);
    const state = requestState(request);
    state.operationName = operation?.name?.value;
    state.operationType = operation?.operation;
  }

  /**
   * An incremental answer (@defer, @stream): the same stream, whose parts' error codes are
   * gathered as they go out, and whose report is written once its last part has (`end` only
   * sets the request id then).
   */
  stream<T>(request: Request, parts: AsyncIterable<T>): AsyncIterable<T> {
    const state = requestState(request);
    state.streaming = { status: undefined };
    const gather = (part: T) => {
      const p = part as { data?: unknown; errors?: readonly GraphQLError[]; incremental?: readonly { errors?: readonly GraphQLError[] }[] };
      if (p.data !== undefined && p.data !== null) state.executed = true;
      for (const e of p.errors ?? []) state.errorCodes.push(String(e.extensions?.['code']));
      for (const entry of p.incremental ?? []) for (const e of entry.errors ?? []) state.errorCodes.push(String(e.extensions?.['code']));
      return part;
    };
    return finalAsyncIterator(mapAsyncIterator(parts, gather), () => {
      const status = state.streaming?.status ?? 200;
      state.streaming = undefined;
      this.end(request, status);
    });
  }

  /** The final result (after the error contract): its error codes, and whether it ran. */
  result(request: Request, result: MaybeStream): void {
    // A stream reports no codes; a batch, each result's. One loop, with no array or callback
    // made for the single result that nearly every request has.
    const single = !Array.isArray(result) && !(Symbol.asyncIterator in result) ? (result as ExecutionResult) : undefined;
    const many: readonly ExecutionResult[] = !single && Array.isArray(result) ? result : NONE;
    const codes: string[] = [];
    let executed = false;
    for (let i = 0, n = single ? 1 : many.length; i < n; i++) {
      const r = single ?? many[i]!;
      if (r.errors) for (const e of r.errors) codes.push(String(e.extensions?.['code']));
      if ('data' in r && r.data !== undefined) executed = true;
    }
    const state = requestState(request);
    state.errorCodes = codes;
    state.executed = executed;
  }

  /** The answer is ready: the request id it must carry, and the report itself. */
  end(request: Request, status: number): string {
    const state = requestState(request);
    if (!state.isOperation) return state.id;
    // A stream's report waits for its last part.
    if (state.streaming) {
      state.streaming.status = status;
      return state.id;
    }
    const seconds = (performance.now() - state.startedAt) / 1000;
    const outcome = !state.executed ? 'rejected' : state.errorCodes.length ? 'error' : 'ok';
    const cost = spent(state);
    const line: Record<string, unknown> = {
      reqId: state.id,
      operation: state.operationName ?? null,
      status,
      durationMs: Math.round(seconds * 10_000) / 10,
      queries: cost.queries,
      upstreamCalls: cost.upstreamCalls,
      cacheHits: cost.cacheHits,
      estimatedCost: state.estimatedCost,
      errors: state.errorCodes,
    };
    // Only when the upstream was down and a last good record was answered. Added after, not
    // spread in: a spread inside the literal takes V8's slow path (docs/performance.md).
    if (cost.staleHits) line['staleHits'] = cost.staleHits;
    this.#lineLogger.info(line, 'operation');
    this.#metrics.operation(state.operationName, outcome, seconds, state.errorCodes, this.#proven(state));
    if (state.span) {
      Tracing.end(
        state.span,
        {
          'graphql.operation.name': state.operationName ?? '',
          'graphql.operation.type': state.operationType ?? '',
          'http.response.status_code': status,
          'gateway.request_id': state.id,
          'gateway.outcome': outcome,
          'gateway.error_codes': state.errorCodes,
          'gateway.plan_queries': cost.queries,
          'gateway.upstream_calls': cost.upstreamCalls,
          'gateway.cache_hits': cost.cacheHits,
          'gateway.stale_hits': cost.staleHits,
        },
        outcome !== 'ok',
      );
    }
    return state.id;
  }
}

/** A request Yoga answers with GraphiQL's page instead of running it, when GraphiQL is served: a GET for HTML. */
export function asksForGraphiQL(method: string | undefined, accept: string | null | undefined): boolean {
  return method === 'GET' && (accept ?? '').includes('text/html');
}

/** The report as a Yoga plugin, for every request Yoga handles; `graphiql`: whether GraphiQL is served (GRAPHIQL). */
export function useOperationReport(report: OperationReport, graphqlPath: string, graphiql: boolean): Plugin {
  /** A GraphQL operation, as opposed to GraphiQL's page, a preflight or another path. */
  const isOperation = (request: Request, url: URL) =>
    url.pathname === graphqlPath &&
    request.method !== 'OPTIONS' &&
    !(graphiql && asksForGraphiQL(request.method, request.headers.get('accept')));

  return {
    // Decided once, from the URL Yoga has already parsed.
    onRequest: ({ request, url }) => report.begin(request, isOperation(request, url)),
    onExecute: ({ args }) => report.executing(args),
    onResultProcess: ({ request, result, setResult }) => {
      if (isAsyncIterable(result)) setResult(report.stream(request, result));
      else report.result(request, result);
    },
    onResponse({ request, response }) {
      response.headers.set('x-request-id', report.end(request, response.status));
    },
  };
}
