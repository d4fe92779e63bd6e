import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Tracing } from '../../src/telemetry/tracing.js';
import { SIGN_IN_PLACEHOLDER } from '../../src/http/graphiql.js';
import { REFETCH_AFTER_MS } from '../../src/pipeline/sign-in.js';
import { TRIGGERS } from '../../src/sandbox/data.js';
import { startStack, type Stack } from '../helpers.js';
import { startIdentityProvider, type IdentityProvider } from '../idp.js';

/** The plan's token: the only one the sandbox accepts, so a call with anything else would show. */
const PLAN = 'plan-token-7f3a9c0e5b';
const LOOKUP = '{ contribuyente(ruc: "20100123453") { ruc nombreORazonSocial } }';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const codeOf = (body: { errors?: readonly { extensions?: Record<string, unknown> }[] }) => body.errors?.[0]?.extensions?.['code'];

const exporter = new InMemorySpanExporter();
let idp: IdentityProvider;
let stack: Stack;
let rs: Awaited<ReturnType<IdentityProvider['addKey']>>;
let es: Awaited<ReturnType<IdentityProvider['addKey']>>;
let ed: Awaited<ReturnType<IdentityProvider['addKey']>>;

beforeAll(async () => {
  idp = await startIdentityProvider();
  [rs, es, ed] = [await idp.addKey('RS256'), await idp.addKey('ES256'), await idp.addKey('EdDSA')];
  stack = await startStack({
    sandbox: { tokens: [{ token: PLAN, plan: 'pro', quota: 1_000_000 }] },
    env: {
      CACHE: 'on',
      AUTH_JWKS_URL: idp.jwksUrl,
      AUTH_ISSUER: idp.issuer,
      AUTH_AUDIENCE: idp.audience,
      UPSTREAM_TOKEN: PLAN,
      BUDGET_QUERIES: '50',
    },
    app: { tracing: new Tracing(new SimpleSpanProcessor(exporter)) },
  });
});

afterAll(async () => {
  await stack?.close();
  await idp?.close();
});

afterEach(() => stack.sandbox.reset());

