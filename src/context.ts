import type { YogaInitialContext } from 'graphql-yoga';
import { createLoaders, type Loaders } from './loaders.js';
import type { UpstreamClient } from './upstream/client.js';

export interface Context {
  /** The caller's bearer token, exactly as sent; undefined when the request has none. */
  readonly token: string | undefined;
  readonly upstream: UpstreamClient;
  readonly loaders: Loaders;
}

/** The token of an `Authorization: Bearer <token>` header; any other scheme or a blank token is no token. */
export function bearerToken(header: string | null): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer[ \t]+(\S.*)$/i.exec(header.trim());
  return match?.[1]?.trim() || undefined;
}

export function createContextFactory(upstream: UpstreamClient, concurrency: number) {
  return ({ request }: YogaInitialContext): Context => {
    const token = bearerToken(request.headers.get('authorization'));
    return { token, upstream, loaders: createLoaders(upstream, token, concurrency) };
  };
}
