import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { post, postOnce, spawnGateway, startRedis, unknownRucs, type RedisServer, type SpawnedGateway } from '../helpers.js';

/**
 * Persisted-query registrations, which anyone may send without a token, cannot crowd the
 * lookup cache out of a Redis that refuses writes when full (maxmemory with noeviction, the
 * default policy): the gateway bounds what it registers there.
 */
const MAXMEMORY = 32 * 1024 * 1024;

let redis: RedisServer;
let sandbox: Sandbox;
let gateway: SpawnedGateway;
let inspect: Redis;

/** A registration of a 250 KB document (a valid query behind a long comment), with no token. */
async function register(i: number): Promise<number> {
  const query = `# ${String(i).padStart(6, '0')} ${'x'.repeat(250_000)}\n{ __typename }`;
  const sha256Hash = createHash('sha256').update(query).digest('hex');
  const res = await post(gateway.url, { query, extensions: { persistedQuery: { version: 1, sha256Hash } } }, { token: null });
  await res.arrayBuffer();
  return res.status;
}

beforeAll(async () => {
  redis = await startRedis(['--maxmemory', String(MAXMEMORY), '--maxmemory-policy', 'noeviction']);
  sandbox = await startSandbox();
  gateway = await spawnGateway({ UPSTREAM_URL: sandbox.url, REDIS_URL: redis.url, CACHE_KEY_SECRET: 'a-secret-shared-by-every-instance' });
  inspect = new Redis(redis.url);
  // Redis is stopped on purpose in some tests: its errors are expected, not unhandled.
  inspect.on('error', () => undefined);
});

afterAll(async () => {
  inspect?.disconnect();
  await gateway?.stop();
  await sandbox?.close();
  await redis?.stop();
});

describe('a flood of persisted-query registrations against a Redis with maxmemory and noeviction', () => {
  it('leaves the lookup cache working: 30 RUCs asked twice cost 30 calls and give 30 cache hits', async () => {
    // 400 registrations of 250 KB, 16 at a time: 100 MB offered to a 32 MB Redis.
    let next = 0;
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < 400) statuses.push(await register(next++));
      }),
    );
    expect(statuses.every((s) => s === 200)).toBe(true);
    const used = Number(/used_memory:(\d+)/.exec(await inspect.info('memory'))![1]);
    expect(used).toBeLessThan(MAXMEMORY / 2);

    const rucs = unknownRucs(30);
    const query = 'query($r: String!) { contribuyente(ruc: $r) { ruc } }';
    const cost = (a: Awaited<ReturnType<typeof postOnce>>) => a.body.extensions?.cost ?? {};
    const first = await Promise.all(rucs.map((r) => postOnce(gateway.url, query, { r })));
    const second = await Promise.all(rucs.map((r) => postOnce(gateway.url, query, { r })));
    for (const a of [...first, ...second]) expect(a.body.errors?.[0]?.extensions?.['code']).toBe('DOCUMENT_NOT_FOUND');
    expect(sandbox.callsTo('/ruc')).toHaveLength(30);
    expect(second.reduce((sum, a) => sum + (cost(a)['cacheHits'] ?? 0), 0)).toBe(30);
  }, 120_000);
});
