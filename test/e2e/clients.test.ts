import { ApolloClient, CombinedGraphQLErrors, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Client, fetchExchange } from '@urql/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startStack, TOKEN, type Stack } from '../helpers.js';

/** One query with a field that fails (a RUC whose check digit is wrong) beside one that resolves. */
const PARTIAL = `query Parcial { contribuyente(ruc: "20100123453") { ruc nombreORazonSocial } otro: contribuyente(ruc: "20100123454") { ruc } }`;

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());
beforeEach(() => stack.sandbox.reset());

describe('@urql/core as it comes (queries as GET)', () => {
  it('reads partial data and the failing field’s code and retryable flag, with the bearer token', async () => {
    const client = new Client({
      url: `${stack.url}/graphql`,
      exchanges: [fetchExchange],
      fetchOptions: { headers: { authorization: `Bearer ${TOKEN}` } },
    });
    const result = await client.query(PARTIAL, {}).toPromise();
    expect(result.data).toEqual({ contribuyente: { ruc: '20100123453', nombreORazonSocial: 'COMERCIAL ANDINA S.A.C.' }, otro: null });
    expect(result.error?.graphQLErrors.map((e) => [e.path, e.extensions])).toEqual([
      [['otro'], { code: 'INVALID_INPUT', retryable: false }],
    ]);
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(1);
  });

  it('still refuses a GET with neither a token nor a preflight-forcing header', async () => {
    const client = new Client({ url: `${stack.url}/graphql`, exchanges: [fetchExchange] });
    const result = await client.query(PARTIAL, {}).toPromise();
    expect(result.error?.graphQLErrors[0]?.extensions).toMatchObject({ code: 'CSRF_HEADER_REQUIRED' });
    expect(stack.sandbox.calls).toHaveLength(0);
  });
});

describe('@apollo/client as it comes', () => {
  for (const useGETForQueries of [false, true]) {
    it(`reads partial data and the failing field’s code and retryable flag (${useGETForQueries ? 'GET' : 'POST'})`, async () => {
      const client = new ApolloClient({
        link: new HttpLink({ uri: `${stack.url}/graphql`, headers: { authorization: `Bearer ${TOKEN}` }, useGETForQueries }),
        cache: new InMemoryCache(),
      });
      const result = await client.query({ query: gql(PARTIAL), errorPolicy: 'all' });
      expect(result.data).toMatchObject({ contribuyente: { ruc: '20100123453' }, otro: null });
      expect(CombinedGraphQLErrors.is(result.error)).toBe(true);
      const errors = (result.error as CombinedGraphQLErrors).errors;
      expect(errors.map((e) => [e.path, e.extensions])).toEqual([[['otro'], { code: 'INVALID_INPUT', retryable: false }]]);
      expect(stack.sandbox.callsTo('/ruc')).toHaveLength(1);
    });
  }
});
