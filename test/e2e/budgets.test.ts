import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRIGGERS } from '../../src/sandbox/data.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import {
  freePort,
  postBodyOnce,
  spawnGateway,
  startRedis,
  startStack,
  unknownRucs,
  untilReady,
  type RedisServer,
  type SpawnedGateway,
  type Stack,
} from '../helpers.js';
import { startIdentityProvider, type IdentityProvider } from '../idp.js';

const PLAN = 'plan-token-budgets-91c2d7';
const LOOKUP = 'query($r: String!) { contribuyente(ruc: $r) { ruc } }';
type Key = Awaited<ReturnType<IdentityProvider['addKey']>>;

let idp: IdentityProvider;
let key: Key;
const signIn = (subject: string) => idp.sign(key, subject);
const lookup = (url: string, ruc: string, jwt: string) => postBodyOnce(url, { query: LOOKUP, variables: { r: ruc } }, { token: jwt });
const codeOf = (a: { body: { errors?: readonly { extensions?: Record<string, unknown> }[] } }) => a.body.errors?.[0]?.extensions?.['code'];
const readiness = async (g: SpawnedGateway) => {
  const res = await fetch(g.url.replace(/\/graphql$/, '/ready'));
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const callsFor = (sandbox: Sandbox, rucs: readonly string[]) =>
  sandbox.callsTo('/ruc').filter((c) => rucs.includes((c.body as { ruc: string }).ruc)).length;

function authEnv(sandbox: Sandbox, more: Record<string, string> = {}): Record<string, string> {
  return {
    UPSTREAM_URL: sandbox.url,
    AUTH_JWKS_URL: idp.jwksUrl,
    AUTH_ISSUER: idp.issuer,
    AUTH_AUDIENCE: idp.audience,
    UPSTREAM_TOKEN: PLAN,
    LOG_LEVEL: 'debug',
    ...more,
  };
}

beforeAll(async () => {
  idp = await startIdentityProvider();
  key = await idp.addKey('ES256');
});
afterAll(async () => {
  await idp?.close();
});

describe('npm start in sign-in mode, BUDGET_QUERIES=3', () => {
  let sandbox: Sandbox;
  let gateway: SpawnedGateway | undefined;
  beforeAll(async () => {
    sandbox = await startSandbox({ tokens: [{ token: PLAN, plan: 'pro', quota: 1_000_000 }] });
    gateway = await spawnGateway(authEnv(sandbox, { BUDGET_QUERIES: '3' }));
  });
  afterAll(async () => {
    await gateway?.stop();
    await sandbox?.close();
  });

  // A rotated key is taken without a restart: test/e2e/sign-in.test.ts.
  it('refuses a request without a valid JWT with 401 before any call', async () => {
    const now = Math.floor(Date.now() / 1000);
    const stranger = await idp.addKey('ES256', { published: false });
    const refused = [null, PLAN, 'garbage', await idp.sign(key, 'u', { exp: now - 120 }), await idp.sign(stranger, 'u')];
    sandbox.reset();
    const answers = await Promise.all(
      refused.flatMap((token) =>
        Array.from({ length: 4 }, () => postBodyOnce(gateway!.url, { query: LOOKUP, variables: { r: '20100123453' } }, { token })),
      ),
    );
    for (const a of answers) expect([a.status, codeOf(a)]).toEqual([401, 'UNAUTHENTICATED']);
    expect(sandbox.callCount).toBe(0);
  });

  it('ten distinct lookups sent at once on a budget of 3 make at most 3 calls; the rest are BUDGET_EXCEEDED', async () => {
    const jwt = await signIn('burst');
    const rucs = unknownRucs(10, 71_000_000);
    const answers = await Promise.all(rucs.map((ruc) => lookup(gateway!.url, ruc, jwt)));
    expect(callsFor(sandbox, rucs)).toBeLessThanOrEqual(3);
    const served = answers.filter((a) => codeOf(a) === 'DOCUMENT_NOT_FOUND');
    const refused = answers.filter((a) => codeOf(a) === 'BUDGET_EXCEEDED');
    expect(served.length).toBe(callsFor(sandbox, rucs));
    expect(served.length + refused.length).toBe(10);
    expect(refused.length).toBeGreaterThanOrEqual(7);
    const error = refused[0]!.body.errors![0]!;
    expect(error.extensions).toMatchObject({ retryable: false, budget: { limit: 3, spent: 3 } });
    expect(Date.parse((error.extensions!['budget'] as { resetAt: string }).resetAt)).toBeGreaterThan(Date.now());
    // What the plan paid for is served even now, for free, and the standing says so.
    const again = await lookup(gateway!.url, '20100123453', await signIn('payer'));
    expect(again.body.errors).toBeUndefined();
    const hit = await lookup(gateway!.url, '20100123453', jwt);
    expect(hit.body.data).toEqual({ contribuyente: { ruc: '20100123453' } });
    expect(hit.body.extensions?.cost).toMatchObject({ queries: 0, cacheHits: 1, budget: { limit: 3, spent: 3 } });
  });

  it('over the budget, only the field that needs a call fails: the operation’s other fields still resolve', async () => {
    const jwt = await signIn('mixed');
    const rucs = unknownRucs(4, 72_000_000);
    for (const ruc of rucs.slice(0, 3)) await lookup(gateway!.url, ruc, jwt);
    const answer = await postBodyOnce(
      gateway!.url,
      {
        query: `{ kept: contribuyente(ruc: "${rucs[0]}") { ruc } fresh: contribuyente(ruc: "${rucs[3]}") { ruc } ok: contribuyente(ruc: "20100123453") { ruc } }`,
      },
      { token: jwt },
    );
    expect(answer.status).toBe(200);
    expect(answer.body.data).toEqual({ kept: null, fresh: null, ok: { ruc: '20100123453' } });
    const byPath = Object.fromEntries(answer.body.errors!.map((e) => [e.path![0], e.extensions?.['code']]));
    expect(byPath).toEqual({ kept: 'DOCUMENT_NOT_FOUND', fresh: 'BUDGET_EXCEEDED' });
    expect(callsFor(sandbox, [rucs[3]!])).toBe(0);
  });

  it('gives back what certainly cost nothing: five calls refused unbilled leave the budget untouched', async () => {
    const jwt = await signIn('refunded');
    for (let i = 0; i < 5; i++) expect(codeOf(await lookup(gateway!.url, TRIGGERS.rejected.ruc, jwt))).toBe('INVALID_INPUT');
    expect(callsFor(sandbox, [TRIGGERS.rejected.ruc])).toBeGreaterThanOrEqual(5);
    const standing = (await lookup(gateway!.url, '20100123453', jwt)).body.extensions?.cost as unknown as { budget: { spent: number } };
    expect(standing.budget.spent).toBe(0);
  });

  it('logs a budget refusal as no error and with no stack: it is an answer the contract gives', () => {
    const output = gateway!.output();
    expect(output).toContain('BUDGET_EXCEEDED');
    expect(output.split('\n').filter((l) => /"level":(50|60)/.test(l))).toEqual([]);
    expect(output).not.toContain('"stack"');
  });

  it('never writes the plan token or a JWT in a log line', () => {
    const output = gateway!.output();
    expect(output).toContain('"msg":"operation"');
    expect(output).not.toContain('without AUTH_ISSUER');
    expect(output).not.toContain(PLAN);
    expect(output).not.toMatch(/eyJ[\w-]{10,}\.eyJ/);
  });
});

describe('sign-in mode will not start without the plan token, and warns without an issuer and audience', () => {
  it('exits non-zero with a message naming UPSTREAM_TOKEN', async () => {
    const env = { UPSTREAM_URL: 'http://127.0.0.1:9', AUTH_JWKS_URL: 'http://127.0.0.1:9/jwks.json' };
    await expect(spawnGateway(env)).rejects.toThrow(/exited [1-9][\s\S]*UPSTREAM_TOKEN/);
  });

  it('says at start that any token the keys signed is taken when AUTH_ISSUER or AUTH_AUDIENCE is unset', async () => {
    const gateway = await spawnGateway({ UPSTREAM_URL: 'http://127.0.0.1:9', AUTH_JWKS_URL: idp.jwksUrl, UPSTREAM_TOKEN: PLAN });
    try {
      expect(gateway.output()).toMatch(/"level":40.*AUTH_JWKS_URL without AUTH_ISSUER or AUTH_AUDIENCE/);
    } finally {
      await gateway.stop();
    }
  });
});

describe('a budget shared by two instances over a real redis-server', () => {
  let redis: RedisServer;
  let sandbox: Sandbox;
  let a: SpawnedGateway | undefined;
  let b: SpawnedGateway | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    redis = await startRedis();
    sandbox = await startSandbox({ tokens: [{ token: PLAN, plan: 'pro', quota: 1_000_000 }] });
    // The second instance reads the plan token from a file, as a mounted secret.
    dir = mkdtempSync(join(tmpdir(), 'plan-'));
    writeFileSync(join(dir, 'token'), `${PLAN}\n`);
    const shared = { BUDGET_QUERIES: '4', REDIS_URL: redis.url, CACHE_KEY_SECRET: 'a-secret-of-both-instances' };
    a = await spawnGateway(authEnv(sandbox, shared));
    const { UPSTREAM_TOKEN: _, ...withoutToken } = authEnv(sandbox, shared);
    b = await spawnGateway({ ...withoutToken, UPSTREAM_TOKEN_FILE: join(dir, 'token') });
    // As a load balancer does: no traffic before /ready (the budgets' shared count connected).
    await untilReady([a.url, b.url]);
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await sandbox?.close();
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves 4 distinct lookups of one subject across both, not 8', async () => {
    for (const g of [a!, b!]) expect((await readiness(g)).body).toMatchObject({ signIn: { keysFetched: true, budgetsConnected: true } });
    const jwt = await signIn('two-instances');
    const rucs = unknownRucs(8, 73_000_000);
    const answers = await Promise.all(rucs.map((ruc, i) => lookup((i % 2 ? b : a)!.url, ruc, jwt)));
    expect(answers.filter((x) => codeOf(x) === 'DOCUMENT_NOT_FOUND').length).toBe(4);
    expect(answers.filter((x) => codeOf(x) === 'BUDGET_EXCEEDED').length).toBe(4);
    expect(callsFor(sandbox, rucs)).toBe(4);
    for (const call of sandbox.calls) expect(call.headers.authorization).toBe(`Bearer ${PLAN}`);
    // Nothing in Redis names the plan token, the subject or the JWT in clear.
    const inspect = new Redis(redis.url);
    try {
      const keys = await inspect.keys('*');
      expect(keys.some((k) => k.includes(':budget:'))).toBe(true);
      for (const k of keys) expect(k).not.toMatch(new RegExp(`${PLAN}|two-instances|eyJ`));
      const values = await Promise.all(keys.map((k) => inspect.type(k).then((t) => (t === 'string' ? inspect.get(k) : ''))));
      expect(values.join('\n')).not.toContain(PLAN);
    } finally {
      inspect.disconnect();
    }
  });

  it('with Redis down, each instance counts on from the last count it saw: a subject who spent all 4 gets no more calls', async () => {
    const jwt = await signIn('two-instances');
    // Both instances see the subject's count again (its 4 of 4), as on any request of that subject.
    for (const [i, g] of [a!, b!].entries()) {
      expect(codeOf(await lookup(g.url, unknownRucs(1, 74_500_000 + i)[0]!, jwt))).toBe('BUDGET_EXCEEDED');
    }
    await redis.stop();
    // No longer ready, once it has seen the connection go: a load balancer sends its traffic to an instance whose count is shared.
    let seen = await readiness(a!);
    for (let i = 0; i < 50 && seen.status !== 503; i++) seen = await new Promise((r) => setTimeout(r, 100)).then(() => readiness(a!));
    expect(seen).toMatchObject({ status: 503, body: { signIn: { budgetsConnected: false } } });
    const rucs = unknownRucs(40, 74_000_000);
    const answers = await Promise.all(rucs.map((ruc, i) => lookup((i % 2 ? b : a)!.url, ruc, jwt)));
    expect(answers.map(codeOf)).toEqual(Array(40).fill('BUDGET_EXCEEDED'));
    expect(callsFor(sandbox, rucs)).toBe(0);
    // Said once, as a warning, never a stack trace: the link to Redis went down.
    expect(a!.output()).toMatch(/"level":40[^\n]*cache store down[^\n]*budgets are counted by BUDGET_WHEN_STORE_DOWN/);
    expect(a!.output() + b!.output()).not.toContain(PLAN);
  });
});