describe('sign-in mode: who may call', () => {
  it('accepts RS256, ES256 and EdDSA tokens, and the upstream gets the plan token, never the JWT', async () => {
    for (const [i, key] of [rs, es, ed].entries()) {
      const jwt = await idp.sign(key, `user-alg-${i}`);
      const answer = await stack.gql(LOOKUP, {}, { token: jwt, headers: { 'cache-control': 'no-cache' } });
      expect(answer.status, key.alg).toBe(200);
      expect(answer.body.errors, key.alg).toBeUndefined();
    }
    const calls = stack.sandbox.callsTo('/ruc');
    expect(calls).toHaveLength(3);
    for (const call of calls) expect(call.headers.authorization).toBe(`Bearer ${PLAN}`);
  });

  it('refuses every other token with 401, WWW-Authenticate and UNAUTHENTICATED, before any upstream call', async () => {
    const now = Math.floor(Date.now() / 1000);
    const good = await idp.sign(es, 'tamper-me');
    const [h, p, s] = good.split('.');
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString()) as Record<string, unknown>;
    const tampered = [h, Buffer.from(JSON.stringify({ ...payload, sub: 'someone-else' })).toString('base64url'), s].join('.');
    const unpublished = await idp.addKey('ES256', { published: false });
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${p}.`;
    // HS256 signed with the public key's text as its secret: the classic key-confusion attack.
    const { createHmac } = await import('node:crypto');
    const hsHeader = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid: rs.kid })).toString('base64url');
    const hsSig = createHmac('sha256', JSON.stringify(rs.jwk)).update(`${hsHeader}.${p}`).digest('base64url');
    const refused: Record<string, string | null> = {
      'no header': null,
      'the plan token': PLAN,
      garbage: 'not.a.jwt',
      expired: await idp.sign(es, 'u', { exp: now - 120 }),
      'not yet valid': await idp.sign(es, 'u', { nbf: now + 300 }),
      'another issuer': await idp.sign(es, 'u', { iss: 'https://evil.example' }),
      'another audience': await idp.sign(es, 'u', { aud: 'another-api' }),
      'a key the JWKS does not hold': await idp.sign(unpublished, 'u'),
      'a tampered payload': tampered,
      'alg none': none,
      HS256: `${hsHeader}.${p}.${hsSig}`,
      'an RSA header on an EC key': await idp.sign(es, 'u', {}, { kid: rs.kid }).catch(() => 'x.y.z'),
      'no subject': await idp.sign(es, undefined),
      'no exp': await idp.sign(es, 'u', { exp: undefined }),
    };
    for (const [what, token] of Object.entries(refused)) {
      const answer = await stack.gql(LOOKUP, {}, { token });
      expect(answer.status, what).toBe(401);
      expect(answer.headers.get('www-authenticate'), what).toBe('Bearer error="invalid_token"');
      expect(codeOf(answer.body), what).toBe('UNAUTHENTICATED');
      expect(answer.body.data, what).toBeUndefined();
    }
    expect(stack.sandbox.callCount).toBe(0);
    // Within the clock tolerance (30 s), an expired token still passes.
    const justExpired = await idp.sign(es, 'u', { exp: now - 10 });
    expect((await stack.gql(LOOKUP, {}, { token: justExpired })).status).toBe(200);
  });

  it('serves the same RUC to a second user from the plan’s cache: no call, nothing spent', async () => {
    const ruc = '20501234568';
    const q = `{ contribuyente(ruc: "${ruc}") { ruc } }`;
    const first = await stack.gql(q, {}, { token: await idp.sign(es, 'cache-a') });
    expect((first.body.extensions?.['cost'] as { budget: { spent: number } }).budget.spent).toBe(1);
    const second = await stack.gql(q, {}, { token: await idp.sign(rs, 'cache-b') });
    const cost = second.body.extensions?.['cost'] as { cacheHits: number; budget: { spent: number; limit: number } };
    expect(cost.cacheHits).toBe(1);
    expect(cost.budget).toMatchObject({ spent: 0, limit: 50 });
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(1);
  });

  it('accepts a rotated key without a restart, and a flood of unknown key ids costs the provider one fetch per few seconds', async () => {
    expect((await stack.gql(LOOKUP, {}, { token: await idp.sign(es, 'rot') })).status).toBe(200);
    const before = idp.fetches;
    // Tokens naming keys the provider never published: refused, with one refetch at most.
    const unknown = await idp.addKey('ES256', { published: false });
    const flood = await Promise.all(
      Array.from({ length: 30 }, async () => stack.gql(LOOKUP, {}, { token: await idp.sign(unknown, 'flood') })),
    );
    expect(flood.every((a) => a.status === 401)).toBe(true);
    expect(idp.fetches - before).toBeLessThanOrEqual(1);
    // The provider rotates: a new key in, the old one out.
    const next = await idp.addKey('RS256');
    idp.unpublish(es);
    await sleep(REFETCH_AFTER_MS + 200);
    const rotated = await stack.gql(LOOKUP, {}, { token: await idp.sign(next, 'rot') });
    expect(rotated.status).toBe(200);
    expect(rotated.body.errors).toBeUndefined();
    idp.unpublish(next);
    await idp.addKey('ES256').then((k) => (es = k));
  });

  it('keeps verifying with the kept keys while the provider is down; a token no kept key fits is AUTH_UNAVAILABLE, not a refusal', async () => {
    const jwt = await idp.sign(rs, 'while-down');
    expect((await stack.gql(LOOKUP, {}, { token: jwt })).status).toBe(200);
    idp.down(true);
    try {
      await sleep(REFETCH_AFTER_MS + 200);
      // A token not seen before (none of its verification remembered), signed by a kept key.
      const kept = await stack.gql(LOOKUP, {}, { token: await idp.sign(rs, 'while-down-2') });
      expect(kept.status).toBe(200);
      const stranger = await idp.addKey('ES256');
      const unavailable = await stack.gql(LOOKUP, {}, { token: await idp.sign(stranger, 'while-down') });
      expect(unavailable.status).toBe(503);
      expect(unavailable.body.errors?.[0]?.extensions).toMatchObject({ code: 'AUTH_UNAVAILABLE', retryable: true });
      expect(stack.sandbox.callsTo('/ruc').length).toBeLessThanOrEqual(1);
    } finally {
      idp.down(false);
    }
  });

  it('counts refusals in /metrics by reason, with no subject in any label', async () => {
    const text = await (await fetch(`${stack.url}/metrics`)).text();
    expect(text).toMatch(/gateway_sign_in_refusals_total\{reason="missing"\} [1-9]/);
    expect(text).toMatch(/gateway_sign_in_refusals_total\{reason="expired"\} [1-9]/);
    expect(text).toMatch(/gateway_sign_in_refusals_total\{reason="invalid"\} [1-9]/);
    expect(text).not.toContain('cache-a');
    expect(text).not.toContain('while-down');
  });

  it('tells a GraphiQL user what to paste in the Headers pane, and serves GraphiQL without a token', async () => {
    const res = await fetch(`${stack.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain(`Bearer ${SIGN_IN_PLACEHOLDER.replace('<', '\\u003c')}`);
    expect(page).not.toContain(PLAN);
  });

  it('never puts the plan token or a JWT in a span', () => {
    const spans = exporter.getFinishedSpans();
    expect(spans.length).toBeGreaterThan(2);
    const dump = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status })));
    expect(dump).not.toContain(PLAN);
    expect(dump).not.toMatch(/eyJ[\w-]{10,}/);
  });

  it('refuses a persisted query’s hash without a JWT with the same 401: no other answer says whether the hash is known', async () => {
    const hashed = { extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } } };
    for (const token of [null, 'garbage']) {
      const res = await fetch(`${stack.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(hashed),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
      expect(codeOf((await res.json()) as { errors?: { extensions?: Record<string, unknown> }[] })).toBe('UNAUTHENTICATED');
    }
  });

  // Last of the calls: it leaves the plan throttled for 30 s.
  it('holds the upstream’s throttling against the plan, which every user’s calls carry: another user waits it out with no call', async () => {
    const first = await stack.gql(
      `{ contribuyente(ruc: "${TRIGGERS.throttled.ruc}") { ruc } }`,
      {},
      { token: await idp.sign(rs, 'throttled-a') },
    );
    expect(codeOf(first.body)).toBe('RATE_LIMITED');
    const calls = stack.sandbox.callCount;
    const other = await stack.gql('{ contribuyente(ruc: "20603456786") { ruc } }', {}, { token: await idp.sign(rs, 'throttled-b') });
    expect(other.body.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', retryable: true });
    expect(stack.sandbox.callCount).toBe(calls);
  });

  it('never writes the plan token or a JWT in a log line', async () => {
    const logs = stack.logs.join('');
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain(PLAN);
    expect(logs).not.toMatch(/eyJ[\w-]{10,}\.eyJ/);
  });
});

describe('the identity provider’s keys, from the start', () => {
  let own: IdentityProvider;
  let gateway: Stack | undefined;
  const env = () => ({ AUTH_JWKS_URL: own.jwksUrl, AUTH_ISSUER: own.issuer, AUTH_AUDIENCE: own.audience, UPSTREAM_TOKEN: PLAN });
  const start = () => startStack({ sandbox: { tokens: [{ token: PLAN, plan: 'pro', quota: 1_000_000 }] }, env: env() });
  const ready = async () => (await fetch(`${gateway!.url}/ready`)).status;
  async function untilReady(withinMs: number) {
    const deadline = Date.now() + withinMs;
    while ((await ready()) !== 200 && Date.now() < deadline) await sleep(100);
    return ready();
  }
  beforeEach(async () => {
    own = await startIdentityProvider();
  });
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
    await own.close();
  });

  it('are fetched before /ready says 200: then a provider that hangs delays no good token, not even the first ones', async () => {
    const key = await own.addKey('ES256');
    gateway = await start();
    expect(await untilReady(3000)).toBe(200);
    expect(own.fetches).toBe(1);
    own.hang(true);
    const started = performance.now();
    const tokens = await Promise.all(Array.from({ length: 20 }, (_, i) => own.sign(key, `first-${i}`)));
    const answers = await Promise.all(tokens.map((token) => gateway!.gql(LOOKUP, {}, { token })));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(performance.now() - started).toBeLessThan(1500);
    own.hang(false);
  });

  it('with the provider down at start: /ready 503, asked at most once every 5 s whatever tokens come, ready once it answers', async () => {
    const key = await own.addKey('ES256');
    own.down(true);
    gateway = await start();
    expect(await ready()).toBe(503);
    const before = own.fetches;
    // 200 tokens naming keys never published, ten rounds of 20, while the provider answers 503.
    const madeUp = await own.addKey('ES256', { published: false });
    for (let round = 0; round < 10; round++) {
      const tokens = await Promise.all(
        Array.from({ length: 20 }, (_, i) => own.sign(madeUp, `flood-${round}-${i}`, {}, { kid: `made-up-${round}-${i}` })),
      );
      const answers = await Promise.all(tokens.map((token) => gateway!.gql(LOOKUP, {}, { token })));
      for (const a of answers) expect(codeOf(a.body)).toBe('AUTH_UNAVAILABLE');
    }
    expect(own.fetches - before).toBeLessThanOrEqual(1);
    expect(gateway.sandbox.callCount).toBe(0);
    own.down(false);
    expect(await untilReady(REFETCH_AFTER_MS + 2000)).toBe(200);
    expect((await gateway.gql(LOOKUP, {}, { token: await own.sign(key, 'after') })).status).toBe(200);
    // Said in the log once, as a warning, however often it was asked meanwhile; and once when it is back.
    const said = gateway.logs.map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(said.filter((l) => l.msg.startsWith('sign-in keys cannot be fetched')).map((l) => l.level)).toEqual([40]);
    expect(said.filter((l) => l.msg === 'sign-in keys fetched again')).toHaveLength(1);
  }, 20_000);

  it('tries each key a kid names when the provider publishes two under one kid', async () => {
    const first = await own.addKey('ES256');
    const twin = await own.addKey('ES256', { kid: first.kid });
    gateway = await start();
    expect(await untilReady(3000)).toBe(200);
    for (const key of [twin, first]) {
      const answer = await gateway.gql(LOOKUP, {}, { token: await own.sign(key, `twin-${key === twin}`) });
      expect(answer.status, key === twin ? 'the second key' : 'the first key').toBe(200);
    }
    // A key published under neither is still refused.
    const stranger = await own.addKey('ES256', { published: false, kid: first.kid });
    expect((await gateway.gql(LOOKUP, {}, { token: await own.sign(stranger, 'stranger') })).status).toBe(401);
    // One the provider publishes later under the same kid is found by the next fetch the gate lets through.
    const late = await own.addKey('ES256', { kid: first.kid });
    await sleep(REFETCH_AFTER_MS + 200);
    expect((await gateway.gql(LOOKUP, {}, { token: await own.sign(late, 'late') })).status).toBe(200);
  }, 20_000);
});
