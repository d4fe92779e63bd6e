import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import { requestState, spent } from './request-state.js';
import type { Metrics } from './telemetry/metrics.js';
import { Tracing } from './telemetry/tracing.js';

export interface OperationReportOptions {
  logger: Logger;
  metrics: Metrics;
  tracing: Tracing | undefined;
  graphqlPath: string;
}

/**
 * What each GraphQL operation did, reported once, three ways: one JSON log line, the
 * operation metrics, and (with tracing on) the operation's span. Request id, operation
 * name, HTTP status, duration, upstream calls, plan queries, cache hits, error codes. Never
 * headers, variables or bodies: nothing that could hold a token or SOL credentials is ever
 * handed to the logger, a label or an attribute.
 */
export function useOperationReport({ logger, metrics, tracing, graphqlPath }: OperationReportOptions): Plugin {
  /** A GraphQL operation, as opposed to GraphiQL's page (a GET for HTML), a preflight or another path. */
  const isOperation = (request: Request, url: URL) =>
    url.pathname === graphqlPath &&
    request.method !== 'OPTIONS' &&
    !(request.method === 'GET' && (request.headers.get('accept') ?? '').includes('text/html'));

  return {
    onRequest({ request, url }) {
      const state = requestState(request);
      // Decided once, from the URL Yoga has already parsed.
      state.isOperation = isOperation(request, url);
      if (tracing && state.isOperation) state.span = tracing.startOperation(request.headers);
    },
    onExecute({ args }) {
      const request = (args.contextValue as { request?: Request }).request;
      if (!request) return;
      const operation = getOperationAST(args.document, args.operationName);
      const state = requestState(request);
      state.operationName = operation?.name?.value;
      state.operationType = operation?.operation;
    },
    onResultProcess({ request, result }) {
      const results = Array.isArray(result) ? result : Symbol.asyncIterator in result ? [] : [result];
      const state = requestState(request);
      state.errorCodes = results.flatMap((r) => (r.errors ?? []).map((e) => String(e.extensions?.['code'])));
      state.executed = results.some((r) => 'data' in r && r.data !== undefined);
    },
    onResponse({ request, response }) {
      const state = requestState(request);
      response.headers.set('x-request-id', state.id);
      if (!state.isOperation) return;
      const seconds = (performance.now() - state.startedAt) / 1000;
      const outcome = !state.executed ? 'rejected' : state.errorCodes.length ? 'error' : 'ok';
      const cost = spent(state);
      logger.info(
        {
          reqId: state.id,
          operation: state.operationName ?? null,
          status: response.status,
          durationMs: Math.round(seconds * 10_000) / 10,
          ...cost,
          estimatedCost: state.estimatedCost,
          errors: state.errorCodes,
        },
        'operation',
      );
      metrics.operation(state.operationName, outcome, seconds, state.errorCodes);
      if (state.span) {
        Tracing.end(
          state.span,
          {
            'graphql.operation.name': state.operationName ?? '',
            'graphql.operation.type': state.operationType ?? '',
            'http.response.status_code': response.status,
            'gateway.request_id': state.id,
            'gateway.outcome': outcome,
            'gateway.error_codes': state.errorCodes,
            'gateway.plan_queries': cost.queries,
            'gateway.upstream_calls': cost.upstreamCalls,
            'gateway.cache_hits': cost.cacheHits,
          },
          outcome !== 'ok',
        );
      }
    },
  };
}
