import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ContribuyenteDocument, ValidarComprobantesTextoDocument } from '../../operations/generated/graphql.js';
import { TRIGGERS } from '../../src/sandbox/data.js';
import { post, startStack, TOKEN, type Stack } from '../helpers.js';

const LINE = '20100123453|01|F001|1532|2026-10-01|1180.00';
const SOL_USER = 'USUARIOSECRETO';
const SOL_KEY = 'claveMuySecreta123';

let dev: Stack;
let prod: Stack;
beforeAll(async () => {
  dev = await startStack();
  prod = await startStack({ env: { NODE_ENV: 'production' } });
});
afterAll(async () => {
  await dev.close();
  await prod.close();
});
beforeEach(() => {
  dev.sandbox.reset();
  prod.sandbox.reset();
});

/** Everything a caller or an operator could read of one request: the answer, and every log line. */
const everything = (stack: Stack, body: unknown) => JSON.stringify(body) + stack.logs.join('');

describe('values of secret inputs never appear in a message or a log line', () => {
  const malformed: [string, Record<string, unknown>][] = [
    ['an extra field', { rucEmpresa: '20100123453', usuario: SOL_USER, clave: SOL_KEY, extra: 1 }],
    ['a wrong type', { rucEmpresa: '20100123453', usuario: SOL_USER, clave: 123456789 }],
    ['a field missing', { usuario: SOL_USER, clave: SOL_KEY }],
    ['a misspelt field', { rucEmpresa: '20100123453', usuario: SOL_USER, clav: SOL_KEY }],
  ];
  for (const stack of ['dev', 'prod'] as const) {
    for (const [what, credencialesSol] of malformed) {
      it(`a credencialesSol variable with ${what} is BAD_USER_INPUT naming the field, never the values (${stack})`, async () => {
        const s = stack === 'dev' ? dev : prod;
        const { body } = await s.gql(ValidarComprobantesTextoDocument, { comprobantes: [LINE], credencialesSol: credencialesSol as never });
        expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', retryable: false });
        expect(body.errors?.[0]?.message).toContain('$credencialesSol');
        const seen = everything(s, body);
        expect(seen).not.toContain(SOL_USER);
        expect(seen).not.toContain(SOL_KEY);
        expect(seen).not.toContain('123456789');
        expect(s.sandbox.calls).toHaveLength(0);
      });
    }
  }

  describe('credentials written in the document itself', () => {
    const mutation = (credenciales: string, vars = '') =>
      `mutation${vars} { validarComprobantesTexto(comprobantes: ["${LINE}"], credencialesSol: ${credenciales}) { cantidadDeComprobantes } }`;
    const written: [string, string][] = [
      ['as a literal object', mutation(`{ rucEmpresa: "20100123453", usuario: "${SOL_USER}", clave: "${SOL_KEY}" }`)],
      ['with a value of the wrong type', mutation(`{ rucEmpresa: "20100123453", usuario: "${SOL_USER}", clave: 123456789 }`)],
      ['as a string where an object goes', mutation(`"${SOL_USER}:${SOL_KEY}"`)],
      ['with an unknown field', mutation(`{ rucEmpresa: "20100123453", usuario: "${SOL_USER}", clav: "${SOL_KEY}" }`)],
      [
        'as a default value of a variable',
        mutation('$c', `($c: CredencialesSolInput = { rucEmpresa: "20100123453", usuario: "${SOL_USER}", clave: "${SOL_KEY}" })`),
      ],
    ];
    for (const stack of ['dev', 'prod'] as const) {
      for (const [how, query] of written) {
        it(`are refused typed, quoting none of them, with no call: ${how} (${stack})`, async () => {
          const s = stack === 'dev' ? dev : prod;
          const { body } = await s.gql(query);
          expect(body.errors?.map((e) => e.extensions?.['code'])).toEqual(['SECRET_IN_DOCUMENT']);
          expect(body.errors?.[0]?.extensions?.['retryable']).toBe(false);
          const seen = everything(s, body);
          expect(seen).not.toContain(SOL_USER);
          expect(seen).not.toContain(SOL_KEY);
          expect(seen).not.toContain('123456789');
          expect(s.sandbox.calls).toHaveLength(0);
        });
      }
    }

    it('are never kept: sent with a persisted-query hash, the hash stays unknown', async () => {
      const query = written[0]![1];
      const sha256Hash = createHash('sha256').update(query).digest('hex');
      const send = (body: unknown) =>
        post(`${dev.url}/graphql`, body).then((r) => r.json() as Promise<{ errors?: { extensions: Record<string, unknown> }[] }>);
      const sent = await send({ query, extensions: { persistedQuery: { version: 1, sha256Hash } } });
      expect(sent.errors?.[0]?.extensions['code']).toBe('SECRET_IN_DOCUMENT');
      const alone = await send({ extensions: { persistedQuery: { version: 1, sha256Hash } } });
      expect(alone.errors?.[0]?.extensions['code']).toBe('PERSISTED_QUERY_NOT_FOUND');
      expect(dev.sandbox.calls).toHaveLength(0);
    });

    for (const [how, broken] of [
      ['a missing colon', `usuario: "u" clave ${SOL_KEY} }`],
      ['a bad escape', `usuario: "u", clave: "\\u${SOL_KEY}" }`],
      ['a bad number', `usuario: "u", clave: 9${SOL_KEY} }`],
      ['a minus sign', `usuario: "u", clave: -${SOL_KEY} }`],
    ] as const) {
      it(`are not quoted by a syntax error in them: ${how}`, async () => {
        const query = `mutation { validarComprobantesTexto(comprobantes: ["${LINE}"], credencialesSol: { rucEmpresa: "20100123453", ${broken}) { cantidadDeComprobantes } }`;
        const { body } = await prod.gql(query);
        expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'GRAPHQL_PARSE_FAILED', retryable: false });
        expect(body.errors?.[0]?.locations).toHaveLength(1);
        const seen = everything(prod, body);
        for (const part of [SOL_KEY, SOL_KEY.slice(0, 4), `"${SOL_KEY[0]}"`]) expect(seen).not.toContain(part);
      });
    }

    it('are kept by no cache, whatever stops the document: a syntax error, an unknown argument, a GET, an operation not named', async () => {
      const literal = `{ rucEmpresa: "20100123453", usuario: "${SOL_USER}", clave: "${SOL_KEY}" }`;
      const sent = [
        `mutation { validarComprobantesTexto(comprobantes: ["${LINE}"], credencialesSol: ${literal}) { cantidadDeComprobantes } } }`,
        `mutation { validarComprobantesTexto(comprobantes: ["${LINE}"], credencialSol: ${literal}) { cantidadDeComprobantes } }`,
        `query A { __typename } mutation B { validarComprobantesTexto(comprobantes: ["${LINE}"], credencialesSol: ${literal}) { cantidadDeComprobantes } }`,
      ];
      for (const query of sent) await dev.gql(query);
      const get = `mutation { validarComprobantesTexto(comprobantes: ["${LINE}"], credencialesSol: ${literal}) { cantidadDeComprobantes } }`;
      await fetch(`${dev.url}/graphql?query=${encodeURIComponent(get)}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      for (const query of [...sent, get]) expect(dev.app.knowsDocument(query), query).toBe(false);
      expect(dev.sandbox.calls).toHaveLength(0);
    });

    it('are not quoted by a syntax error next to them', async () => {
      const broken = `mutation { validarComprobantesTexto(comprobantes: ["${LINE}"], credencialesSol: { rucEmpresa: "20100123453" usuario "${SOL_USER}" }) { cantidadDeComprobantes } }`;
      const { body } = await prod.gql(broken);
      expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'GRAPHQL_PARSE_FAILED', retryable: false });
      expect(body.errors?.[0]?.locations).toHaveLength(1);
      expect(everything(prod, body)).not.toContain(SOL_USER);
    });
  });

  it('hides field suggestions of variable errors in production', async () => {
    const variables = { comprobantes: [LINE], credencialesSol: { rucEmpresa: '20100123453', usuario: 'u', clav: 'c' } as never };
    const hidden = await prod.gql(ValidarComprobantesTextoDocument, variables);
    expect(hidden.body.errors?.[0]?.message).not.toMatch(/Did you mean/);
    const wrongName = await prod.gql('query($r: String!) { contribuyente(ruc: $r) { ruc } }', { r: 5 } as never);
    expect(wrongName.body.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
    const unknownField = await prod.gql(
      'mutation($c: [ComprobanteInput!]!) { validarComprobantes(comprobantes: $c) { cantidadDeComprobantes } }',
      { c: [{ rucEmisr: '20100123453' }] } as never,
    );
    expect(unknownField.body.errors?.[0]?.message).not.toMatch(/Did you mean/);
  });

  it('answers a body that is not valid JSON without echoing any of it', async () => {
    for (const stack of [dev, prod]) {
      const res = await post(`${stack.url}/graphql`, `{"query":"mutation { x }","variables":{"s":{"clave":"${SOL_KEY}"}`);
      expect(res.status).toBe(400);
      const body = (await res.json()) as { errors: { extensions: Record<string, unknown> }[] };
      expect(body.errors[0]?.extensions).toEqual({ code: 'BAD_REQUEST', retryable: false });
      expect(everything(stack, body)).not.toContain(SOL_KEY);
    }
  });

  it('answers a JSON body of the other JSON content type that does not parse without echoing it', async () => {
    const res = await fetch(`${prod.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/graphql+json', authorization: `Bearer ${TOKEN}` },
      body: `{"variables":{"c":{"usuario":"${SOL_USER}","clave":"${SOL_KEY}"}}, "query": x}`,
    });
    expect(res.status).toBe(400);
    expect(everything(prod, await res.json())).not.toContain(SOL_KEY);
  });

  it('refuses GET and form parameters that are not JSON with a typed 400, echoing and logging none of it', async () => {
    const variables = `{"c":{"usuario":"${SOL_USER}","clave":${SOL_KEY}}}`;
    const query = new URLSearchParams({ query: '{ __typename }', variables }).toString();
    const get = await fetch(`${prod.url}/graphql?${query}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const form = await fetch(`${prod.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${TOKEN}` },
      body: query,
    });
    for (const res of [get, form]) {
      expect(res.status).toBe(400);
      const body = (await res.json()) as { errors: { extensions: Record<string, unknown> }[] };
      expect(body.errors[0]?.extensions).toEqual({ code: 'BAD_REQUEST', retryable: false });
      expect(everything(prod, body)).not.toContain(SOL_KEY);
    }
  });

  it("scrubs the caller's token from an upstream message, in the answer and in the logs", async () => {
    const { body } = await dev.gql(ContribuyenteDocument, { ruc: TRIGGERS.echoesToken.ruc });
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_INPUT' });
    expect(body.errors?.[0]?.message).toContain('no puede consultar');
    expect(dev.sandbox.calls).toHaveLength(1);
    expect(everything(dev, body)).not.toContain(TOKEN);
  });

  it('scrubs the SOL user, password and company RUC of that call from an upstream message, in the answer and in the logs', async () => {
    const line = LINE.replace('20100123453', TRIGGERS.echoesToken.ruc);
    const credencialesSol = { rucEmpresa: '20501234568', usuario: SOL_USER, clave: SOL_KEY };
    const { body } = await dev.gql(ValidarComprobantesTextoDocument, { comprobantes: [line], credencialesSol });
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_INPUT' });
    expect(body.errors?.[0]?.message).toContain('no puede consultar');
    // The sandbox did quote them: the call carried them.
    expect(dev.sandbox.calls[0]?.body).toMatchObject({ sol_usuario: SOL_USER, clave_usuario: SOL_KEY, ruc_empresa: '20501234568' });
    for (const secret of [SOL_USER, SOL_KEY, '20501234568', TOKEN]) expect(everything(dev, body)).not.toContain(secret);
  });
});
