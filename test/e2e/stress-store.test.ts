import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { TAXPAYERS } from '../../src/sandbox/data.js';
import {
  postOnce,
  spawnGateway,
  startRedis,
  unknownRucs,
  untilReady,
  type OnceAnswer,
  type RedisServer,
  type SpawnedGateway,
} from '../helpers.js';

/**
 * A lookup is paid for once per process at most, whatever the shared store does: two
 * instances started as `npm start` starts them, over a real
 * redis-server that stalls, and under bursts of a thousand identical lookups.
 */
const QUERY = 'query($r: String!) { contribuyente(ruc: $r) { ruc } }';
const processes = 2;

let redis: RedisServer;
let sandbox: Sandbox;
let inspect: Redis;
let instances: SpawnedGateway[] = [];

/** `n` identical lookups of `ruc`, each on a connection of its own, spread over the instances. */
function burst(n: number, ruc: string): Promise<OnceAnswer[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => postOnce(instances[i % instances.length]!.url, QUERY, { r: ruc })));
}

const metricsOf = async (gateway: SpawnedGateway) => (await fetch(gateway.url.replace(/\/graphql$/, '/metrics'))).text();

beforeAll(async () => {
  redis = await startRedis();
  // Slow enough that a burst arrives while its first call is in flight.
  sandbox = await startSandbox({ latencyMs: 300 });
  const env = { UPSTREAM_URL: sandbox.url, REDIS_URL: redis.url, CACHE_KEY_SECRET: 'a-secret-shared-by-every-instance' };
  instances = await Promise.all([spawnGateway(env), spawnGateway(env)]);
  await untilReady(instances.map((g) => g.url));
  inspect = new Redis(redis.url);
  // Redis is stopped on purpose in some tests: its errors are expected, not unhandled.
  inspect.on('error', () => undefined);
});

afterAll(async () => {
  inspect?.disconnect();
  await Promise.all(instances.map((g) => g.stop()));
  await sandbox?.close();
  await redis?.stop();
});

describe('instances that stall themselves (a long GC, a busy host): their pause is not taken for the store’s', () => {
  it('make one call for 100 identical lookups while every instance is paused for 700 ms, past the commands’ 500 ms', async () => {
    const ruc = TAXPAYERS[12]!.ruc;
    sandbox.reset();
    const answers = burst(100, ruc);
    // Paused once the lookups are sent: Redis answers their claims while no instance can read the answers.
    await vi.waitFor(() => expect(sandbox.callsTo('/ruc').length).toBeGreaterThan(0), { timeout: 10_000, interval: 5 });
    for (const g of instances) process.kill(g.child.pid!, 'SIGSTOP');
    await new Promise((r) => setTimeout(r, 700));
    for (const g of instances) process.kill(g.child.pid!, 'SIGCONT');
    for (const a of await answers) expect(a.body.data).toEqual({ contribuyente: { ruc } });
    expect(sandbox.callsTo('/ruc')).toHaveLength(1);
    const metrics = (await Promise.all(instances.map(metricsOf))).join('\n');
    expect(metrics).not.toMatch(/gateway_cache_store_errors_total\{[^}]*\} [1-9]/);
  }, 60_000);
});

describe('a shared store that stalls, or bursts on a busy host: at most one call per key per process', () => {
  it('makes at most one call per process for 200 identical lookups while Redis is paused for 2 s', async () => {
    const ruc = TAXPAYERS[0]!.ruc;
    sandbox.reset();
    await inspect.call('CLIENT', 'PAUSE', '2000', 'ALL');
    const answers = await burst(200, ruc);
    for (const a of answers) expect(a.body.data).toEqual({ contribuyente: { ruc } });
    expect(sandbox.callsTo('/ruc').length).toBeGreaterThanOrEqual(1);
    expect(sandbox.callsTo('/ruc').length).toBeLessThanOrEqual(processes);
    // Counted and said: the stall is seen in the metrics and the log.
    const metrics = (await Promise.all(instances.map(metricsOf))).join('\n');
    expect(metrics).toMatch(/gateway_cache_store_errors_total\{[^}]*\} [1-9]/);
    expect(instances.map((g) => g.output()).join('')).toMatch(
      /cache store (timeout|error|full): lookups are shared within this process only/,
    );
  }, 60_000);

  it('makes at most one call per process for each of ten bursts of 1,000 identical lookups', async () => {
    for (const { ruc } of TAXPAYERS.slice(1, 11)) {
      sandbox.reset();
      const answers = await burst(1000, ruc);
      expect(answers.filter((a) => a.status !== 200 || a.body.errors)).toEqual([]);
      expect(sandbox.callsTo('/ruc').length, `calls for ${ruc}`).toBeLessThanOrEqual(processes);
    }
  }, 120_000);
});

describe('a shared store that is gone or full: each process pays once per key, as on its own memory', () => {
  it('with Redis gone, a burst of 1,000 costs at most one call per process, and what follows costs none', async () => {
    await redis.stop();
    const ruc = TAXPAYERS[11]!.ruc;
    sandbox.reset();
    const answers = await burst(1000, ruc);
    expect(answers.filter((a) => a.status !== 200 || a.body.errors)).toEqual([]);
    const calls = sandbox.callsTo('/ruc').length;
    expect(calls).toBeLessThanOrEqual(processes);
    for (let i = 0; i < 16; i++) expect((await postOnce(instances[i % 2]!.url, QUERY, { r: ruc })).body.errors).toBeUndefined();
    expect(sandbox.callsTo('/ruc')).toHaveLength(calls);
  }, 60_000);

  it('with Redis full (maxmemory, noeviction), 30 RUCs asked three times cost 30 calls in one process', async () => {
    const full = await startRedis(['--maxmemory', '4mb', '--maxmemory-policy', 'noeviction']);
    const filler = new Redis(full.url);
    filler.on('error', () => undefined);
    // Filled by other keys until it refuses writes.
    for (let i = 0; ; i++) {
      const refused = await filler.set(`other:${i}`, 'x'.repeat(64 * 1024)).then(
        () => false,
        () => true,
      );
      if (refused) break;
    }
    const one = await spawnGateway({
      UPSTREAM_URL: sandbox.url,
      REDIS_URL: full.url,
      CACHE_KEY_SECRET: 'a-secret-shared-by-every-instance',
    });
    try {
      await untilReady([one.url]);
      sandbox.reset();
      const rucs = unknownRucs(30);
      for (let round = 0; round < 3; round++) {
        const answers = await Promise.all(rucs.map((r) => postOnce(one.url, QUERY, { r })));
        for (const a of answers) expect(a.body.errors?.[0]?.extensions?.['code']).toBe('DOCUMENT_NOT_FOUND');
      }
      expect(sandbox.callsTo('/ruc')).toHaveLength(30);
      expect(await metricsOf(one)).toMatch(/gateway_cache_store_errors_total\{[^}]*kind="full"[^}]*\} [1-9]/);
    } finally {
      filler.disconnect();
      await one.stop();
      await full.stop();
    }
  }, 60_000);
});
