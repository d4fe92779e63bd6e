import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { INTROSPECTION_MAX_DEPTH, MAX_NESTING } from '../../src/pipeline/limits.js';
import { ContribuyentesDocument, ValidarComprobantesDocument } from '../../operations/generated/graphql.js';
import { TAXPAYERS } from '../../src/sandbox/data.js';
import { post, codes, RECEIPT, startStack, TOKEN, type Stack } from '../helpers.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ env: { MAX_ALIASES: '3', MAX_DIRECTIVES: '2', MAX_TOKENS: '3000', MAX_BODY_BYTES: '20000' } });
});
afterAll(() => stack.close());
beforeEach(() => stack.sandbox.reset());

/** 120 valid, distinct RUCs: the sample data's plus check-digit-correct unknown ones. */
function manyRucs(n: number): string[] {
  const weights = [5, 4, 3, 2, 7, 6, 5, 4, 3, 2];
  const rucs = TAXPAYERS.map((t) => t.ruc);
  for (let i = 0; rucs.length < n; i++) {
    const base = `2070${String(i).padStart(6, '0')}`;
    const sum = [...base].reduce((acc, d, j) => acc + Number(d) * weights[j]!, 0);
    const digit = (11 - (sum % 11)) % 10 === 0 && 11 - (sum % 11) === 11 ? 1 : (11 - (sum % 11)) % 10;
    rucs.push(base + digit);
  }
  return rucs.slice(0, n);
}

