import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRIGGERS } from '../../src/sandbox/data.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { postBodyOnce, spawnGateway, type SpawnedGateway } from '../helpers.js';

const LOOKUP = 'query($r: String!) { contribuyente(ruc: $r) { ruc } }';
const lookup = (url: string, ruc: string, token: string, headers: Record<string, string> = {}) =>
  postBodyOnce(url, { query: LOOKUP, variables: { r: ruc } }, { token, headers });

/** One caller holding hundreds of requests cannot keep another caller out. */
describe('WORKERS=2, MAX_CONCURRENT_REQUESTS=100: one token floods, another is still served', () => {
  let sandbox: Sandbox;
  let gateway: SpawnedGateway | undefined;
  beforeAll(async () => {
    sandbox = await startSandbox({ slowMs: 3000 });
    gateway = await spawnGateway({ UPSTREAM_URL: sandbox.url, WORKERS: '2', MAX_CONCURRENT_REQUESTS: '100' }, 2);
  });
  afterAll(async () => {
    await gateway?.stop();
    await sandbox?.close();
  });

  it('500 no-cache lookups of a 3 s RUC by one token leave room for another token’s 20 lookups', async () => {
    const url = gateway!.url;
    // The other token's record is in the cache already, on every worker (the primary keeps it).
    expect((await lookup(url, '20100123453', 'sandbox-free')).body.errors).toBeUndefined();
    const flood = Promise.all(
      Array.from({ length: 500 }, () => lookup(url, TRIGGERS.slow.ruc, 'sandbox-pro', { 'cache-control': 'no-cache' })),
    );
    await new Promise((r) => setTimeout(r, 500));
    const others = await Promise.all(Array.from({ length: 20 }, () => lookup(url, '20100123453', 'sandbox-free')));
    expect(others.map((a) => a.body.errors?.[0]?.extensions?.['code'] ?? a.status)).toEqual(Array(20).fill(200));
    const flooded = await flood;
    // The flood itself is shared, one call per worker at most (no-cache refreshes on each worker's own).
    expect(flooded.filter((a) => a.status === 200).length).toBeGreaterThan(0);
    expect(sandbox.callsTo('/ruc').filter((c) => (c.body as { ruc: string }).ruc === TRIGGERS.slow.ruc).length).toBeLessThanOrEqual(2);
  });
});
