import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ContribuyenteDocument, EjemploDocument, ValidarComprobantesDocument } from '../../operations/generated/graphql.js';
import { TRIGGERS } from '../../src/sandbox/data.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { RECEIPT, TOKEN, freePort, startStack, type Stack } from '../helpers.js';

const attempts = (stack: Stack, path = '/ruc') => stack.sandbox.callsTo(path).length;

describe('retries of lookups', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      // Time-out with room to spare for a loaded CI machine to get each attempt onto the wire.
      env: { UPSTREAM_RETRIES: '2', BREAKER_MIN_CALLS: '1000000', UPSTREAM_TIMEOUT_MS: '500' },
      sandbox: { slowMs: 2500 },
    });
  });
  afterAll(() => stack.close());
  afterEach(() => {
    stack.sandbox.reset();
    stack.sandbox.setFaults({});
  });

  it('a 503 is tried 1 + UPSTREAM_RETRIES times, then fails UPSTREAM_UNAVAILABLE', async () => {
    const { body } = await stack.gql(ContribuyenteDocument, { ruc: TRIGGERS.unavailable.ruc });
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });
    expect(attempts(stack)).toBe(3);
  });

  it('a failure that passes is retried into a success', async () => {
    stack.sandbox.setFaults({ failNext: 2 });
    const { body } = await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
    expect(body.errors).toBeUndefined();
    expect(body.data?.contribuyente?.ruc).toBe('20100123453');
    expect(stack.sandbox.callsTo('/ruc').map((c) => c.status)).toEqual([503, 503, 200]);
  });

  it("a time-out or reset after the call was sent, or a 5xx without the upstream's envelope, is never retried: it may have been billed", async () => {
    for (const ruc of [TRIGGERS.slow.ruc, TRIGGERS.reset.ruc, TRIGGERS.badGateway.ruc]) {
      stack.sandbox.reset();
      const { body } = await stack.gql(ContribuyenteDocument, { ruc });
      expect(body.errors?.[0]?.extensions, ruc).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });
      expect(attempts(stack), ruc).toBe(1);
      // Counted as spent: the report never says less than the upstream may charge.
      expect(body.extensions?.['cost'], ruc).toMatchObject({ queries: 1, upstreamCalls: 1 });
    }
  });

  it('a 4xx is never retried: 404, 400, 422, 401', async () => {
    for (const ruc of [TRIGGERS.notFound.ruc, TRIGGERS.rejected.ruc, TRIGGERS.otherClientError.ruc]) {
      stack.sandbox.reset();
      await stack.gql(ContribuyenteDocument, { ruc });
      expect(attempts(stack), ruc).toBe(1);
    }
    stack.sandbox.reset();
    await stack.gql(ContribuyenteDocument, { ruc: '20100123453' }, { token: 'unknown-token' });
    expect(attempts(stack)).toBe(1);
  });

  it('a 429 quota_exceeded is final and never retried', async () => {
    stack.sandbox.setQuota('sandbox-low', 0);
    const { body } = await stack.gql(ContribuyenteDocument, { ruc: '20100123453' }, { token: 'sandbox-low' });
    expect(body.errors?.[0]?.extensions?.['code']).toBe('QUOTA_EXCEEDED');
    expect(attempts(stack)).toBe(1);
  });

  it('a batch validation is never retried', async () => {
    stack.sandbox.setFaults({ failNext: 1 });
    const { body } = await stack.gql(ValidarComprobantesDocument, { comprobantes: [RECEIPT] });
    expect(body.errors?.[0]?.extensions?.['code']).toBe('UPSTREAM_UNAVAILABLE');
    expect(attempts(stack, '/validacion-multiple-cpe')).toBe(1);
  });
});

