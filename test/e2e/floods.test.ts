import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRIGGERS } from '../../src/sandbox/data.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { postBodyOnce, spawnGateway, unknownRucs, type SpawnedGateway } from '../helpers.js';

const LOOKUP = 'query($r: String!) { contribuyente(ruc: $r) { ruc } }';
const lookup = (url: string, ruc: string, token: string, headers: Record<string, string> = {}) =>
  postBodyOnce(url, { query: LOOKUP, variables: { r: ruc } }, { token, headers });

/** One caller holding hundreds of requests cannot keep another caller out. */
describe('npm start with MAX_CONCURRENT_REQUESTS=100: one token floods, another is still served', () => {
  let sandbox: Sandbox;
  let gateway: SpawnedGateway | undefined;
  beforeAll(async () => {
    sandbox = await startSandbox({ slowMs: 3000 });
    gateway = await spawnGateway({ UPSTREAM_URL: sandbox.url, MAX_CONCURRENT_REQUESTS: '100' });
  });
  afterAll(async () => {
    await gateway?.stop();
    await sandbox?.close();
  });

  it('450 no-cache lookups of a 3 s RUC by one token (4.5 times MAX_CONCURRENT_REQUESTS) leave room for another token’s 20 lookups', async () => {
    const url = gateway!.url;
    // The other token's record is in the cache already.
    expect((await lookup(url, '20100123453', 'sandbox-free')).body.errors).toBeUndefined();
    const flood = Promise.all(
      Array.from({ length: 450 }, () => lookup(url, TRIGGERS.slow.ruc, 'sandbox-pro', { 'cache-control': 'no-cache' })),
    );
    await new Promise((r) => setTimeout(r, 500));
    const others = await Promise.all(Array.from({ length: 20 }, () => lookup(url, '20100123453', 'sandbox-free')));
    expect(others.map((a) => a.body.errors?.[0]?.extensions?.['code'] ?? a.status)).toEqual(Array(20).fill(200));
    const flooded = await flood;
    // The flood itself shares one call (its no-cache refreshes join the one in flight).
    expect(flooded.filter((a) => a.status === 200).length).toBeGreaterThan(0);
    expect(sandbox.callsTo('/ruc').filter((c) => (c.body as { ruc: string }).ruc === TRIGGERS.slow.ruc).length).toBe(1);
  });
});

/** A token the upstream rejects is not amplified into a flood of calls from the gateway's address. */
describe('npm start: a rejected token', () => {
  let sandbox: Sandbox;
  let gateway: SpawnedGateway | undefined;
  beforeAll(async () => {
    sandbox = await startSandbox();
    gateway = await spawnGateway({ UPSTREAM_URL: sandbox.url });
  });
  afterAll(async () => {
    await gateway?.stop();
    await sandbox?.close();
  });

  const rucs = unknownRucs(100, 71_000_000);
  const many = (token: string) =>
    postBodyOnce(gateway!.url, { query: 'query($r: [String!]!) { contribuyentes(rucs: $r) { ruc } }', variables: { r: rucs } }, { token });

  it('100 RUCs make at most UPSTREAM_CONCURRENCY calls, every field UNAUTHENTICATED; the next request at most one', async () => {
    const first = await many('made-up-token-1');
    expect(first.body.errors).toHaveLength(100);
    expect(new Set(first.body.errors!.map((e) => e.extensions?.['code']))).toEqual(new Set(['UNAUTHENTICATED']));
    expect(first.body.extensions?.cost?.['queries']).toBe(0);
    expect(sandbox.callsTo('/ruc').length).toBeLessThanOrEqual(8);
    const before = sandbox.callsTo('/ruc').length;
    // A new connection each.
    const again = await Promise.all([many('made-up-token-1'), many('made-up-token-1')]);
    for (const a of again) expect(a.body.errors?.every((e) => e.extensions?.['code'] === 'UNAUTHENTICATED')).toBe(true);
    expect(sandbox.callsTo('/ruc').length - before).toBeLessThanOrEqual(1);
    // Another token is not affected.
    const accepted = await postBodyOnce(gateway!.url, { query: '{ contribuyente(ruc: "20100123453") { ruc } }' });
    expect(accepted.body.errors).toBeUndefined();
  });

  it('_entities with 100 representations is bounded the same way', async () => {
    sandbox.reset();
    const representations = unknownRucs(100, 72_000_000).map((ruc) => ({ __typename: 'Contribuyente', ruc }));
    const query = 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Contribuyente { ruc } } }';
    const answer = await postBodyOnce(gateway!.url, { query, variables: { r: representations } }, { token: 'made-up-token-2' });
    expect(answer.body.errors?.every((e) => e.extensions?.['code'] === 'UNAUTHENTICATED')).toBe(true);
    expect(sandbox.callsTo('/ruc').length).toBeLessThanOrEqual(8);
  });

  it('a 403 that refuses licences to the plan stops the request’s other licence calls, not its other lookups', async () => {
    sandbox.reset();
    const aliases = Array.from({ length: 12 }, (_, i) => `l${i}: licencia(numLicencia: "Q${46779354 + i}") { nombres }`).join(' ');
    const answer = await postBodyOnce(
      gateway!.url,
      { query: `{ ${aliases} c: contribuyente(ruc: "20100123453") { ruc } }` },
      {
        token: 'sandbox-free',
      },
    );
    expect(answer.body.data?.['c']).toEqual({ ruc: '20100123453' });
    expect(answer.body.errors?.map((e) => e.extensions?.['code'])).toEqual(Array(12).fill('FORBIDDEN'));
    expect(sandbox.callsTo('/licencia-conducir').length).toBeLessThanOrEqual(8);
  });
});
