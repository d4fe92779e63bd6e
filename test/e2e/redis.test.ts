import { createHmac } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CheckoutDocument, ContribuyenteDocument, ContribuyenteDetalleDocument } from '../../operations/generated/graphql.js';
import { KEY_PREFIX } from '../../src/data/cache.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { redisDump, startRedis, startStack, type RedisServer, type Stack } from '../helpers.js';

const SECRET = 'a-secret-shared-by-every-instance';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Until each instance's /ready says its Redis is up (a loaded machine can take more than a fixed wait): at most 10 s. */
async function untilReady(...stacks: Stack[]): Promise<void> {
  for (const stack of stacks) {
    for (let i = 0; i < 100 && (await fetch(`${stack.url}/ready`)).status !== 200; i++) await sleep(100);
  }
}
const cost = (body: { extensions?: Record<string, unknown> }) => body.extensions?.['cost'] as Record<string, number>;

let redis: RedisServer;
let sandbox: Sandbox;
let a: Stack;
let b: Stack;
let inspect: Redis;

beforeAll(async () => {
  redis = await startRedis();
  sandbox = await startSandbox();
  const env = {
    CACHE: 'on',
    REDIS_URL: redis.url,
    CACHE_KEY_SECRET: SECRET,
    CACHE_TTL_RUC_SUNAT_MS: '500',
    UPSTREAM_RETRIES: '0',
    // The paid rate lookup is shared like the others; SUNAT's months are shared in test/e2e/tipo-de-cambio.test.ts.
    TIPO_DE_CAMBIO: 'servicio',
  };
  // Two gateway instances, one upstream, one Redis: as behind a load balancer.
  a = await startStack({ sharedSandbox: sandbox, env });
  b = await startStack({ sharedSandbox: sandbox, env });
  inspect = new Redis(redis.url, { lazyConnect: false, maxRetriesPerRequest: 1 });
  // Redis is stopped on purpose in some tests: its errors are expected, not unhandled.
  inspect.on('error', () => undefined);
  // Both instances connected before the first lookup.
  await untilReady(a, b);
});

afterAll(async () => {
  inspect.disconnect();
  await a.close();
  await b.close();
  await sandbox.close();
  await redis.stop();
});

afterEach(() => sandbox.reset());