describe('limits checked before execution, each a typed error with no upstream call', () => {
  it('depth over MAX_DEPTH is DEPTH_LIMIT_EXCEEDED', async () => {
    const shallow = await startStack({ env: { MAX_DEPTH: '2' } });
    try {
      const { body } = await shallow.gql('{ contribuyente(ruc: "20100123453") { detalle { ruc } } }');
      expect(codes(body)).toEqual(['DEPTH_LIMIT_EXCEEDED']);
      expect(body.errors?.[0]?.extensions?.['retryable']).toBe(false);
      expect(shallow.sandbox.calls).toHaveLength(0);
      const ok = await shallow.gql('{ contribuyente(ruc: "20100123453") { ruc } }');
      expect(ok.body.errors).toBeUndefined();
    } finally {
      await shallow.close();
    }
  });

  it('aliases over MAX_ALIASES are ALIAS_LIMIT_EXCEEDED, and the message points to contribuyentes', async () => {
    const query = `{ ${[0, 1, 2, 3].map((i) => `a${i}: contribuyente(ruc: "20100123453") { ruc }`).join(' ')} }`;
    const { body } = await stack.gql(query);
    expect(codes(body)).toEqual(['ALIAS_LIMIT_EXCEEDED']);
    expect(body.errors?.[0]?.message).toContain('contribuyentes(rucs');
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('directives over MAX_DIRECTIVES are DIRECTIVE_LIMIT_EXCEEDED', async () => {
    const { body } = await stack.gql(
      '{ contribuyente(ruc: "20100123453") @include(if: true) @skip(if: false) @include(if: true) { ruc } }',
    );
    expect(codes(body)).toContain('DIRECTIVE_LIMIT_EXCEEDED');
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('tokens over MAX_TOKENS are TOKEN_LIMIT_EXCEEDED', async () => {
    const query = `{ contribuyente(ruc: "20100123453") { ${'ruc '.repeat(3000)} } }`;
    const { body } = await stack.gql(query);
    expect(codes(body)).toEqual(['TOKEN_LIMIT_EXCEEDED']);
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('a body over MAX_BODY_BYTES gets HTTP 413 REQUEST_ENTITY_TOO_LARGE', async () => {
    const { status, body } = await stack.gql(ContribuyentesDocument, { rucs: Array.from({ length: 2000 }, () => '20100123453') });
    expect(status).toBe(413);
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'REQUEST_ENTITY_TOO_LARGE', retryable: false });
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('operation batching is off: a JSON array body is a typed 4xx', async () => {
    const res = await post(`${stack.url}/graphql`, [
      { query: '{ contribuyente(ruc: "20100123453") { ruc } }' },
      { query: '{ __typename }' },
    ]);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    const body = (await res.json()) as { errors: { extensions: Record<string, unknown> }[] };
    expect(body.errors[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', retryable: false });
    expect(stack.sandbox.calls).toHaveLength(0);
  });
});

describe('plan-cost limit (MAX_OPERATION_COST, default 100)', () => {
  it('lets one full contribuyentes list of 100 RUCs through, and reports its cost', async () => {
    const { body } = await stack.gql(ContribuyentesDocument, { rucs: manyRucs(100) });
    expect(body.errors?.some((e) => e.extensions?.['code'] === 'COST_LIMIT_EXCEEDED')).toBeFalsy();
    // 14 found and 86 not found: the spec bills every answered lookup, 404 included.
    expect(body.extensions?.['cost']).toEqual({ estimated: 100, limit: 100, queries: 100, upstreamCalls: 100, cacheHits: 0, staleHits: 0 });
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(100);
  });

  it('lets one full batch of 100 receipts through', async () => {
    const { body } = await stack.gql(ValidarComprobantesDocument, { comprobantes: Array.from({ length: 100 }, () => RECEIPT) });
    expect(body.data?.validarComprobantes?.cantidadDeComprobantes).toBe(100);
    expect(body.extensions?.['cost']).toEqual({ estimated: 100, limit: 100, queries: 100, upstreamCalls: 1, cacheHits: 0, staleHits: 0 });
  });

  it('refuses 60 RUCs with their detalle (120 queries) before any call', async () => {
    const rucs = manyRucs(60);
    const { body } = await stack.gql(`query($rucs: [String!]!) { contribuyentes(rucs: $rucs) { ruc detalle { ruc } } }`, { rucs });
    expect(codes(body)).toEqual(['COST_LIMIT_EXCEEDED']);
    expect(body.errors?.[0]?.extensions).toMatchObject({ retryable: false, cost: 120, limit: 100 });
    expect(body.errors?.[0]?.message).toContain('120');
    expect(body.extensions?.['cost']).toEqual({ estimated: 120, limit: 100, queries: 0, upstreamCalls: 0, cacheHits: 0, staleHits: 0 });
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('counts distinct keys only, licences double, and invalid keys not at all', async () => {
    const { body } = await stack.gql(`{
      a: contribuyente(ruc: "20100123453") { ruc detalle { ruc } }
      b: contribuyenteDetalle(ruc: " 20100123453 ") { ruc }
      c: licencia(numLicencia: "Q46779354") { nombres }
    }`);
    // 1 /ruc + 1 /ruc-sunat + 2 for the licence.
    expect(body.extensions?.['cost']).toEqual({ estimated: 4, limit: 100, queries: 4, upstreamCalls: 3, cacheHits: 0, staleHits: 0 });
    const bad = await stack.gql(`{ contribuyente(ruc: "123") { ruc } }`);
    expect(bad.body.extensions?.['cost']).toEqual({ estimated: 0, limit: 100, queries: 0, upstreamCalls: 0, cacheHits: 0, staleHits: 0 });
  });

  it('estimates an inline document once and the same each time, and a variable inside a list on every run', async () => {
    const inline = `{ a: contribuyente(ruc: "20100123453") { ruc detalle { ruc } } b: contribuyente(ruc: "20501234568") { ruc } }`;
    for (let i = 0; i < 3; i++) {
      const { body } = await stack.gql(inline);
      expect(body.extensions?.['cost']).toMatchObject({ estimated: 3 });
    }
    // The list literal is fixed in length but not in content: "the same RUC twice" costs less.
    const mixed = `query($r: String!) { contribuyentes(rucs: ["20100123453", $r]) { ruc } }`;
    expect((await stack.gql(mixed, { r: '20501234568' })).body.extensions?.['cost']).toMatchObject({ estimated: 2 });
    expect((await stack.gql(mixed, { r: '20100123453' })).body.extensions?.['cost']).toMatchObject({ estimated: 1 });
    expect((await stack.gql(mixed, { r: '20501234568' })).body.extensions?.['cost']).toMatchObject({ estimated: 2 });
  });

  it('counts default values of variables as the resolvers will get them', async () => {
    const { body } = await stack.gql(`query($r: String! = "20100123453") { contribuyente(ruc: $r) { detalle { ruc } } }`, {});
    expect(body.extensions?.['cost']).toEqual({ estimated: 2, limit: 100, queries: 2, upstreamCalls: 2, cacheHits: 0, staleHits: 0 });
    // A variable sent overrides its default.
    const sent = await stack.gql(`query($r: String! = "20100123453") { contribuyente(ruc: $r) { ruc } }`, { r: 'no es un RUC' });
    expect(sent.body.extensions?.['cost']).toMatchObject({ estimated: 0, upstreamCalls: 0 });
  });

  it('counts one receipt given where a list is expected, as graphql-js coerces it', async () => {
    const { body } = await stack.gql(ValidarComprobantesDocument, { comprobantes: RECEIPT as never });
    expect(body.data?.validarComprobantes?.cantidadDeComprobantes).toBe(1);
    expect(body.extensions?.['cost']).toMatchObject({ estimated: 1, queries: 1 });
  });

  it('refuses 1,300 RUCs given as default values before any call', async () => {
    const rucs = manyRucs(1300);
    const defs = Array.from({ length: 13 }, (_, i) => `$l${i}: [String!]! = ${JSON.stringify(rucs.slice(i * 100, i * 100 + 100))}`);
    const fields = Array.from({ length: 13 }, (_, i) => `f${i}: contribuyentes(rucs: $l${i}) { ruc }`);
    const wide = await startStack({ env: { MAX_ALIASES: '20', MAX_TOKENS: '100000', MAX_BODY_BYTES: '200000' } });
    try {
      const { body } = await wide.gql(`query(${defs.join(', ')}) { ${fields.join(' ')} }`, {});
      expect(codes(body)).toEqual(['COST_LIMIT_EXCEEDED']);
      expect(body.extensions?.['cost']).toMatchObject({ estimated: 1300, queries: 0, upstreamCalls: 0 });
      expect(wide.sandbox.calls).toHaveLength(0);
    } finally {
      await wide.close();
    }
  });

  it('reads values through fragments, inline fragments, lists mixing literals and variables, and counts @skip as spent', async () => {
    const rucs = manyRucs(4);
    const { body } = await stack.gql(
      `query($a: String!, $skip: Boolean! = true, $lista: [String!]! = ["${rucs[3]}"]) {
        ...Raiz
        ... on Query { b: contribuyenteDetalle(ruc: $a) @skip(if: $skip) { ruc } }
        c: contribuyentes(rucs: [$a, "${rucs[1]}"]) { ruc }
        d: contribuyentes(rucs: $lista) { ruc }
      }
      fragment Raiz on Query { contribuyente(ruc: "${rucs[2]}") { detalle { ruc } } }`,
      { a: rucs[0] },
    );
    expect(body.errors).toBeUndefined();
    // /ruc: rucs 0, 1, 2, 3; /ruc-sunat: 2 (detalle) and 0 (skipped, still counted as a bound).
    expect(body.extensions?.['cost']).toMatchObject({ estimated: 6, limit: 100 });
    expect(stack.sandbox.calls.length).toBeLessThanOrEqual(6);
  });

  it('leaves a list over its own limit to INVALID_INPUT with the contract message', async () => {
    const small = await startStack({ sharedSandbox: stack.sandbox, env: { MAX_RECEIPTS: '50' } });
    const { body } = await small.gql(ValidarComprobantesDocument, { comprobantes: Array.from({ length: 51 }, () => RECEIPT) });
    await small.close();
    expect(codes(body)).toEqual(['INVALID_INPUT']);
    expect(body.errors?.[0]?.message).toBe('Enviar máximo 50 comprobantes por consulta (MAX_RECEIPTS).');
    const rucs = await stack.gql(ContribuyentesDocument, { rucs: manyRucs(101) });
    expect(codes(rucs.body)).toEqual(['INVALID_INPUT']);
    expect(stack.sandbox.calls).toHaveLength(0);
  });
});

describe('depth counts fields within fields', () => {
  it('adds nothing for a fragment or an inline fragment (where @defer goes), and still refuses real depth', async () => {
    const { body } = await stack.gql(
      `{ contribuyente(ruc: "20100123453") { ...F } }
      fragment F on Contribuyente { ... on Contribuyente { detalle { ...G } } }
      fragment G on ContribuyenteDetalle { ... on ContribuyenteDetalle { ... { ruc } } }`,
    );
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({ contribuyente: { detalle: { ruc: '20100123453' } } });
    const shallow = await startStack({ sharedSandbox: stack.sandbox, env: { MAX_DEPTH: '2' } });
    const deep = await shallow.gql(`{ contribuyente(ruc: "20100123453") { ...F } } fragment F on Contribuyente { detalle { ruc } }`);
    await shallow.close();
    expect(codes(deep.body)).toEqual(['DEPTH_LIMIT_EXCEEDED']);
  });
});

describe('introspection has bounds too', () => {
  it("answers the standard introspection query (graphql-js's, GraphiQL's and codegen's), with every option", async () => {
    for (const options of [
      {},
      {
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        schemaDescription: true,
        inputValueDeprecation: true,
        oneOf: true,
      },
    ]) {
      const { body } = await stack.gql(getIntrospectionQuery(options), undefined, { token: null });
      expect(body.errors).toBeUndefined();
      expect((body.data as { __schema: { types: unknown[] } }).__schema.types.length).toBeGreaterThan(10);
    }
  });

  it(`refuses introspection nested deeper than ${INTROSPECTION_MAX_DEPTH}, and a document nested hundreds deep as it is parsed`, async () => {
    const nested = (n: number) => `{ __schema { types { ${'ofType { '.repeat(n)} name ${'} '.repeat(n)} } } }`;
    const deep = await stack.gql(nested(INTROSPECTION_MAX_DEPTH), undefined, { token: null });
    expect(deep.body.errors?.[0]?.extensions).toMatchObject({ code: 'DEPTH_LIMIT_EXCEEDED', retryable: false });
    expect(deep.body.errors?.[0]?.message).toContain(`el máximo es ${INTROSPECTION_MAX_DEPTH}`);
    const hostile = await stack.gql(nested(990), undefined, { token: null });
    expect(hostile.body.errors?.[0]?.extensions).toMatchObject({ code: 'DEPTH_LIMIT_EXCEEDED', retryable: false });
    expect(hostile.body.errors?.[0]?.message).toContain(`el máximo es ${MAX_NESTING}`);
    const typeDeep = await stack.gql(
      `{ __type(name: "Query") { ${'fields { type { '.repeat(12)} name ${'} } '.repeat(12)} } }`,
      undefined,
      { token: null },
    );
    expect(codes(typeDeep.body)).toContain('DEPTH_LIMIT_EXCEEDED');
  });

  it('counts aliases of __typename like any other', async () => {
    const { body } = await stack.gql(`{ ${Array.from({ length: 4 }, (_, i) => `t${i}: __typename`).join(' ')} }`, undefined, {
      token: null,
    });
    expect(codes(body)).toEqual(['ALIAS_LIMIT_EXCEEDED']);
  });
});

describe('browser safety', () => {
  it('refuses a simple (non-preflighted) POST with neither a token nor the CSRF header with a typed 403', async () => {
    const res = await fetch(`${stack.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ query: '{ contribuyente(ruc: "20100123453") { ruc } }' }),
    });
    expect(res.status).toBe(403);
    const body = (await res.json()) as { errors: { extensions: Record<string, unknown> }[] };
    expect(body.errors[0]?.extensions).toMatchObject({ code: 'CSRF_HEADER_REQUIRED', retryable: false });
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('lets a GET query through when it carries a bearer token or the CSRF header, and refuses it with neither', async () => {
    const url = `${stack.url}/graphql?query=${encodeURIComponent('{ contribuyente(ruc: "20100123453") { ruc } }')}`;
    const refused = await fetch(url, { headers: { accept: 'application/json' } });
    expect(refused.status).toBe(403);
    const withToken = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/json' } });
    expect(((await withToken.json()) as { data: unknown }).data).toEqual({ contribuyente: { ruc: '20100123453' } });
    // The CSRF header alone passes the check; with no token the lookup is then UNAUTHENTICATED.
    const withHeader = await fetch(url, { headers: { accept: 'application/json', 'x-graphql-yoga-csrf': '1' } });
    expect(((await withHeader.json()) as { errors: { extensions: { code: string } }[] }).errors[0]?.extensions.code).toBe(
      'UNAUTHENTICATED',
    );
  });

  it('answers CORS preflights for any origin by default, without credentials', async () => {
    const res = await fetch(`${stack.url}/graphql`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.pe',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(res.status).toBeLessThan(300);
    expect(res.headers.get('access-control-allow-origin')).toMatch(/^(\*|https:\/\/app\.example\.pe)$/);
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    expect(res.headers.get('access-control-allow-credentials')).not.toBe('true');
  });
});

describe('CORS_ORIGINS and production', () => {
  let prod: Stack;
  beforeAll(async () => {
    prod = await startStack({ env: { NODE_ENV: 'production', CORS_ORIGINS: 'https://app.example.pe, https://bff.example.pe' } });
  });
  afterAll(() => prod.close());

  it('allows only the listed origins', async () => {
    const preflight = (origin: string) =>
      fetch(`${prod.url}/graphql`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
    expect((await preflight('https://bff.example.pe')).headers.get('access-control-allow-origin')).toBe('https://bff.example.pe');
    expect((await preflight('https://evil.example.com')).headers.get('access-control-allow-origin')).toBeNull();
  });

  it('hides field suggestions in production', async () => {
    const { body } = await prod.gql('{ contribuyente(ruc: "20100123453") { nombreORazonSocia } }');
    expect(codes(body)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    expect(body.errors?.[0]?.message).not.toContain('Did you mean');
    const dev = await stack.gql('{ contribuyente(ruc: "20100123453") { nombreORazonSocia } }');
    expect(dev.body.errors?.[0]?.message).toContain('Did you mean');
  });
});
