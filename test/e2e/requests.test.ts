import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ContribuyenteDetalleDocument,
  ContribuyenteDocument,
  LicenciaDocument,
  ValidarComprobantesDocument,
  ValidarComprobantesTextoDocument,
} from '../../operations/generated/graphql.js';
import { post, RECEIPT, RECEIPT_BODY, startStack, TOKEN, type Stack } from '../helpers.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());
beforeEach(() => stack.sandbox.reset());

/** The one call the sandbox recorded, with the headers the spec cares about. */
function onlyCall() {
  expect(stack.sandbox.calls).toHaveLength(1);
  const call = stack.sandbox.calls[0]!;
  return {
    method: call.method,
    path: call.path,
    headers: { accept: call.headers.accept, 'content-type': call.headers['content-type'], authorization: call.headers.authorization },
    body: call.body,
  };
}

const SPEC_HEADERS = { accept: 'application/json', 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` };

describe('the exact upstream request of each operation', () => {
  it('contribuyente: POST /ruc {ruc}', async () => {
    await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
    expect(onlyCall()).toEqual({ method: 'POST', path: '/ruc', headers: SPEC_HEADERS, body: { ruc: '20100123453' } });
  });

  it('contribuyenteDetalle: POST /ruc-sunat {ruc}', async () => {
    await stack.gql(ContribuyenteDetalleDocument, { ruc: '20501234568' });
    expect(onlyCall()).toEqual({ method: 'POST', path: '/ruc-sunat', headers: SPEC_HEADERS, body: { ruc: '20501234568' } });
  });

  it('licencia: POST /licencia-conducir {num_licencia}', async () => {
    await stack.gql(LicenciaDocument, { numLicencia: 'Q72345678' });
    expect(onlyCall()).toEqual({ method: 'POST', path: '/licencia-conducir', headers: SPEC_HEADERS, body: { num_licencia: 'Q72345678' } });
  });

  it('validarComprobantes: POST /validacion-multiple-cpe with snake_case receipt objects', async () => {
    await stack.gql(ValidarComprobantesDocument, {
      comprobantes: [RECEIPT, { ...RECEIPT, codigoTipoDocumento: '03', serieDocumento: 'B001' }],
    });
    expect(onlyCall()).toEqual({
      method: 'POST',
      path: '/validacion-multiple-cpe',
      headers: SPEC_HEADERS,
      body: {
        comprobantes: [RECEIPT_BODY, { ...RECEIPT_BODY, codigo_tipo_documento: '03', serie_documento: 'B001' }],
      },
    });
  });

  it('validarComprobantesTexto: POST /validacion-multiple-cpe-v2 with the lines as given', async () => {
    const lines = ['20100123453|01|F001|1532|2026-10-01|1180.00', '20501234568|R1|E001|00000007|2026-09-30|250'];
    await stack.gql(ValidarComprobantesTextoDocument, { comprobantes: lines });
    expect(onlyCall()).toEqual({
      method: 'POST',
      path: '/validacion-multiple-cpe-v2',
      headers: SPEC_HEADERS,
      body: { comprobantes: lines },
    });
  });

  it('validarComprobantesTexto with credencialesSol adds ruc_empresa, sol_usuario, clave_usuario and never echoes the key', async () => {
    const lines = ['20100123453|01|F001|1532|2026-10-01|1180.00'];
    const { body } = await stack.gql(ValidarComprobantesTextoDocument, {
      comprobantes: lines,
      credencialesSol: { rucEmpresa: '20100123453', usuario: 'MODDATOS', clave: 'clave-sol-secreta' },
    });
    expect(onlyCall().body).toEqual({
      comprobantes: lines,
      ruc_empresa: '20100123453',
      sol_usuario: 'MODDATOS',
      clave_usuario: 'clave-sol-secreta',
    });
    expect(JSON.stringify(body)).not.toContain('clave-sol-secreta');
    expect(stack.logs.join('')).not.toContain('clave-sol-secreta');
  });

  it('a bad credencialesSol is INVALID_INPUT without the key in the message, and no call', async () => {
    const { body } = await stack.gql(ValidarComprobantesTextoDocument, {
      comprobantes: ['20100123453|01|F001|1532|2026-10-01|1180.00'],
      credencialesSol: { rucEmpresa: '123', usuario: 'MODDATOS', clave: 'clave-sol-secreta' },
    });
    expect(body.errors?.[0]?.extensions?.['code']).toBe('INVALID_INPUT');
    expect(JSON.stringify(body)).not.toContain('clave-sol-secreta');
    expect(stack.sandbox.calls).toHaveLength(0);
  });
});

describe('token passthrough', () => {
  it('forwards the token exactly as the caller sent it', async () => {
    const odd = 'tok.EN_with-Mixed~chars/+=';
    await stack.gql(ContribuyenteDocument, { ruc: '20100123453' }, { token: odd });
    expect(stack.sandbox.calls[0]?.headers.authorization).toBe(`Bearer ${odd}`);
  });

  it('two concurrent callers with different tokens each reach the upstream with their own', async () => {
    const [pro, free] = await Promise.all([
      stack.gql(ContribuyenteDocument, { ruc: '20100123453' }, { token: 'sandbox-pro' }),
      stack.gql(ContribuyenteDocument, { ruc: '20100123453' }, { token: 'sandbox-free' }),
    ]);
    expect(pro.body.data?.contribuyente?.ruc).toBe('20100123453');
    expect(free.body.data?.contribuyente?.ruc).toBe('20100123453');
    // Same key, two requests: no sharing across tokens, one call each.
    expect(
      stack.sandbox
        .callsTo('/ruc')
        .map((c) => c.headers.authorization)
        .sort(),
    ).toEqual(['Bearer sandbox-free', 'Bearer sandbox-pro']);
  });

  it('never writes the token to a log line, even at debug level', async () => {
    await stack.gql(ContribuyenteDocument, { ruc: '20600000021' }, { token: 'sandbox-pro' });
    await stack.gql(LicenciaDocument, { numLicencia: 'Q46779354' }, { token: 'sandbox-free' });
    const logs = stack.logs.join('');
    expect(logs).toContain('upstream'); // debug lines were written
    expect(logs).not.toContain('sandbox-pro');
    expect(logs).not.toContain('sandbox-free');
  });
});

describe('UPSTREAM_URL with a path prefix (the legacy address)', () => {
  let legacy: Stack;
  beforeAll(async () => {
    legacy = await startStack({ upstreamPath: '/api' });
  });
  afterAll(() => legacy.close());

  it('puts the prefix in front of every path', async () => {
    const { body } = await legacy.gql(`{ contribuyente(ruc: "20100123453") { ruc } contribuyenteDetalle(ruc: "20100123453") { ruc } }`);
    expect(body.errors).toBeUndefined();
    expect(legacy.sandbox.calls.map((c) => c.path).sort()).toEqual(['/api/ruc', '/api/ruc-sunat']);
  });
});

describe('an Accept the gateway cannot answer', () => {
  for (const accept of ['text/plain', 'application/json; charset=iso-8859-1', 'application/jsonx', 'image/*']) {
    it(`is a typed 406 before any call, on POST and GET: ${accept}`, async () => {
      const post = await fetch(`${stack.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({ query: '{ contribuyente(ruc: "20100123453") { ruc } }' }),
      });
      const get = await fetch(`${stack.url}/graphql?query=${encodeURIComponent('{ contribuyente(ruc: "20100123453") { ruc } }')}`, {
        headers: { accept, authorization: `Bearer ${TOKEN}` },
      });
      for (const res of [post, get]) {
        expect(res.status).toBe(406);
        expect(await res.json()).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST', retryable: false } }] });
      }
      expect(stack.sandbox.calls).toHaveLength(0);
    });
  }
});

describe('bodies Yoga would answer in English', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  const refusal = async (res: Response) => {
    const body = (await res.json()) as { errors: { message: string; extensions: Record<string, unknown> }[] };
    return { status: res.status, message: body.errors[0]!.message, extensions: body.errors[0]!.extensions };
  };

  it('an empty JSON body is a typed BAD_REQUEST in Spanish, without originalError', async () => {
    const answer = await refusal(await post(`${stack.url}/graphql`, ''));
    expect(answer).toEqual({
      status: 400,
      message: expect.stringMatching(/^El cuerpo de la petición está vacío/),
      extensions: { code: 'BAD_REQUEST', retryable: false },
    });
  });

  it('a JSON document sent as a form (curl -d without a content type) says to send JSON', async () => {
    const res = await post(`${stack.url}/graphql`, JSON.stringify({ query: '{ __typename }' }), {
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-graphql-yoga-csrf': '1' },
    });
    const answer = await refusal(res);
    expect(answer.status).toBe(400);
    expect(answer.message).toMatch(/curl -d.*Content-Type: application\/json/);
    expect(answer.extensions).toEqual({ code: 'BAD_REQUEST', retryable: false });
    expect(stack.sandbox.calls).toHaveLength(0);
  });
});