describe('BUDGET_WHEN_STORE_DOWN=refuse, with the shared count out of reach', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      sandbox: { tokens: [{ token: PLAN, plan: 'pro', quota: 1_000_000 }] },
      env: {
        AUTH_JWKS_URL: idp.jwksUrl,
        AUTH_ISSUER: idp.issuer,
        AUTH_AUDIENCE: idp.audience,
        UPSTREAM_TOKEN: PLAN,
        BUDGET_QUERIES: '1000',
        BUDGET_WHEN_STORE_DOWN: 'refuse',
        // Nothing listens there.
        REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('refuses each paid call with BUDGET_UNAVAILABLE (retryable) and makes none', async () => {
    const jwt = await signIn('store-down');
    const answer = await stack.gql(
      '{ a: contribuyente(ruc: "20100123453") { ruc } b: contribuyente(ruc: "20501234568") { ruc } }',
      {},
      {
        token: jwt,
      },
    );
    expect(answer.body.data).toEqual({ a: null, b: null });
    expect(answer.body.errors?.map((e) => e.extensions)).toEqual([
      expect.objectContaining({ code: 'BUDGET_UNAVAILABLE', retryable: true }),
      expect.objectContaining({ code: 'BUDGET_UNAVAILABLE', retryable: true }),
    ]);
    expect(stack.sandbox.callCount).toBe(0);
  });
});

