import type { CORSOptions } from '@whatwg-node/server';
import type { Plugin } from 'graphql-yoga';
import type { Config } from '../config.js';
import { CSRF_HEADER } from '../pipeline/limits.js';

/** What a browser app reads of a refusal: its request id, when to retry, and that its sign-in token was refused. */
export const EXPOSED_HEADERS = ['x-request-id', 'retry-after', 'www-authenticate'];

/** Who may call from a browser, and with what: CORS_ORIGINS, our headers, nothing in cookies. */
export function corsOptions(config: Pick<Config, 'corsOrigins'>): CORSOptions {
  return {
    origin: config.corsOrigins === '*' ? '*' : [...config.corsOrigins],
    methods: ['GET', 'POST', 'OPTIONS'],
    allowedHeaders: ['authorization', 'content-type', 'cache-control', 'x-request-id', CSRF_HEADER],
    exposedHeaders: EXPOSED_HEADERS,
    // The token travels in a header, never a cookie, so no credentials mode is needed.
    credentials: false,
    maxAge: 600,
  };
}

/**
 * Yoga answers a preflight from an origin not in CORS_ORIGINS with
 * `Access-Control-Allow-Origin: null`, which sandboxed iframes and file:// pages
 * (whose origin is "null") would match. No header at all is the refusal.
 */
export function useNoNullOrigin(): Plugin {
  return {
    onResponse({ response }) {
      if (response.headers.get('access-control-allow-origin') === 'null') response.headers.delete('access-control-allow-origin');
    },
  };
}
