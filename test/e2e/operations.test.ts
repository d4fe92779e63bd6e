import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, startStack, type Stack } from '../helpers.js';

/** One document holding several operations, asked for each in turn, runs the one asked for, every time. */
describe('a document with several operations', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  const DOCUMENT = 'query A { a: __typename } query B { b: __typename } query C($ruc: String!) { contribuyente(ruc: $ruc) { ruc } }';

  async function run(operationName: string, variables?: Record<string, unknown>) {
    const res = await post(`${stack.url}/graphql`, { query: DOCUMENT, operationName, variables });
    return (await res.json()) as { data?: unknown; errors?: unknown[] };
  }

  it('runs the operation asked for, every time', async () => {
    for (let round = 0; round < 4; round++) {
      expect((await run('A')).data).toEqual({ a: 'Query' });
      expect((await run('B')).data).toEqual({ b: 'Query' });
      const c = await run('C', { ruc: '20100123453' });
      expect(c.errors).toBeUndefined();
      expect(c.data).toEqual({ contribuyente: { ruc: '20100123453' } });
    }
  });
});