describe('fairness per subject: one user’s flood does not keep another waiting for the upstream’s connections', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      sandbox: { tokens: [{ token: PLAN, plan: 'pro', quota: 1_000_000 }], latencyMs: 200 },
      env: {
        AUTH_JWKS_URL: idp.jwksUrl,
        AUTH_ISSUER: idp.issuer,
        AUTH_AUDIENCE: idp.audience,
        UPSTREAM_TOKEN: PLAN,
        UPSTREAM_CONNECTIONS: '2',
        BUDGET_QUERIES: '1000',
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('a second user’s lookup is answered within a few calls’ time while the first holds 96 calls in line', async () => {
    const flooder = await signIn('flooder');
    const rucs = unknownRucs(96, 75_000_000);
    const flood = Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        stack.gql(`{ contribuyentes(rucs: ${JSON.stringify(rucs.slice(i * 8, i * 8 + 8))}) { ruc } }`, {}, { token: flooder }),
      ),
    );
    await new Promise((r) => setTimeout(r, 300));
    const started = performance.now();
    const other = await stack.gql('{ contribuyente(ruc: "20100123453") { ruc } }', {}, { token: await signIn('patient') });
    const tookMs = performance.now() - started;
    expect(other.body.errors).toBeUndefined();
    // With the plan token as the one caller it would wait behind the whole line: 96 calls × 200 ms ÷ 2.
    expect(tookMs).toBeLessThan(3000);
    await flood;
  }, 30_000);
});

