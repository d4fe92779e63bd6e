import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ContribuyenteDocument } from '../../operations/generated/graphql.js';
import { post, startStack, type Stack } from '../helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const RUCS = ['20100123453', '20501234568', '20602345671', '20603456786', '20484567892', '20555678909', '20136789016', '20457890126'];

/** A POST whose client leaves after `ms`. */
function leaving(stack: Stack, query: string, ms: number, variables: Record<string, unknown> = {}) {
  return post(`${stack.url}/graphql`, { query, variables }, { signal: AbortSignal.timeout(ms) }).catch(() => undefined);
}

describe('MAX_CONCURRENT_REQUESTS: overload is shed at once, never queued', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { MAX_CONCURRENT_REQUESTS: '3' }, sandbox: { latencyMs: 300 } });
  });
  afterAll(() => stack.close());
  beforeEach(() => stack.sandbox.reset());

  it('answers what is past the bound with 503 OVERLOADED, retryable, with Retry-After, before any call', async () => {
    // A second for the admitted ones, so that all eight arrive while they are in flight on a busy machine.
    stack.sandbox.setFaults({ latencyMs: 1000 });
    const started = Date.now();
    const answers = await Promise.all(
      RUCS.map(async (ruc) => {
        const res = await stack.gql(ContribuyenteDocument, { ruc });
        return { ...res, after: Date.now() - started };
      }),
    );
    const shed = answers.filter((a) => a.status === 503);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(3);
    expect(shed).toHaveLength(5);
    for (const a of shed) {
      expect(a.headers.get('retry-after')).toBe('1');
      expect(a.body.errors?.[0]?.extensions).toEqual({ code: 'OVERLOADED', retryable: true });
      expect(a.after).toBeLessThan(800); // at once, not after the second the admitted ones take
    }
    stack.sandbox.setFaults({});
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(3);
    const metrics = await (await fetch(`${stack.url}/metrics`)).text();
    expect(metrics).toContain('gateway_errors_total{code="OVERLOADED"} 5');
  });

  it('keeps /health, /ready and /metrics answering while every place is taken', async () => {
    const busy = RUCS.slice(0, 3).map((ruc) => stack.gql(ContribuyenteDocument, { ruc }));
    await sleep(50);
    for (const path of ['/health', '/ready', '/metrics']) expect((await fetch(stack.url + path)).status).toBe(200);
    await Promise.all(busy);
  });

  it('holds a place until the work ends, even when its client has left', async () => {
    // Three clients leave after 50 ms; their calls take 300 ms.
    const gone = RUCS.slice(0, 3).map((ruc) => leaving(stack, '{ contribuyente(ruc: "' + ruc + '") { ruc } }', 50));
    await Promise.all(gone);
    const meanwhile = await stack.gql(ContribuyenteDocument, { ruc: RUCS[3]! });
    expect(meanwhile.status).toBe(503);
    await sleep(400);
    const after = await stack.gql(ContribuyenteDocument, { ruc: RUCS[3]! });
    expect(after.status).toBe(200);
  });
});

describe('when the client leaves, its work stops', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ sandbox: { latencyMs: 500 } });
  });
  afterAll(() => stack.close());

  it('sends none of the calls not yet sent: a 40-RUC request aborted after 700 ms makes 16 calls, not 40', async () => {
    const rucs = [...RUCS, ...manyRucs(32)];
    await leaving(stack, 'query($rucs: [String!]!) { contribuyentes(rucs: $rucs) { ruc } }', 700, { rucs });
    await sleep(1500);
    // UPSTREAM_CONCURRENCY (8) at a time: two rounds had started when the client left.
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(16);
  });
});

/** `n` valid, distinct RUCs that the sandbox does not know (each answers 404, billed). */
function manyRucs(n: number): string[] {
  const weights = [5, 4, 3, 2, 7, 6, 5, 4, 3, 2];
  return Array.from({ length: n }, (_, i) => {
    const base = `2080${String(i).padStart(6, '0')}`;
    const rest = 11 - ([...base].reduce((acc, d, j) => acc + Number(d) * weights[j]!, 0) % 11);
    return base + (rest === 10 ? 0 : rest === 11 ? 1 : rest);
  });
}