describe('a shared Redis cache (a real redis-server)', () => {
  it('remembers a rejected token for every instance: the other instance then makes no call with it', async () => {
    const first = await a.gql(ContribuyenteDocument, { ruc: '20100123453' }, { token: 'rejected-everywhere' });
    expect(first.body.errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
    expect(sandbox.callsTo('/ruc')).toHaveLength(1);
    await sleep(50);
    const other = await b.gql(ContribuyenteDocument, { ruc: '20501234568' }, { token: 'rejected-everywhere' });
    expect(other.body.errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
    expect(sandbox.callsTo('/ruc')).toHaveLength(1);
    // The token is kept under its HMAC, never in clear; an accepted token is not affected.
    expect((await inspect.keys('*rejected-everywhere*')).length).toBe(0);
    expect((await b.gql(ContribuyenteDocument, { ruc: '20501234568' })).body.errors).toBeUndefined();
  });

  it('lets two instances make one upstream call for the same lookup and token', async () => {
    const fromA = await a.gql(ContribuyenteDocument, { ruc: '20100123453' });
    const fromB = await b.gql(ContribuyenteDocument, { ruc: '20100123453' });
    expect(fromB.body.data).toEqual(fromA.body.data);
    expect(sandbox.callsTo('/ruc')).toHaveLength(1);
    expect(cost(fromB.body)).toMatchObject({ cacheHits: 1, upstreamCalls: 0, queries: 0 });
  });

  it('lets two instances make one upstream call for the same lookup arriving at both at once', async () => {
    sandbox.setFaults({ latencyMs: 300 });
    try {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).gql(ContribuyenteDocument, { ruc: '20484567892' })),
      );
      expect(answers.every((x) => x.body.data?.contribuyente?.ruc === '20484567892')).toBe(true);
      expect(sandbox.callsTo('/ruc')).toHaveLength(1);
      expect(answers.reduce((sum, x) => sum + cost(x.body)['cacheHits']!, 0)).toBe(9);
      expect(answers.reduce((sum, x) => sum + cost(x.body)['queries']!, 0)).toBe(1);
    } finally {
      sandbox.setFaults({});
    }
  });

  it('does the same for the lookups beyond the spec: a checkout (a person, a company’s branches and representatives, a rate) arriving at both at once', async () => {
    sandbox.setFaults({ latencyMs: 300 });
    try {
      const variables = { dni: '40123456', ruc: '20501234568', fecha: '2026-11-20' };
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).gql(CheckoutDocument, variables)));
      for (const x of answers) expect(x.body.data).toEqual(answers[0]!.body.data);
      // The buyer, and the company's one representative: two DNIs, each asked once.
      expect(
        sandbox
          .callsTo('/dni')
          .map((c) => (c.body as { dni: string }).dni)
          .sort(),
      ).toEqual(['40123456', '72345678']);
      for (const path of ['/ruc-representantes', '/ruc-establecimientos-anexos', '/tipo-de-cambio']) {
        expect(sandbox.callsTo(path), path).toHaveLength(1);
      }
      const billed = sandbox.calls.length;
      expect(answers.reduce((sum, x) => sum + cost(x.body)['queries']!, 0)).toBe(billed);
    } finally {
      sandbox.setFaults({});
    }
  });

  it("makes the call itself once a lead's lock expires (the lead died)", async () => {
    // A lock left by an instance that died mid-call, with 600 ms left to live.
    const tokenKey = createHmac('sha256', SECRET).update('sandbox-pro').digest('base64url');
    await inspect.set(`${KEY_PREFIX}{ruc:${tokenKey}:20555678909}#lock`, 'a-dead-instance', 'PX', 600);
    const started = Date.now();
    const { body } = await a.gql(ContribuyenteDocument, { ruc: '20555678909' });
    expect(body.data?.contribuyente?.ruc).toBe('20555678909');
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(sandbox.callsTo('/ruc')).toHaveLength(1);
    expect(cost(body)).toMatchObject({ upstreamCalls: 1, cacheHits: 0, staleHits: 0 });
  });

  it('never shares an entry between tokens, and keeps no token in any key or value', async () => {
    await a.gql(ContribuyenteDocument, { ruc: '10467793549' }, { token: 'sandbox-pro' });
    await b.gql(ContribuyenteDocument, { ruc: '10467793549' }, { token: 'sandbox-free' });
    expect(sandbox.callsTo('/ruc')).toHaveLength(2);
    const keys = await inspect.keys('*');
    expect(keys.length).toBeGreaterThan(0);
    // Every key of every kind: the lookups' strings, the webhooks' sets and BullMQ's queue.
    const dump = await redisDump(inspect);
    expect(dump).not.toContain('sandbox-pro');
    expect(dump).not.toContain('sandbox-free');
  });

  it('lets entries expire with their TTL', async () => {
    await a.gql(ContribuyenteDetalleDocument, { ruc: '20501234568' });
    await b.gql(ContribuyenteDetalleDocument, { ruc: '20501234568' });
    expect(sandbox.callsTo('/ruc-sunat')).toHaveLength(1);
    const key = (await inspect.keys(`${KEY_PREFIX}{rucSunat:*:20501234568}`))[0]!;
    // Fresh for its TTL, and kept CACHE_STALE_IF_ERROR_MS (24 h) longer for when the upstream is down.
    const pttl = await inspect.pttl(key);
    expect(pttl).toBeGreaterThan(86_400_000);
    expect(pttl).toBeLessThanOrEqual(86_400_500);
    expect((JSON.parse((await inspect.get(key))!) as { freshUntil: number }).freshUntil).toBeLessThanOrEqual(Date.now() + 500);
    await sleep(600);
    await b.gql(ContribuyenteDetalleDocument, { ruc: '20501234568' });
    expect(sandbox.callsTo('/ruc-sunat')).toHaveLength(2);
  });

  it('answers another instance’s last good record from Redis while the sources are down, marked stale', async () => {
    const query = '{ contribuyenteDetalle(ruc: "20484567892") { ruc consultadoEn } }';
    const first = await a.gql(query);
    const at = (first.body.data as { contribuyenteDetalle: { consultadoEn: string } }).contribuyenteDetalle.consultadoEn;
    await sleep(600);
    sandbox.setFaults({ sourcesDown: true });
    try {
      const stale = await b.gql(query);
      expect(stale.body.errors).toBeUndefined();
      expect(stale.body.data).toEqual({ contribuyenteDetalle: { ruc: '20484567892', consultadoEn: at } });
      expect(stale.body.extensions?.['stale']).toEqual([{ path: ['contribuyenteDetalle'], consultadoEn: at }]);
      expect(cost(stale.body)).toMatchObject({ staleHits: 1, upstreamCalls: 1 });
    } finally {
      sandbox.setFaults({});
    }
  });

  it('refreshes the shared entry on Cache-Control: no-cache', async () => {
    await a.gql(ContribuyenteDocument, { ruc: '20602345671' });
    const fresh = await b.gql(ContribuyenteDocument, { ruc: '20602345671' }, { headers: { 'cache-control': 'no-cache' } });
    expect(cost(fresh.body)).toMatchObject({ upstreamCalls: 1, cacheHits: 0, staleHits: 0 });
    const after = await a.gql(ContribuyenteDocument, { ruc: '20602345671' });
    expect(cost(after.body)).toMatchObject({ upstreamCalls: 0, cacheHits: 1, staleHits: 0 });
    expect(sandbox.callsTo('/ruc')).toHaveLength(2);
  });

  it('keeps lookups working through the upstream while Redis is down, and recovers when it is back', async () => {
    await redis.stop();
    const during = await Promise.all([
      a.gql(ContribuyenteDocument, { ruc: '20603456786' }),
      b.gql(ContribuyenteDocument, { ruc: '20603456786' }),
      a.gql(ContribuyenteDocument, { ruc: '20603456786' }),
    ]);
    for (const d of during) {
      expect(d.status).toBe(200);
      expect(d.body.errors).toBeUndefined();
      expect(d.body.data?.contribuyente?.ruc).toBe('20603456786');
    }
    expect(a.logs.join('')).toContain('cache store down');

    await redis.start();
    // ioredis reconnects by itself (backoff up to 2 s).
    const deadline = Date.now() + 8000;
    let recovered = false;
    while (!recovered && Date.now() < deadline) {
      await sleep(250);
      sandbox.reset();
      await a.gql(ContribuyenteDocument, { ruc: '20136789016' });
      await b.gql(ContribuyenteDocument, { ruc: '20136789016' });
      recovered = sandbox.callsTo('/ruc').length === 1 && a.logs.join('').includes('cache store up');
      if (!recovered) await inspect.flushall().catch(() => undefined);
    }
    expect(recovered).toBe(true);
  });
});

