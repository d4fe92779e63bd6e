import type { YogaInitialContext } from 'graphql-yoga';
import type { Logger } from 'pino';
import { createLoaders, type Loaders } from './loaders.js';
import type { RequestState } from './request-state.js';
import { requestState } from './request-state.js';
import type { CallContext, UpstreamClient } from './upstream/client.js';

export interface Context {
  /** The caller's bearer token, exactly as sent; undefined when the request has none. */
  readonly token: string | undefined;
  readonly upstream: UpstreamClient;
  /** Token plus this request's call observer, handed to every upstream call. */
  readonly call: CallContext;
  readonly loaders: Loaders;
  /** What this request did (calls, cost), for its log line and its `extensions`. */
  readonly state: RequestState;
}

/** The token of an `Authorization: Bearer <token>` header; any other scheme or a blank token is no token. */
export function bearerToken(header: string | null): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer[ \t]+(\S.*)$/i.exec(header.trim());
  return match?.[1]?.trim() || undefined;
}

export function createContextFactory(upstream: UpstreamClient, concurrency: number, logger: Logger) {
  return ({ request }: YogaInitialContext): Context => {
    const token = bearerToken(request.headers.get('authorization'));
    const state = requestState(request);
    const call: CallContext = {
      token,
      observe: (info) => {
        state.upstreamCalls.push(info);
        logger.debug({ reqId: state.id, upstream: info }, 'upstream call');
      },
    };
    return { token, upstream, call, loaders: createLoaders(upstream, call, concurrency), state };
  };
}
