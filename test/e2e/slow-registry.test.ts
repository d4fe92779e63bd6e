import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { postOnce, spawnGateway, startRedis, type RedisServer, type SpawnedGateway } from '../helpers.js';

/**
 * A registry that takes seconds to answer (public clients of the service wait 5 to 12 s) is still
 * paid once by a fleet: identical lookups split over two instances sharing a real redis-server
 * wait for the one call in flight, however long it lasts, and get its answer as it comes.
 */
describe('two instances (npm start) over one redis-server: a registry answering in seconds', () => {
  let sandbox: Sandbox;
  let redis: RedisServer;
  let gateways: SpawnedGateway[] = [];
  beforeAll(async () => {
    sandbox = await startSandbox();
    redis = await startRedis();
    // A time-out of 6 s instead of 10, so that its edge comes sooner.
    const env = {
      UPSTREAM_URL: sandbox.url,
      REDIS_URL: redis.url,
      CACHE_KEY_SECRET: 'a-secret-shared-by-the-fleet',
      UPSTREAM_TIMEOUT_MS: '6000',
    };
    gateways = await Promise.all([spawnGateway(env), spawnGateway(env)]);
    // Both connected to Redis before the first lookup.
    for (const g of gateways) {
      for (let i = 0; i < 100 && (await fetch(g.url.replace(/graphql$/, 'ready'))).status !== 200; i++)
        await new Promise((r) => setTimeout(r, 100));
    }
  });
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    await sandbox?.close();
    await redis?.stop();
  });

  /** `n` identical lookups of `ruc`, alternating between the instances, each on a connection of its own; the slowest answer's time. */
  async function identical(ruc: string, n: number) {
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        postOnce(gateways[i % 2]!.url, 'query($r: String!) { contribuyente(ruc: $r) { ruc } }', { r: ruc }).then((a) => ({
          ...a,
          ms: performance.now() - started,
        })),
      ),
    );
    return { answers, slowestMs: Math.max(...answers.map((a) => a.ms)) };
  }

  it('200 identical lookups split over both against a 4.5 s registry make one call, and all answer within a second and a half of it', async () => {
    sandbox.setFaults({ latencyMs: 4500 });
    const { answers, slowestMs } = await identical('20100123453', 200);
    sandbox.setFaults({});
    expect(answers.filter((a) => a.body.errors).map((a) => a.body.errors)).toEqual([]);
    expect(sandbox.callsTo('/ruc')).toHaveLength(1);
    expect(answers.reduce((sum, a) => sum + (a.body.extensions?.cost?.['queries'] ?? 0), 0)).toBe(1);
    expect(slowestMs).toBeLessThan(4500 + 1500);
  });

  it('the same at the time-out’s edge: a call answered just before UPSTREAM_TIMEOUT_MS (6 s here) is still the only one', async () => {
    sandbox.reset();
    sandbox.setFaults({ latencyMs: 5500 });
    const { answers, slowestMs } = await identical('20501234568', 100);
    sandbox.setFaults({});
    expect(answers.filter((a) => a.body.errors).map((a) => a.body.errors)).toEqual([]);
    expect(sandbox.callsTo('/ruc')).toHaveLength(1);
    expect(slowestMs).toBeLessThan(5500 + 1500);
  });
});