describe('AUTH_JWKS_URL=sandbox npm start: sign-in mode in a minute', () => {
  let gateway: SpawnedGateway | undefined;
  beforeAll(async () => {
    gateway = await spawnGateway({ AUTH_JWKS_URL: 'sandbox', BUDGET_QUERIES: '2' });
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('prints a ready sign-in token, puts it in GraphiQL’s Headers pane, and answers with it (not with a plan token)', async () => {
    const jwt = /Authorization: Bearer (eyJ[\w.-]+)/.exec(gateway!.output())?.[1];
    expect(jwt).toBeDefined();
    const page = await (await fetch(gateway!.url, { headers: { accept: 'text/html' } })).text();
    expect(page).toContain(`Bearer ${jwt}`);
    const answer = await lookup(gateway!.url, '20100123453', jwt!);
    expect(answer.body.data).toEqual({ contribuyente: { ruc: '20100123453' } });
    expect(answer.body.extensions?.cost).toMatchObject({ budget: { limit: 2, spent: 1 } });
    expect(codeOf(await lookup(gateway!.url, '20100123453', 'sandbox-pro'))).toBe('UNAUTHENTICATED');
    // Another subject's token, from the sandbox's sign-in route.
    const sandboxUrl = /SAMPLE DATA .* from (http:\/\/127\.0\.0\.1:\d+)/.exec(gateway!.output())![1]!;
    const { token } = (await (await fetch(`${sandboxUrl}/__sandbox/token?sub=ana`)).json()) as { token: string };
    const ana = await lookup(gateway!.url, '20501234568', token);
    expect(ana.body.extensions?.cost).toMatchObject({ budget: { limit: 2, spent: 1 } });
  });
});