describe('an upstream slower than the time-out, billing each call on arrival', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { UPSTREAM_TIMEOUT_MS: '1000', BREAKER_MIN_CALLS: '1000000' } });
    stack.sandbox.setFaults({ pathLatencyMs: { '/ruc': 3000, '/licencia-conducir': 3000 } });
  });
  afterAll(() => stack.close());

  it('makes one call per lookup, and reports what the upstream may have charged', async () => {
    stack.sandbox.setQuota(TOKEN, 100);
    const { body } = await stack.gql(EjemploDocument, { ruc: '20100123453', numLicencia: 'Q46779354' });
    expect(body.errors?.map((e) => e.extensions?.['code'])).toEqual(['UPSTREAM_UNAVAILABLE', 'UPSTREAM_UNAVAILABLE']);
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(1);
    expect(stack.sandbox.callsTo('/licencia-conducir')).toHaveLength(1);
    // The detailed record was never asked: its parent failed.
    const charged = 100 - stack.sandbox.quotaOf(TOKEN)!;
    expect(charged).toBe(3);
    expect((body.extensions?.['cost'] as { queries: number }).queries).toBeGreaterThanOrEqual(charged);
  });
});

describe('one deadline over all attempts', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { UPSTREAM_RETRIES: '10', UPSTREAM_DEADLINE_MS: '400', BREAKER_MIN_CALLS: '1000000' } });
    // Every call is the upstream's own 503 (retryable, not processed), after 150 ms.
    stack.sandbox.setFaults({ latencyMs: 150, rates: { unavailable: 1 } });
  });
  afterAll(() => stack.close());

  it('stops retrying when the deadline passes, well before 1 + 10 attempts', async () => {
    const started = Date.now();
    const { body } = await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
    const elapsed = Date.now() - started;
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });
    expect(attempts(stack)).toBeGreaterThanOrEqual(2);
    expect(attempts(stack)).toBeLessThanOrEqual(3);
    expect(elapsed).toBeLessThan(900);
  });
});

describe('circuit breaker per origin: a failure rate over a sliding window', () => {
  describe('with the default thresholds (more than 50 % of at least 20 calls in 10 s)', () => {
    let stack: Stack;
    beforeAll(async () => {
      stack = await startStack();
    });
    afterAll(() => stack.close());

    it("leaves other callers served after two callers' lookups fail all their attempts", async () => {
      // Two callers, each a lookup the upstream answers 503 (the first try and two retries).
      await Promise.all([
        stack.gql(ContribuyenteDocument, { ruc: TRIGGERS.unavailable.ruc }),
        stack.gql(ContribuyenteDocument, { ruc: TRIGGERS.unavailable.ruc }, { token: 'sandbox-free' }),
      ]);
      expect(stack.sandbox.callsTo('/ruc')).toHaveLength(6);
      const third = await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
      expect(third.body.data?.contribuyente?.ruc).toBe('20100123453');
      expect((await fetch(`${stack.url}/ready`)).status).toBe(200);
      const badToken = await stack.gql(ContribuyenteDocument, { ruc: '20100123453' }, { token: 'not-a-token' });
      expect(badToken.body.errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
      expect(stack.logs.join('')).not.toContain('circuit breaker open');
    });
  });

  describe('with a short cool-down', () => {
    let stack: Stack;
    beforeAll(async () => {
      stack = await startStack({ env: { UPSTREAM_RETRIES: '0', BREAKER_COOLDOWN_MS: '300' } });
    });
    afterAll(() => stack.close());

    it('opens on a sustained 75 % failure rate, refuses without calling, and a probe closes it', async () => {
      stack.sandbox.setFaults({ rates: { unavailable: 0.75 } });
      let calls = 0;
      for (let i = 0; i < 60 && !stack.logs.join('').includes('circuit breaker open'); i++) {
        await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
        calls++;
      }
      expect(stack.logs.join('')).toContain('circuit breaker open');
      // At least the minimum volume of 20 calls before it could open.
      expect(calls).toBeGreaterThanOrEqual(20);
      stack.sandbox.setFaults({});

      // Open: the field fails at once, retryable, and the upstream sees nothing.
      const before = stack.sandbox.calls.length;
      const refused = await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
      expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });
      expect(stack.sandbox.calls).toHaveLength(before);
      expect((await fetch(`${stack.url}/ready`)).status).toBe(503);

      // After the cool-down one probe goes through; its success closes the breaker.
      await new Promise((r) => setTimeout(r, 350));
      const probe = await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
      expect(probe.body.data?.contribuyente?.ruc).toBe('20100123453');
      expect((await fetch(`${stack.url}/ready`)).status).toBe(200);
      const changes = stack.logs.filter((l) => l.includes('circuit breaker')).map((l) => JSON.parse(l).breaker.state);
      expect(changes).toEqual(['open', 'half-open', 'closed']);
    });

    it('does not count 4xx answers as failures', async () => {
      stack.sandbox.reset();
      for (let i = 0; i < 25; i++) await stack.gql(ContribuyenteDocument, { ruc: TRIGGERS.notFound.ruc });
      await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
      expect(stack.sandbox.calls).toHaveLength(26);
    });
  });
});

