import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import type { Plugin } from 'graphql-yoga';
import type { LookupStore } from '../data/store.js';
import { NOT_FOUND_MESSAGE, errorBody } from '../errors.js';
import type { UpstreamClient } from '../upstream/client.js';

/** What `/ready` says: whether to send this process traffic, and why. */
export interface Readiness {
  ready: boolean;
  detail: Record<string, unknown>;
}

/** The operations routes: `/health` (the process is up), `/ready` (send it traffic), `/metrics` (Prometheus). */
export const OPS_ROUTES = ['/health', '/ready', '/metrics'] as const;
export type OpsRoute = (typeof OPS_ROUTES)[number];

export interface OpsAnswers {
  readiness: () => Promise<Readiness>;
  metricsText: () => Promise<string>;
  contentType: string;
}

/** How long one reachability probe of an origin is reused: a load balancer may ask every second. */
const PROBE_TTL_MS = 2000;
const PROBE_TIMEOUT_MS = 1000;

/**
 * This process's readiness: an upstream origin is reachable (a TCP connect, which costs no plan
 * query) and not behind an open breaker, and the shared store answers when one is configured.
 */
export function readinessOf(upstream: UpstreamClient, store: LookupStore | undefined): () => Promise<Readiness> {
  const probes = new Map<string, { at: number; result: Promise<boolean> }>();
  const reachable = (url: string): Promise<boolean> => {
    const cached = probes.get(url);
    if (cached && performance.now() - cached.at < PROBE_TTL_MS) return cached.result;
    const result = probe(url);
    probes.set(url, { at: performance.now(), result });
    return result;
  };
  return async () => {
    const origins = await Promise.all(upstream.breakers().map(async (b) => ({ ...b, reachable: await reachable(b.url) })));
    const upstreamOk = origins.some((o) => o.reachable && o.state !== 'open');
    const cache = store ? { kind: store.kind, healthy: store.healthy() } : { kind: 'off', healthy: true };
    return { ready: upstreamOk && cache.healthy, detail: { upstream: origins, cache } };
  };
}

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

/** The one answer of each operations route, whichever server asked. */
async function answer(route: OpsRoute, ops: OpsAnswers): Promise<Answer> {
  switch (route) {
    case '/health':
      return json(200, { status: 'ok', pid: process.pid, uptimeSeconds: Math.round(process.uptime()) });
    case '/ready': {
      const { ready, detail } = await ops.readiness();
      return json(ready ? 200 : 503, { status: ready ? 'ready' : 'not ready', ...detail });
    }
    case '/metrics':
      return { status: 200, contentType: ops.contentType, body: await ops.metricsText() };
  }
}

const json = (status: number, body: unknown): Answer => ({ status, contentType: 'application/json', body: JSON.stringify(body) });

/** Yoga plugin: `routes` answered on the public port, before any GraphQL work. */
export function useHealth(routes: ReadonlySet<OpsRoute>, ops: OpsAnswers): Plugin {
  return {
    async onRequest({ url, request, endResponse, fetchAPI }) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return;
      if (!routes.has(url.pathname as OpsRoute)) return;
      const { status, contentType, body } = await answer(url.pathname as OpsRoute, ops);
      endResponse(new fetchAPI.Response(body, { status, headers: { 'content-type': contentType, 'cache-control': 'no-store' } }));
    },
  };
}

/**
 * The operations server, on a port of its own (OPS_PORT), as Apollo Router and Hive Gateway
 * keep theirs: scrapes and probes never share the GraphQL port's sockets or admission.
 */
export function createOpsServer(ops: OpsAnswers): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] as OpsRoute;
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !OPS_ROUTES.includes(path)) {
      const body = errorBody('NOT_FOUND', NOT_FOUND_MESSAGE);
      res.writeHead(404, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      return void res.end(body);
    }
    answer(path, ops).then(
      ({ status, contentType, body }) => {
        res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      () => {
        const body = errorBody('INTERNAL_SERVER_ERROR', 'Error interno del gateway.');
        res.writeHead(500, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      },
    );
  });
}

/**
 * One text for every caller that asks while it is being made, and for `reuseMs` after: a flood
 * of scrapes costs one gathering (in a cluster, one round of every worker's) at a time, never one
 * each. The operations port reuses a text for a second, which no Prometheus scrape interval sees.
 */
export function sharedMetricsText(gather: () => Promise<string>, reuseMs = 0): () => Promise<string> {
  let last: { at: number; text: Promise<string>; done: boolean } | undefined;
  return () => {
    if (last && (!last.done || performance.now() - last.at < reuseMs)) return last.text;
    const made = { at: performance.now(), text: gather(), done: false };
    last = made;
    made.text.then(
      () => {
        made.done = true;
        made.at = performance.now();
      },
      // A failed gathering is not reused.
      () => {
        if (last === made) last = undefined;
      },
    );
    return made.text;
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
