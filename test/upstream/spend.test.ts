import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startStack, TOKEN, type Stack } from '../helpers.js';

/** Eight companies of the sandbox. */
const COMPANIES = ['20100123453', '20501234568', '20602345671', '20603456786', '20484567892', '20555678909', '20136789016', '20457890126'];
const LIMIT = 100;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ env: { MAX_OPERATION_COST: String(LIMIT) } });
});
afterAll(() => stack.close());
afterEach(() => {
  stack.sandbox.setFaults({});
  stack.sandbox.reset();
});

const cost = (body: { extensions?: Record<string, unknown> }) => body.extensions?.['cost'] as Record<string, number>;

describe('the cost limit holds at run time, whatever the lists turn out to hold', () => {
  it('spends at most MAX_OPERATION_COST when each of 8 companies lists 150 representatives, and the rest of the operation answers', async () => {
    stack.sandbox.setFaults({ representativesPerCompany: 150 });
    const before = stack.sandbox.quotaOf(TOKEN)!;
    const { body } = await stack.gql(
      `query ($rucs: [String!]!) { contribuyentes(rucs: $rucs) { ruc representantes { numeroDeDocumento persona { nombres } } } }`,
      { rucs: COMPANIES },
    );
    const billed = before - stack.sandbox.quotaOf(TOKEN)!;
    // The estimate let it through (8 + 8 + 8 × the assumed list size), and the run stopped at the limit.
    expect(cost(body)['estimated']).toBeLessThanOrEqual(LIMIT);
    expect(billed).toBe(LIMIT);
    expect(cost(body)['queries']).toBe(billed);
    expect(stack.sandbox.callCount).toBe(LIMIT);
    // Every company and every list answers: 84 persons were looked up (the sandbox knows none of
    // them: 404, billed) and the 1,116 past the limit are COST_LIMIT_EXCEEDED, each alone.
    const list = (body.data as { contribuyentes: { ruc: string; representantes: unknown[] }[] }).contribuyentes;
    expect(list.map((c) => c.ruc)).toEqual(COMPANIES);
    for (const c of list) expect(c.representantes).toHaveLength(150);
    const byCode = new Map<unknown, number>();
    for (const e of body.errors ?? []) {
      byCode.set(e.extensions?.['code'], (byCode.get(e.extensions?.['code']) ?? 0) + 1);
      expect(e.path).toEqual(['contribuyentes', expect.any(Number), 'representantes', expect.any(Number), 'persona']);
    }
    expect(Object.fromEntries(byCode)).toEqual({ DOCUMENT_NOT_FOUND: LIMIT - 16, COST_LIMIT_EXCEEDED: 8 * 150 - (LIMIT - 16) });
    const refused = body.errors!.find((e) => e.extensions?.['code'] === 'COST_LIMIT_EXCEEDED')!;
    expect(refused.extensions).toMatchObject({ retryable: false, limit: LIMIT });
    expect(refused.message).toContain('MAX_OPERATION_COST');
  });

  it('counts a lookup the registry did not bill as not spent', async () => {
    const before = stack.sandbox.quotaOf(TOKEN)!;
    // 503s are not billed: they leave the allowance as it was for the lookups after them.
    stack.sandbox.setFaults({ failNext: 3 });
    const { body } = await stack.gql(`{ a: contribuyente(ruc: "20100123453") { ruc } b: contribuyente(ruc: "20501234568") { ruc } }`);
    expect(before - stack.sandbox.quotaOf(TOKEN)!).toBe(cost(body)['queries']);
    expect(body.errors?.map((e) => e.extensions?.['code']) ?? []).not.toContain('COST_LIMIT_EXCEEDED');
  });
});
