import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postBodyOnce, startStack, unknownRucs, type Stack } from '../helpers.js';

const LOOKUP = 'query($r: String!) { contribuyente(ruc: $r) { ruc } }';
const lookup = (stack: Stack, ruc: string, token: string) =>
  postBodyOnce(`${stack.url}/graphql`, { query: LOOKUP, variables: { r: ruc } }, { token });
const outcome = (a: { status: number; body: { errors?: { extensions?: Record<string, unknown> }[] } }) =>
  a.body.errors?.[0]?.extensions?.['code'] ?? a.status;

/** MAX_CONCURRENT_REQUESTS is shared among callers: one caller's flood is what is refused. */
describe('no caller locks another out (MAX_CONCURRENT_REQUESTS=100)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { MAX_CONCURRENT_REQUESTS: '100', CACHE: 'on' } });
  });
  afterAll(() => stack.close());

  it('answers another token’s 20 cached lookups while one token has 500 slow lookups in flight', async () => {
    // The other token's record is in the cache already.
    expect(outcome(await lookup(stack, '20100123453', 'sandbox-free'))).toBe(200);
    // Long enough that the whole flood is sent before its first answer, on a busy machine too.
    stack.sandbox.setFaults({ latencyMs: 4000 });
    const flood = Promise.all(unknownRucs(500).map((ruc) => lookup(stack, ruc, 'sandbox-pro')));
    // The flood's first hundred are in flight, holding every place.
    for (let i = 0; i < 100 && stack.sandbox.peakInFlight < 100; i++) await new Promise((r) => setTimeout(r, 50));
    const others = await Promise.all(Array.from({ length: 20 }, () => lookup(stack, '20100123453', 'sandbox-free')));
    expect(others.map(outcome)).toEqual(Array(20).fill(200));
    const flooded = (await flood).map(outcome);
    stack.sandbox.setFaults({});
    // The flood itself is what was refused: the places it held, it kept (a slow sender may see a few freed).
    expect(flooded.filter((c) => c !== 'DOCUMENT_NOT_FOUND' && c !== 'OVERLOADED')).toEqual([]);
    expect(flooded.filter((c) => c === 'DOCUMENT_NOT_FOUND').length).toBeGreaterThanOrEqual(100);
    expect(flooded.filter((c) => c === 'OVERLOADED').length).toBeGreaterThanOrEqual(300);
  });

  it('lets a lone caller use every place', async () => {
    stack.sandbox.reset();
    stack.sandbox.setFaults({ latencyMs: 500 });
    const answers = (await Promise.all(unknownRucs(100, 80_000_000).map((ruc) => lookup(stack, ruc, 'sandbox-pro')))).map(outcome);
    stack.sandbox.setFaults({});
    expect(answers).toEqual(Array(100).fill('DOCUMENT_NOT_FOUND'));
  });
});