describe('fallback origin (UPSTREAM_FALLBACK_URL, here a legacy /api address)', () => {
  // A fresh pair per test: each starts with both breakers closed.
  let fallback: Sandbox;
  let stack: Stack;
  beforeEach(async () => {
    fallback = await startSandbox();
    stack = await startStack({
      env: { UPSTREAM_RETRIES: '0', BREAKER_MIN_CALLS: '2', BREAKER_COOLDOWN_MS: '60000', UPSTREAM_FALLBACK_URL: `${fallback.url}/api` },
    });
  });
  afterEach(async () => {
    await stack.close();
    await fallback.close();
  });

  it('answers a lookup when the primary answers 503', async () => {
    stack.sandbox.setFaults({ failNext: 1 });
    const { body } = await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
    expect(body.data?.contribuyente?.ruc).toBe('20100123453');
    expect(stack.sandbox.callsTo('/ruc').map((c) => c.status)).toEqual([503]);
    expect(fallback.calls.map((c) => [c.path, c.status, c.headers.authorization])).toEqual([['/api/ruc', 200, 'Bearer sandbox-pro']]);
  });

  it('is not asked after the primary reset a call it had received: the primary may have billed it', async () => {
    stack.sandbox.setFaults({ rates: { reset: 1 } });
    const { body } = await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(1);
    expect(fallback.calls).toHaveLength(0);
  });

  it('answers a lookup the primary could not be sent (its address refuses connections)', async () => {
    const refusing = await startStack({
      sharedSandbox: fallback,
      upstreamPath: '/api',
      env: { UPSTREAM_URL: `http://127.0.0.1:${await freePort()}`, UPSTREAM_RETRIES: '0', UPSTREAM_FALLBACK_URL: `${fallback.url}/api` },
    });
    try {
      const { body } = await refusing.gql(ContribuyenteDocument, { ruc: '20100123453' });
      expect(body.data?.contribuyente?.ruc).toBe('20100123453');
      expect(fallback.calls).toHaveLength(1);
      expect(body.extensions?.['cost']).toMatchObject({ queries: 1, upstreamCalls: 2 });
    } finally {
      await refusing.close();
    }
  });

  it('is never asked after a 4xx', async () => {
    const { body } = await stack.gql(ContribuyenteDocument, { ruc: TRIGGERS.notFound.ruc });
    expect(body.errors?.[0]?.extensions?.['code']).toBe('DOCUMENT_NOT_FOUND');
    expect(fallback.calls).toHaveLength(0);
  });

  it('is never asked for a batch validation', async () => {
    stack.sandbox.setFaults({ failNext: 1 });
    await stack.gql(ValidarComprobantesDocument, { comprobantes: [RECEIPT] });
    expect(fallback.calls).toHaveLength(0);
  });

  it('takes every lookup while the primary breaker is open, without calling the primary', async () => {
    stack.sandbox.setFaults({ failNext: 2 });
    await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
    await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
    stack.sandbox.reset();
    fallback.reset();
    const { body } = await stack.gql(ContribuyenteDocument, { ruc: '10467793549' });
    expect(body.data?.contribuyente?.ruc).toBe('10467793549');
    expect(stack.sandbox.calls).toHaveLength(0);
    expect(fallback.calls).toHaveLength(1);
  });
});
