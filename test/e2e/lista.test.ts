import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TAXPAYERS } from '../../src/sandbox/data.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { lineOf, mirrorOf, register } from '../fixtures/register.js';
import { startStack, TOKEN, unknownRucs, type Stack } from '../helpers.js';

/**
 * A supplier list checked at once: `contribuyentes(rucs)` with up to MAX_RUCS_PER_LIST RUCs, those
 * SUNAT's register holds free and priced so, the rest paid as before (at most 100 of them), and
 * @stream sending the first while the rest are read. The sandbox records every call.
 */
const ROWS = register(10_000);
const HELD = ROWS.map((r) => r.ruc);
/** RUCs the sandbox knows and the register does not hold: each a paid call. */
const PAID = TAXPAYERS.map((t) => t.ruc).filter((r) => !HELD.includes(r));
/** `n` distinct valid RUCs, none in the register: each a paid call. */
const unheld = (n: number, from: number) =>
  unknownRucs(n + 10, from)
    .filter((r) => !HELD.includes(r))
    .slice(0, n);
const LIST = 'query($rucs: [String!]!) { contribuyentes(rucs: $rucs) { ruc fuente } }';
type Body = {
  data?: { contribuyentes: ({ ruc: string; fuente: string } | null)[] } | null;
  errors?: { extensions: Record<string, unknown> }[];
  extensions?: { cost?: Record<string, number> };
};

let sandbox: Sandbox;
let dir: string;
let mirror: Awaited<ReturnType<typeof mirrorOf>>;
let stack: Stack;

beforeAll(async () => {
  sandbox = await startSandbox();
  mirror = await mirrorOf(ROWS.map(lineOf));
  dir = mkdtempSync(join(tmpdir(), 'lista-'));
  stack = await startStack({ sharedSandbox: sandbox, env: { PADRON: mirror.url, PADRON_DIR: dir, MAX_OPERATION_COST: '20' } });
  const deadline = Date.now() + 20_000;
  while (((await (await fetch(`${stack.url}/health`)).json()) as { padron: { state: string } }).padron.state !== 'ready') {
    if (Date.now() > deadline) throw new Error('the register never got ready');
    await new Promise((r) => setTimeout(r, 50));
  }
}, 30_000);
afterAll(async () => {
  await stack?.close();
  mirror?.server.close();
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

const list = async (rucs: string[]) => (await stack.gql(LIST, { rucs })).body as Body;

describe('contribuyentes(rucs) at MAX_RUCS_PER_LIST', () => {
  it('answers 10,000 RUCs the register holds, each at its position, for 0 queries and no call, priced 0 under a cost limit of 20', async () => {
    sandbox.reset();
    const rucs = [...HELD].reverse();
    const body = await list(rucs);
    expect(body.errors).toBeUndefined();
    expect(body.data!.contribuyentes.map((c) => c?.ruc)).toEqual(rucs);
    expect(body.data!.contribuyentes.every((c) => c?.fuente === 'PADRON')).toBe(true);
    expect(body.extensions?.cost).toMatchObject({ estimated: 0, queries: 0, localHits: 10_000 });
    expect(sandbox.calls).toHaveLength(0);
  });

  it('prices and caps a list alike with Cache-Control: no-cache, which sends every RUC to the service (issue 52)', async () => {
    sandbox.reset();
    const fresh = async (rucs: string[]) => (await stack.gql(LIST, { rucs }, { headers: { 'cache-control': 'no-cache' } })).body as Body;
    // 2,000 RUCs the register holds, asked fresh: 2,000 calls, over the 100 a list may send and the cost limit of 20.
    const many = await fresh(HELD.slice(0, 2_000));
    expect(many.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_INPUT' });
    expect(sandbox.calls).toHaveLength(0);
    // 30: within the 100, over the cost limit: refused before any call, priced as what would go.
    const thirty = await fresh(HELD.slice(0, 30));
    expect(thirty.errors?.[0]?.extensions).toMatchObject({ code: 'COST_LIMIT_EXCEEDED', cost: 30 });
    expect(sandbox.calls).toHaveLength(0);
    // 3: priced 3, spent 3.
    const three = await fresh(HELD.slice(0, 3));
    expect(three.extensions?.cost).toMatchObject({ estimated: three.extensions!.cost!['queries'] });
    expect(sandbox.callsTo('/ruc').length).toBeLessThanOrEqual(3);
    expect(three.extensions?.cost?.['estimated']).toBe(3);
  });

  it('refuses 10,001 RUCs with INVALID_INPUT, before anything', async () => {
    sandbox.reset();
    const body = await list([...HELD, HELD[0]!]);
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_INPUT' });
    expect(sandbox.calls).toHaveLength(0);
  });

  it('prices and pays the RUCs the register does not hold: within the cost limit they are called, over it refused before any call', async () => {
    sandbox.reset();
    const some = PAID.slice(0, 3);
    const body = await list([...HELD.slice(0, 5_000), ...some]);
    expect(body.errors).toBeUndefined();
    expect(body.extensions?.cost).toMatchObject({ estimated: some.length, queries: some.length });
    expect(sandbox.callsTo('/ruc')).toHaveLength(some.length);
    sandbox.reset();
    // 21 distinct RUCs to pay, at 1 query each, against MAX_OPERATION_COST 20.
    const many = unheld(21, 30_000_000);
    const over = await list([...HELD.slice(0, 100), ...many]);
    expect(over.errors?.[0]?.extensions).toMatchObject({ code: 'COST_LIMIT_EXCEEDED' });
    expect(sandbox.calls).toHaveLength(0);
  });

  it('refuses more than 100 RUCs the register does not hold with INVALID_INPUT, before the cost limit and any call', async () => {
    sandbox.reset();
    const body = await list([...HELD.slice(0, 1_000), ...unheld(101, 40_000_000)]);
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_INPUT' });
    expect(sandbox.calls).toHaveLength(0);
  });

  it('streams with @stream: the first items in the first part, the rest in later parts, every position once and in order', async () => {
    const res = await fetch(`${stack.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({
        query: 'query($rucs: [String!]!) { contribuyentes(rucs: $rucs) @stream(initialCount: 10) { ruc } }',
        variables: { rucs: HELD },
      }),
    });
    expect(res.headers.get('content-type')).toMatch(/multipart\/mixed/);
    const parts: { data?: { contribuyentes: { ruc: string }[] }; incremental?: { items: { ruc: string }[] }[]; hasNext?: boolean }[] = [];
    const text = await res.text();
    for (const m of text.matchAll(/^(\{.*\})\r?$/gm)) parts.push(JSON.parse(m[1]!) as (typeof parts)[number]);
    expect(parts[0]!.data!.contribuyentes).toHaveLength(10);
    expect(parts[0]!.hasNext).toBe(true);
    expect(parts.length).toBeGreaterThan(2);
    const all = [...parts[0]!.data!.contribuyentes, ...parts.slice(1).flatMap((p) => (p.incremental ?? []).flatMap((i) => i.items ?? []))];
    expect(all.map((c) => c.ruc)).toEqual(HELD);
  });
});