describe('CACHE=off with a shared Redis: calls in flight are still shared across instances', () => {
  let c: Stack;
  let d: Stack;
  beforeAll(async () => {
    await redis.start().catch(() => undefined);
    const env = { CACHE: 'off', REDIS_URL: redis.url, CACHE_KEY_SECRET: SECRET };
    c = await startStack({ sharedSandbox: sandbox, env });
    d = await startStack({ sharedSandbox: sandbox, env });
    await untilReady(c, d);
  });
  afterAll(async () => {
    await c.close();
    await d.close();
  });

  it("hands one call's answer to the other instance, and keeps nothing", async () => {
    // Longer than the three requests take to arrive on a busy machine: the other instance finds the call still in flight.
    sandbox.setFaults({ latencyMs: 1500 });
    try {
      const answers = await Promise.all([
        c.gql(ContribuyenteDocument, { ruc: '20457890126' }),
        d.gql(ContribuyenteDocument, { ruc: '20457890126' }),
        d.gql(ContribuyenteDocument, { ruc: '20457890126' }),
      ]);
      expect(answers.every((x) => x.body.data?.contribuyente?.ruc === '20457890126')).toBe(true);
      expect(sandbox.callsTo('/ruc')).toHaveLength(1);
    } finally {
      sandbox.setFaults({});
    }
    expect(await inspect.keys(`${KEY_PREFIX}{ruc:*:20457890126}`)).toEqual([]);
    await d.gql(ContribuyenteDocument, { ruc: '20457890126' });
    expect(sandbox.callsTo('/ruc')).toHaveLength(2);
  });
});
