import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContribuyenteDocument } from '../../operations/generated/graphql.js';
import { startStack, type Stack } from '../helpers.js';

/**
 * The upstream's connections are shared fairly and wasted never: a token is held back only while
 * another token waits for the same capacity (max-min fairness), and capacity nobody else wants is
 * never refused. Through real sockets, every lookup a call (CACHE=off, COALESCE=off).
 */
const TOKENS = [
  { token: 'greedy', plan: 'pro' as const, quota: 1_000_000 },
  { token: 'polite', plan: 'pro' as const, quota: 1_000_000 },
];
const RUC = '20100123453';

describe('one token alone, 1,000 lookups in flight, upstream at 250 ms', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { CACHE: 'off', COALESCE: 'off' }, sandbox: { latencyMs: 250, tokens: TOKENS } });
  });
  afterAll(() => stack?.close());

  it('gets every answer: nothing is OVERLOADED while nobody else wants the capacity', async () => {
    // Answers wait until 300 calls are in flight together, however slowly a busy machine sends them.
    stack.sandbox.setFaults({ gatherInFlight: 300 });
    const answers = await Promise.all(
      Array.from({ length: 1000 }, () => stack.gql(ContribuyenteDocument, { ruc: RUC }, { token: 'greedy' })),
    );
    expect(answers.filter((a) => a.status !== 200 || a.body.errors)).toEqual([]);
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(1000);
    // They were in flight together, hundreds at a time, not a token's share of them.
    expect(stack.sandbox.peakInFlight).toBeGreaterThanOrEqual(300);
  }, 60_000);
});

describe('two tokens wanting more than the capacity (UPSTREAM_CONNECTIONS=100, upstream at 1 s)', () => {
  const LATENCY = 1000;
  const CONNECTIONS = 100;
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      env: { CACHE: 'off', COALESCE: 'off', UPSTREAM_CONNECTIONS: String(CONNECTIONS) },
      sandbox: { latencyMs: LATENCY, tokens: TOKENS },
    });
  });
  afterAll(() => stack?.close());

  async function gauge(name: string): Promise<number> {
    const text = await (await fetch(`${stack.url}/metrics`)).text();
    return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  }

  it('lets a greedy token (1,000 in flight) starve no polite one (10): its answers come within two upstream latencies and 250 ms', async () => {
    const greedy = Promise.all(Array.from({ length: 1000 }, () => stack.gql(ContribuyenteDocument, { ruc: RUC }, { token: 'greedy' })));
    // The polite token comes once the greedy one holds every connection and has the rest queued.
    while ((await gauge('gateway_upstream_calls_waiting')) + stack.sandbox.callCount < 1000) await new Promise((r) => setTimeout(r, 10));
    expect(await gauge('gateway_upstream_calls_in_flight')).toBe(CONNECTIONS);
    const started = performance.now();
    const polite = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const answer = await stack.gql(ContribuyenteDocument, { ruc: RUC }, { token: 'polite' });
        return { answer, ms: performance.now() - started };
      }),
    );
    for (const { answer } of polite) expect(answer.body.data?.contribuyente?.ruc).toBe(RUC);
    const slowest = Math.max(...polite.map((p) => p.ms));
    console.log(`polite token's slowest answer: ${slowest.toFixed(0)} ms, upstream ${LATENCY} ms`);
    // The places held when it arrived free up within one latency; then its own call. In one queue
    // for all, it would wait for the 900 greedy calls ahead: 9 latencies.
    expect(slowest).toBeLessThan(2 * LATENCY + 250);
    // The greedy token is held back, never refused: every one of its lookups is answered.
    expect((await greedy).filter((a) => a.body.errors)).toEqual([]);
    expect(stack.sandbox.peakInFlight).toBeLessThanOrEqual(CONNECTIONS);
  }, 60_000);
});
