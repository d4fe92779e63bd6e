import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ContribuyenteDocument, LicenciaDocument, ValidarComprobantesDocument } from '../../operations/generated/graphql.js';
import { TRIGGERS } from '../../src/sandbox/data.js';
import { RECEIPT, startStack, type Stack } from '../helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cost = (body: { extensions?: Record<string, unknown> }) => body.extensions?.['cost'] as Record<string, number>;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({
    env: { CACHE: 'on', UPSTREAM_RETRIES: '0', BREAKER_MIN_CALLS: '1000000', CACHE_TTL_RUC_MS: '600', CACHE_TTL_NOT_FOUND_MS: '300' },
  });
});
afterAll(() => stack.close());
afterEach(async () => {
  stack.sandbox.reset();
  stack.sandbox.setFaults({});
  await sleep(650); // every entry of the previous test has expired
});

describe('cache of lookup answers (embedded LRU)', () => {
  it('answers the same lookup and token from the cache: one upstream call, and the cost report says so', async () => {
    const first = await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
    const second = await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
    expect(second.body.data).toEqual(first.body.data);
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(1);
    expect(cost(first.body)).toMatchObject({ queries: 1, upstreamCalls: 1, cacheHits: 0, staleHits: 0 });
    expect(cost(second.body)).toMatchObject({ queries: 0, upstreamCalls: 0, cacheHits: 1, staleHits: 0 });
  });

  it('never serves one token the answer fetched with another', async () => {
    await stack.gql(ContribuyenteDocument, { ruc: '20100123453' }, { token: 'sandbox-pro' });
    const other = await stack.gql(ContribuyenteDocument, { ruc: '20100123453' }, { token: 'sandbox-free' });
    expect(cost(other.body)).toMatchObject({ cacheHits: 0, upstreamCalls: 1 });
    expect(stack.sandbox.callsTo('/ruc').map((c) => c.headers.authorization)).toEqual(['Bearer sandbox-pro', 'Bearer sandbox-free']);
  });

  it('lets a found record expire after its TTL', async () => {
    await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
    await sleep(300);
    await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(1);
    await sleep(400);
    await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(2);
  });

  it('keeps DOCUMENT_NOT_FOUND for its shorter TTL, with the upstream message', async () => {
    const first = await stack.gql(ContribuyenteDocument, { ruc: TRIGGERS.notFound.ruc });
    const second = await stack.gql(ContribuyenteDocument, { ruc: TRIGGERS.notFound.ruc });
    expect(second.body.errors?.[0]).toMatchObject({
      message: 'El RUC no existe',
      extensions: { code: 'DOCUMENT_NOT_FOUND', retryable: false },
    });
    expect(second.body.errors?.[0]?.message).toBe(first.body.errors?.[0]?.message);
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(1);
    await sleep(350);
    await stack.gql(ContribuyenteDocument, { ruc: TRIGGERS.notFound.ruc });
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(2);
  });

  it('keeps nothing else: retryable failures, 400, 401, 403, 429, bad records, batches', async () => {
    const twice = async (send: () => Promise<unknown>) => {
      stack.sandbox.reset();
      await send();
      await send();
      return stack.sandbox.calls.length;
    };
    expect(await twice(() => stack.gql(ContribuyenteDocument, { ruc: TRIGGERS.unavailable.ruc }))).toBe(2);
    expect(await twice(() => stack.gql(ContribuyenteDocument, { ruc: TRIGGERS.rejected.ruc }))).toBe(2);
    expect(await twice(() => stack.gql(ContribuyenteDocument, { ruc: TRIGGERS.badRecord.ruc }))).toBe(2);
    // A rejected token is not kept as an answer, but remembered for a few seconds: the second request makes no call (floods.test.ts).
    expect(await twice(() => stack.gql(ContribuyenteDocument, { ruc: '20100123453' }, { token: 'not-known-upstream' }))).toBe(1);
    expect(await twice(() => stack.gql(LicenciaDocument, { numLicencia: 'Q46779354' }, { token: 'sandbox-free' }))).toBe(2);
    stack.sandbox.setQuota('sandbox-low', 0);
    expect(await twice(() => stack.gql(ContribuyenteDocument, { ruc: '20100123453' }, { token: 'sandbox-low' }))).toBe(2);
    expect(await twice(() => stack.gql(ValidarComprobantesDocument, { comprobantes: [RECEIPT] }))).toBe(2);
  });

  it('Cache-Control: no-cache skips reading the cache and refreshes it', async () => {
    await stack.gql(ContribuyenteDocument, { ruc: '20100123453' }); // t=0, kept until t=600
    await sleep(300);
    const fresh = await stack.gql(ContribuyenteDocument, { ruc: '20100123453' }, { headers: { 'cache-control': 'no-cache' } });
    expect(cost(fresh.body)).toMatchObject({ upstreamCalls: 1, cacheHits: 0, staleHits: 0 });
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(2);
    await sleep(400); // t=700: the first entry would be gone; the refreshed one (from t=300) is not
    const after = await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
    expect(cost(after.body)).toMatchObject({ upstreamCalls: 0, cacheHits: 1, staleHits: 0 });
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(2);
  });
});

