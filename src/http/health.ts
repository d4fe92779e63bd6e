import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { LookupStore } from '../data/cache.js';
import { worded } from '../errors.js';
import { GRAPHQL_PATH } from '../config.js';
import { refuse } from './refuse.js';
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
  /** What `/health` says beside the process (SUNAT's register's state). */
  health?: () => Record<string, unknown>;
}

/** How long one reachability probe of an origin is reused: a load balancer may ask every second. */
const PROBE_TTL_MS = 2000;
const PROBE_TIMEOUT_MS = 1000;

/**
 * This process's readiness: an upstream origin is reachable (a TCP connect, which costs no plan
 * query) and not behind an open breaker, the shared store answers when one is configured, and in
 * sign-in mode the identity provider's keys have been fetched and the budgets' shared count is
 * connected (at start, a request sent before it is would be counted in this process alone).
 */
export function readinessOf(
  upstream: UpstreamClient,
  store: LookupStore | undefined,
  signInKeys: { readonly ready: boolean } | undefined,
  budgets?: { healthy?(): boolean },
): () => Promise<Readiness> {
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
    const budgetsConnected = budgets?.healthy?.();
    const signIn = signInKeys && { keysFetched: signInKeys.ready, ...(budgetsConnected === undefined ? {} : { budgetsConnected }) };
    return {
      ready: upstreamOk && cache.healthy && (signInKeys?.ready ?? true) && budgetsConnected !== false,
      detail: { upstream: origins, cache, ...(signIn ? { signIn } : {}) },
    };
  };
}

/** What `/ready` says once a stop has begun: at once, so that a load balancer stops sending while the work in flight finishes. */
export const STOPPING: Readiness = { ready: false, detail: { stopping: true } };

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

/** The one answer of each operations route, whichever server asked. */
async function answer(route: OpsRoute, ops: OpsAnswers): Promise<Answer> {
  switch (route) {
    case '/health':
      return json(200, { status: 'ok', pid: process.pid, uptimeSeconds: Math.round(process.uptime()), ...ops.health?.() });
    case '/ready': {
      const { ready, detail } = await ops.readiness();
      return json(ready ? 200 : 503, { status: ready ? 'ready' : 'not ready', ...detail });
    }
    case '/metrics':
      return { status: 200, contentType: ops.contentType, body: await ops.metricsText() };
  }
}

const json = (status: number, body: unknown): Answer => ({ status, contentType: 'application/json', body: JSON.stringify(body) });

/**
 * Answers an operations route straight from node:http, on whichever port serves it: before any
 * GraphQL work, never admitted nor refused, so it answers whatever the GraphQL load.
 */
export function serveOps(req: IncomingMessage, res: ServerResponse, ops: OpsAnswers): void {
  const path = (req.url ?? '/').split('?')[0] as OpsRoute;
  if ((req.method !== 'GET' && req.method !== 'HEAD') || !OPS_ROUTES.includes(path))
    return refuse(res, worded('routeNotFound', { path: GRAPHQL_PATH }));
  answer(path, ops).then(
    ({ status, contentType, body }) => {
      res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
      res.end(req.method === 'HEAD' ? undefined : body);
    },
    () => refuse(res, worded('internal')),
  );
}

/**
 * The operations server, on a port of its own (OPS_PORT), as Apollo Router and Hive Gateway
 * keep theirs: scrapes and probes never share the GraphQL port's sockets or admission.
 */
export function createOpsServer(ops: OpsAnswers): Server {
  return createServer((req, res) => serveOps(req, res, ops));
}

/**
 * One answer for every caller that asks while it is being made, and for `reuseMs` after: a flood
 * of scrapes or probes costs one gathering at a time,
 * never one each. The operations port reuses a metrics text for a second, which no Prometheus
 * scrape interval sees.
 */
export function coalesced<T>(gather: () => Promise<T>, reuseMs = 0): () => Promise<T> {
  let last: { at: number; answer: Promise<T>; done: boolean } | undefined;
  return () => {
    if (last && (!last.done || performance.now() - last.at < reuseMs)) return last.answer;
    const made = { at: performance.now(), answer: gather(), done: false };
    last = made;
    made.answer.then(
      () => {
        made.done = true;
        made.at = performance.now();
      },
      // A failed gathering is not reused.
      () => {
        if (last === made) last = undefined;
      },
    );
    return made.answer;
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
