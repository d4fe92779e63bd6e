import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { TAXPAYERS } from '../../src/sandbox/data.js';
import { postOnce, spawnGateway, startRedis, type RedisServer, type SpawnedGateway } from '../helpers.js';

/**
 * Ready means ready: two instances (`npm start`) started over a Redis that
 * is not up yet say 503 on /ready, and still share a lookup within each process; once Redis is
 * up, they say 200 and share it across instances.
 */
const QUERY = 'query($r: String!) { contribuyente(ruc: $r) { ruc } }';
const processes = 2;

let redis: RedisServer;
let sandbox: Sandbox;
let instances: SpawnedGateway[] = [];
const readyStatus = (g: SpawnedGateway) =>
  fetch(g.url.replace(/\/graphql$/, '/ready')).then(
    (r) => r.status,
    () => 0,
  );

beforeAll(async () => {
  redis = await startRedis();
  await redis.stop();
  sandbox = await startSandbox({ latencyMs: 300 });
  const env = { UPSTREAM_URL: sandbox.url, REDIS_URL: redis.url, CACHE_KEY_SECRET: 'a-secret-shared-by-every-instance' };
  instances = await Promise.all([spawnGateway(env), spawnGateway(env)]);
});

afterAll(async () => {
  await Promise.all(instances.map((g) => g.stop()));
  await sandbox?.close();
  await redis?.stop();
});

describe('instances started before their Redis', () => {
  it('say 503 on /ready, and make at most one call per process for 11 identical lookups sent at once', async () => {
    for (const g of instances) expect(await readyStatus(g)).toBe(503);
    const ruc = TAXPAYERS[1]!.ruc;
    const answers = await Promise.all(Array.from({ length: 11 }, (_, i) => postOnce(instances[i % 2]!.url, QUERY, { r: ruc })));
    for (const a of answers) expect(a.body.data).toEqual({ contribuyente: { ruc } });
    expect(sandbox.callsTo('/ruc').length).toBeGreaterThanOrEqual(1);
    expect(sandbox.callsTo('/ruc').length).toBeLessThanOrEqual(processes);
  }, 60_000);

  it('say 200 once Redis is up, and then share a lookup across instances: one call for 11', async () => {
    await redis.start();
    const deadline = Date.now() + 20_000;
    for (const g of instances) while ((await readyStatus(g)) !== 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    for (const g of instances) expect(await readyStatus(g)).toBe(200);
    // Wait until every instance says its store is up.
    while (instances.some((g) => !g.output().includes('cache store up')) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    // Shared across instances again: one call for 11 identical lookups. A command that times out on
    // a busy machine costs its process one call, by design: then a fresh RUC is tried, at most thrice.
    let calls = 0;
    for (const { ruc } of TAXPAYERS.slice(2, 5)) {
      sandbox.reset();
      const answers = await Promise.all(Array.from({ length: 11 }, (_, i) => postOnce(instances[i % 2]!.url, QUERY, { r: ruc })));
      for (const a of answers) expect(a.body.data).toEqual({ contribuyente: { ruc } });
      calls = sandbox.callsTo('/ruc').length;
      if (calls === 1) break;
    }
    expect(calls).toBe(1);
  }, 60_000);
});