describe('in-flight coalescing', () => {
  it('turns 50 concurrent identical lookups from 50 requests into one upstream call', async () => {
    // Slower than sending 50 requests on a busy machine, so that all of them meet the call in flight (the TTL here is 600 ms).
    stack.sandbox.setFaults({ latencyMs: 1000 });
    const answers = await Promise.all(Array.from({ length: 50 }, () => stack.gql(ContribuyenteDocument, { ruc: '20501234568' })));
    expect(answers.every((a) => a.body.data?.contribuyente?.ruc === '20501234568')).toBe(true);
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(1);
    expect(answers.reduce((sum, a) => sum + cost(a.body)['cacheHits']!, 0)).toBe(49);
    expect(answers.reduce((sum, a) => sum + cost(a.body)['queries']!, 0)).toBe(1);
  });

  it('shares a failure only with the callers of that flight', async () => {
    stack.sandbox.setFaults({ latencyMs: 150, failNext: 1 });
    const flight = await Promise.all(Array.from({ length: 10 }, () => stack.gql(ContribuyenteDocument, { ruc: '20602345671' })));
    expect(flight.every((a) => a.body.errors?.[0]?.extensions?.['code'] === 'UPSTREAM_UNAVAILABLE')).toBe(true);
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(1);
    const next = await stack.gql(ContribuyenteDocument, { ruc: '20602345671' });
    expect(next.body.data?.contribuyente?.ruc).toBe('20602345671');
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(2);
  });

  it('never joins a flight of another token', async () => {
    stack.sandbox.setFaults({ latencyMs: 150 });
    await Promise.all([
      stack.gql(ContribuyenteDocument, { ruc: '20484567892' }, { token: 'sandbox-pro' }),
      stack.gql(ContribuyenteDocument, { ruc: '20484567892' }, { token: 'sandbox-free' }),
    ]);
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(2);
  });
});

describe('CACHE=off', () => {
  let off: Stack;
  let neither: Stack;
  beforeAll(async () => {
    // A call slower than sending ten requests on a busy machine: the ten at once all meet it in flight.
    off = await startStack({ env: { CACHE: 'off' }, sandbox: { latencyMs: 1000 } });
    neither = await startStack({ env: { CACHE: 'off', COALESCE: 'off' }, sandbox: { latencyMs: 100 } });
  });
  afterAll(async () => {
    await off.close();
    await neither.close();
  });

  it('keeps no answer, but still shares a call in flight (COALESCE=on by default)', async () => {
    await off.gql(ContribuyenteDocument, { ruc: '20100123453' });
    const again = await off.gql(ContribuyenteDocument, { ruc: '20100123453' });
    expect(cost(again.body)).toMatchObject({ upstreamCalls: 1, cacheHits: 0, staleHits: 0 });
    const atOnce = await Promise.all(Array.from({ length: 10 }, () => off.gql(ContribuyenteDocument, { ruc: '20100123453' })));
    expect(off.sandbox.callsTo('/ruc')).toHaveLength(3);
    expect(atOnce.reduce((sum, a) => sum + cost(a.body)['cacheHits']!, 0)).toBe(9);
  });

  it('with COALESCE=off too, sends every lookup upstream, one after another or at once', async () => {
    await neither.gql(ContribuyenteDocument, { ruc: '20100123453' });
    await neither.gql(ContribuyenteDocument, { ruc: '20100123453' });
    await Promise.all([
      neither.gql(ContribuyenteDocument, { ruc: '20100123453' }),
      neither.gql(ContribuyenteDocument, { ruc: '20100123453' }),
    ]);
    expect(neither.sandbox.callsTo('/ruc')).toHaveLength(4);
  });
});
