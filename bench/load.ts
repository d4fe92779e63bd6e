/**
 * The loads a bench run puts on a system, and what each measurement says: good answers per
 * second (a 200 whose body carries an error is not throughput), latencies, the system's CPU time
 * per good answer, and upstream calls per operation counted by the sandbox.
 */
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { cpuMicros, type Proc } from './procs.js';

/** One token per caller, as many callers as the sandbox knows (bench/sandbox.ts): a load is many users, not one. */
export const TOKENS = Array.from({ length: 16 }, (_, i) => `bench-${i}`);

export interface Load {
  body: string;
  connections: number;
  /** Fixed request rate (requests per second over all connections), instead of as fast as possible. */
  rate?: number;
  /** @default '/graphql' */
  path?: string;
  seconds?: number;
  /** How many distinct tokens the connections use (a BFF sends every end user's lookups under one). @default 16 */
  tokens?: number;
  /** The bearer tokens themselves, instead of the sandbox's plan tokens (sign-in mode: one JWT per user). */
  bearer?: readonly string[];
}

export interface Sample {
  /** Good answers per second. */
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  /** Requests without a good answer: refused, failed, timed out, or a body with an error. */
  failed: number;
  upstreamPerOp: number;
  /** The system's own CPU time per good answer, in µs. */
  cpuUs: number;
}

/** A good answer: data and no error (every system here answers `{"data":…}`, errors first when there are any). */
const good = (body: string | Buffer | undefined): boolean => {
  const text = String(body ?? '');
  return text.startsWith('{"data":') && !text.includes('"errors"');
};

async function upstreamCalls(sandbox: Proc): Promise<number> {
  return ((await (await fetch(`${sandbox.url}/__sandbox/stats`)).json()) as { calls: number }).calls;
}

/**
 * Upstream calls per operation, exactly: 20 operations one after another, the sandbox's count
 * before and after. (Under load, calls still in flight when the clock stops blur the ratio.)
 */
export async function callsPerOperation(target: Proc, sandbox: Proc, body: string, path = '/graphql', token = TOKENS[0]): Promise<number> {
  const n = 20;
  // Let the calls of the load before this one finish first: no new call for a whole second (a
  // process at full CPU may still be working through requests its clients have left).
  let before = await upstreamCalls(sandbox);
  for (let quiet = 0; quiet < 4;) {
    await new Promise((r) => setTimeout(r, 300));
    const now = await upstreamCalls(sandbox);
    quiet = now === before ? quiet + 1 : 0;
    before = now;
  }
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${target.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body,
    });
    await res.arrayBuffer();
  }
  return ((await upstreamCalls(sandbox)) - before) / n;
}

export async function load(target: Proc, sandbox: Proc, l: Load, seconds: number): Promise<Sample> {
  if (l.rate) return openLoop(target, sandbox, l, l.rate, seconds);
  const before = await upstreamCalls(sandbox);
  const cpuBefore = cpuMicros(target.pid);
  const tokens = l.bearer ?? TOKENS.slice(0, l.tokens ?? TOKENS.length);
  let client = 0;
  const result = await autocannon({
    url: `${target.url}${l.path ?? '/graphql'}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[0]}` },
    body: l.body,
    connections: l.connections,
    duration: seconds,
    // Each connection a caller of its own, among the tokens.
    setupClient: (c) => c.setHeaders({ 'content-type': 'application/json', authorization: `Bearer ${tokens[client++ % tokens.length]}` }),
    verifyBody: good,
  });
  const cpu = cpuMicros(target.pid) - cpuBefore;
  const after = await upstreamCalls(sandbox);
  const answered = result.requests.total;
  const goodAnswers = Math.max(0, answered - result.mismatches);
  return {
    rps: goodAnswers / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: answered,
    failed: result.errors + result.timeouts + result.mismatches,
    upstreamPerOp: answered ? (after - before) / answered : 0,
    cpuUs: goodAnswers ? cpu / goodAnswers : 0,
  };
}

/**
 * A fixed rate, for latency: request i leaves at start + i / rate whatever came back before
 * (an open loop, so a slow answer cannot hold the next one back), over an undici pool of
 * `connections`; each latency is from sending to the last byte of the answer.
 *
 * Written here rather than with autocannon's `overallRate`: autocannon lets each connection
 * send its per-second quota back to back at the start of every second, all connections in
 * step, so "300 req/s" arrived as bursts of about 2,000 req/s that saturated the system
 * under test; and it "corrects" each latency for coordinated omission with an expected
 * interval of 1 ms, adding synthetic samples of 1, 2, ... ms below every real one (its p50
 * came out under the sandbox's own 20 ms delay).
 */
async function openLoop(target: Proc, sandbox: Proc, l: Load, rate: number, seconds: number): Promise<Sample> {
  const pool = new Pool(target.url, { connections: l.connections, pipelining: 1 });
  const total = Math.round(rate * seconds);
  const latencies: number[] = [];
  let failed = 0;
  const before = await upstreamCalls(sandbox);
  const cpuBefore = cpuMicros(target.pid);
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const wait = started + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const sent = performance.now();
    inFlight.push(
      pool
        .request({
          method: 'POST',
          path: l.path ?? '/graphql',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS[i % TOKENS.length]}` },
          body: l.body,
        })
        .then(async (res) => {
          const body = await res.body.text();
          if (res.statusCode !== 200 || !good(body)) failed++;
          else latencies.push(performance.now() - sent);
        })
        .catch(() => void failed++),
    );
  }
  await Promise.all(inFlight);
  const elapsed = (performance.now() - started) / 1000;
  const cpu = cpuMicros(target.pid) - cpuBefore;
  await pool.close();
  const after = await upstreamCalls(sandbox);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round((latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))] ?? 0) * 10) / 10;
  return {
    rps: latencies.length / elapsed,
    p50: at(0.5),
    p99: at(0.99),
    requests: total,
    failed,
    upstreamPerOp: total ? (after - before) / total : 0,
    cpuUs: latencies.length ? cpu / latencies.length : 0,
  };
}
