import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ContribuyenteDocument, ValidarComprobantesDocument } from '../../operations/generated/graphql.js';
import { ERROR_CODES } from '../../src/errors.js';
import { TRIGGERS } from '../../src/sandbox/data.js';
import { post, RECEIPT, startStack, type Stack } from '../helpers.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());
beforeEach(() => stack.sandbox.reset());

describe('smaller contract gaps', () => {
  it('answers a subscription asked for without SSE with a code of its own, HTTP 406, and no call', async () => {
    const res = await post(`${stack.url}/graphql`, { query: 'subscription { cambiosPadron(rucs: ["20100123453"]) { ruc } }' });
    const body = (await res.json()) as { errors?: { extensions: unknown }[] };
    expect(res.status).toBe(406);
    expect(body.errors?.map((e) => e.extensions)).toEqual([{ code: 'OPERATION_NOT_SUPPORTED', retryable: false }]);
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('makes a count GraphQL cannot represent an UPSTREAM_ERROR of its call (here the only one), logged, never INTERNAL_SERVER_ERROR', async () => {
    const { body } = await stack.gql(ValidarComprobantesDocument, { comprobantes: [{ ...RECEIPT, rucEmisor: TRIGGERS.hugeCount.ruc }] });
    expect(body.errors).toHaveLength(1);
    expect(body.errors?.[0]).toMatchObject({
      path: ['validarComprobantes'],
      extensions: { code: 'UPSTREAM_ERROR', retryable: false },
    });
    expect(stack.sandbox.calls).toHaveLength(1);
    expect(stack.logs.join('')).toContain('"msg":"upstream failure"');
  });

  it('names the network cause of an upstream failure in its log line (a wrong UPSTREAM_URL shows)', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const wrong = await startStack({ env: { UPSTREAM_URL: `http://127.0.0.1:${port}`, UPSTREAM_RETRIES: '0' } });
    try {
      const { body } = await wrong.gql(ContribuyenteDocument, { ruc: '20100123453' });
      expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });
      const line = wrong.logs.find((l) => l.includes('"msg":"upstream failure"'));
      expect(line).toContain('"cause":"ECONNREFUSED"');
    } finally {
      await wrong.close();
    }
  });

  it('emits only codes of the ErrorCode enum, whatever the request', async () => {
    const requests: (() => Promise<{ errors?: { extensions?: Record<string, unknown> }[] }>)[] = [
      async () => (await stack.gql('{ nope }')).body,
      async () => (await stack.gql('{ contribuyente(ruc: ')).body,
      async () => (await stack.gql('query($r: String!) { contribuyente(ruc: $r) { ruc } }', { r: 1 } as never)).body,
      async () => (await stack.gql(ContribuyenteDocument, { ruc: '20100123453' }, { token: null })).body,
      async () => (await fetch(`${stack.url}/graphql`, { method: 'PUT' })).json(),
      async () => (await post(`${stack.url}/graphql`, '{', { token: null })).json(),
      async () => (await post(`${stack.url}/graphql`, '[]', { token: null })).json(),
      async () => (await fetch(`${stack.url}/graphql?query={__typename}`)).json(),
      async () => (await fetch(`${stack.url}/nowhere`)).json(),
      async () => (await stack.gql('subscription { x }')).body,
      async () => (await post(`${stack.url}/graphql`, { query: 'query A { __typename }', operationName: 'B' }, { token: null })).json(),
    ];
    for (const send of requests) {
      const body = await send();
      expect(body.errors?.length).toBeGreaterThan(0);
      for (const e of body.errors ?? []) expect(Object.keys(ERROR_CODES)).toContain(e.extensions?.['code']);
    }
  });
});
