import type { YogaInitialContext } from 'graphql-yoga';
import type { Logger } from 'pino';
import { createLoaders, type Loaders } from './loaders.js';
import type { RequestState } from './request-state.js';
import { requestState } from './request-state.js';
import type { LookupContext, Lookups } from './lookups.js';
import type { UpstreamClient } from './upstream/client.js';

export interface Context {
  /** The caller's bearer token, exactly as sent; undefined when the request has none. */
  readonly token: string | undefined;
  readonly upstream: UpstreamClient;
  /** Token, cache key and this request's observers, handed to every upstream call. */
  readonly call: LookupContext;
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

export function createContextFactory(upstream: UpstreamClient, lookups: Lookups, concurrency: number, logger: Logger) {
  return ({ request }: YogaInitialContext): Context => {
    const token = bearerToken(request.headers.get('authorization'));
    const state = requestState(request);
    const call: LookupContext = {
      token,
      tokenKey: lookups.tokenKey(token),
      noCache: wantsNoCache(request.headers),
      onShared: () => state.cacheHits++,
      observe: (info) => {
        state.upstreamCalls.push(info);
        logger.debug({ reqId: state.id, upstream: info }, 'upstream call');
      },
    };
    return { token, upstream, call, loaders: createLoaders(lookups, call, concurrency), state };
  };
}

/** `Cache-Control: no-cache` (or the older `Pragma: no-cache`): read nothing cached, refresh it. */
function wantsNoCache(headers: Headers): boolean {
  const cacheControl = headers.get('cache-control')?.toLowerCase() ?? '';
  return /(^|,)\s*no-cache\s*(,|$)/.test(cacheControl) || headers.get('pragma')?.toLowerCase() === 'no-cache';
}
