import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import { requestState, spent } from './request-state.js';

/**
 * One JSON line per GraphQL operation: request id, operation name, HTTP status, duration,
 * upstream calls and error codes. Never headers, variables or bodies: nothing that could
 * hold a token or SOL credentials is ever handed to the logger.
 */
export function useRequestLog(logger: Logger, graphqlPath: string): Plugin {
  return {
    onRequest({ request }) {
      requestState(request);
    },
    onExecute({ args }) {
      const request = (args.contextValue as { request?: Request }).request;
      if (request) requestState(request).operationName = getOperationAST(args.document, args.operationName)?.name?.value;
    },
    onResultProcess({ request, result }) {
      const results = Array.isArray(result) ? result : Symbol.asyncIterator in result ? [] : [result];
      requestState(request).errorCodes = results.flatMap((r) => (r.errors ?? []).map((e) => String(e.extensions?.['code'])));
    },
    onResponse({ request, response }) {
      const state = requestState(request);
      response.headers.set('x-request-id', state.id);
      if (new URL(request.url).pathname !== graphqlPath || request.method === 'OPTIONS') return;
      if ((request.headers.get('accept') ?? '').includes('text/html') && request.method === 'GET') return; // GraphiQL page
      logger.info(
        {
          reqId: state.id,
          operation: state.operationName ?? null,
          status: response.status,
          durationMs: Math.round((performance.now() - state.startedAt) * 10) / 10,
          ...spent(state),
          estimatedCost: state.estimatedCost,
          errors: state.errorCodes,
        },
        'operation',
      );
    },
  };
}
