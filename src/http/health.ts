import { connect } from 'node:net';
import type { Plugin } from 'graphql-yoga';
import type { LookupStore } from '../data/store.js';
import type { UpstreamClient } from '../upstream/client.js';

export interface HealthOptions {
  upstream: UpstreamClient;
  store: LookupStore | undefined;
  metricsText: () => Promise<string>;
  contentType: string;
}

/** How long one reachability probe of an origin is reused: a load balancer may ask every second. */
const PROBE_TTL_MS = 2000;
const PROBE_TIMEOUT_MS = 1000;

/**
 * `/health`: the process is up. `/ready`: an upstream origin is reachable (a TCP connect, which
 * costs no plan query) and not behind an open breaker, and the Redis cache answers when one
 * is configured. `/metrics`: Prometheus text. All answer before any GraphQL work.
 */
export function useHealth({ upstream, store, metricsText, contentType }: HealthOptions): Plugin {
  const probes = new Map<string, { at: number; result: Promise<boolean> }>();
  const reachable = (url: string): Promise<boolean> => {
    const cached = probes.get(url);
    if (cached && performance.now() - cached.at < PROBE_TTL_MS) return cached.result;
    const result = probe(url);
    probes.set(url, { at: performance.now(), result });
    return result;
  };

  return {
    async onRequest({ url, request, endResponse, fetchAPI }) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return;
      const json = (status: number, body: unknown) =>
        endResponse(
          new fetchAPI.Response(JSON.stringify(body), {
            status,
            headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
          }),
        );
      switch (url.pathname as (typeof ROUTES)[number]) {
        case '/health':
          return json(200, { status: 'ok', pid: process.pid, uptimeSeconds: Math.round(process.uptime()) });
        case '/ready': {
          const origins = await Promise.all(upstream.breakers().map(async (b) => ({ ...b, reachable: await reachable(b.url) })));
          const upstreamOk = origins.some((o) => o.reachable && o.state !== 'open');
          const cache = store ? { kind: store.kind, healthy: store.healthy() } : { kind: 'off', healthy: true };
          const ready = upstreamOk && cache.healthy;
          return json(ready ? 200 : 503, { status: ready ? 'ready' : 'not ready', upstream: origins, cache });
        }
        case '/metrics':
          return endResponse(new fetchAPI.Response(await metricsText(), { status: 200, headers: { 'content-type': contentType } }));
      }
    },
  };
}

function probe(url: string): Promise<boolean> {
  const { hostname, port, protocol } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || (protocol === 'https:' ? 443 : 80)) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

const ROUTES = ['/health', '/ready', '/metrics'] as const;
/** The paths this plugin answers (the HTTP server lets them through whatever the GraphQL load). */
export const SERVICE_ROUTES: ReadonlySet<string> = new Set(ROUTES);
