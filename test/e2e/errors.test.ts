import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ContribuyenteDocument,
  ContribuyenteDetalleDocument,
  ContribuyentesDocument,
  LicenciaDocument,
  ValidarComprobantesDocument,
  ValidarComprobantesTextoDocument,
} from '../../operations/generated/graphql.js';
import { TRIGGERS } from '../../src/sandbox/data.js';
import { rucCheckDigit } from '../../src/upstream/keys.js';
import { post, codes, errorAt, RECEIPT, startStack, type Stack } from '../helpers.js';

let stack: Stack;
beforeAll(async () => {
  // One call per lookup and no breaker: this file maps single answers; retries and the breaker have their own tests.
  stack = await startStack({
    env: { UPSTREAM_TIMEOUT_MS: '300', UPSTREAM_RETRIES: '0', BREAKER_MIN_CALLS: '1000000' },
    sandbox: { slowMs: 1500 },
  });
});
afterAll(() => stack.close());
beforeEach(() => stack.sandbox.reset());

/** The one error of a single-field operation: its code, retryable flag and message. */
async function failure<R, V>(doc: TypedDocumentNode<R, V>, variables: V, token?: string | null) {
  const { status, body } = await stack.gql(doc, variables, { token });
  expect(status).toBe(200);
  expect(body.errors).toHaveLength(1);
  const error = body.errors![0]!;
  expect(typeof error.extensions?.['retryable']).toBe('boolean');
  return { code: error.extensions?.['code'], retryable: error.extensions?.['retryable'], message: error.message, error, body };
}

describe('local checks: no upstream call', () => {
  it('a RUC with a wrong check digit is INVALID_INPUT "El RUC es incorrecto"', async () => {
    const f = await failure(ContribuyenteDocument, { ruc: '20100123454' });
    expect(f).toMatchObject({ code: 'INVALID_INPUT', retryable: false, message: 'El RUC es incorrecto' });
    expect(f.body.data).toEqual({ contribuyente: null });
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('a RUC with a wrong prefix or length is refused for contribuyenteDetalle too', async () => {
    for (const ruc of ['30100123453', '2010012345', 'abcdefghijk', '']) {
      const f = await failure(ContribuyenteDetalleDocument, { ruc });
      expect(f).toMatchObject({ code: 'INVALID_INPUT', message: 'El RUC es incorrecto' });
    }
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('a blank licence number is INVALID_INPUT', async () => {
    const f = await failure(LicenciaDocument, { numLicencia: '   ' });
    expect(f).toMatchObject({ code: 'INVALID_INPUT', retryable: false });
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('a malformed receipt is INVALID_INPUT naming its position and field', async () => {
    const f = await failure(ValidarComprobantesDocument, {
      comprobantes: [RECEIPT, RECEIPT, { ...RECEIPT, fechaDeEmision: '2026-02-30' }],
    });
    expect(f).toMatchObject({ code: 'INVALID_INPUT', retryable: false });
    expect(f.message).toContain('comprobantes[2].fechaDeEmision');
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('a malformed text line is INVALID_INPUT naming its position', async () => {
    const f = await failure(ValidarComprobantesTextoDocument, {
      comprobantes: ['20100123453|01|F001|1532|2026-10-01|1180.00', '20100123453|01'],
    });
    expect(f).toMatchObject({ code: 'INVALID_INPUT' });
    expect(f.message).toContain('comprobantes[1]');
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('more receipts than MAX_RECEIPTS is INVALID_INPUT with the upstream wording and the setting', async () => {
    const f = await failure(ValidarComprobantesDocument, { comprobantes: Array.from({ length: 1001 }, () => RECEIPT) });
    expect(f).toMatchObject({ code: 'INVALID_INPUT', message: 'Enviar máximo 1000 comprobantes por consulta (MAX_RECEIPTS).' });
    const g = await failure(ValidarComprobantesTextoDocument, {
      comprobantes: Array.from({ length: 1001 }, () => '20100123453|01|F001|1532|2026-10-01|1180.00'),
    });
    expect(g).toMatchObject({ code: 'INVALID_INPUT', message: 'Enviar máximo 1000 comprobantes por consulta (MAX_RECEIPTS).' });
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('more than 100 distinct RUCs to pay (none in a register: PADRON is off) fails the whole contribuyentes field', async () => {
    const rucs = Array.from({ length: 101 }, (_, i) => `20${40_000_000 + i * 13}`).map((first10) => first10 + rucCheckDigit(first10));
    const { body } = await stack.gql(ContribuyentesDocument, { rucs });
    expect(body.data).toBeNull();
    expect(codes(body)).toEqual(['INVALID_INPUT']);
    expect(errorAt(body, 'contribuyentes').path).toEqual(['contribuyentes']);
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('more than MAX_RUCS_PER_LIST RUCs fails it too, the same RUC repeated included; within it, a RUC repeated is one call', async () => {
    const over = await stack.gql(ContribuyentesDocument, { rucs: Array.from({ length: 10_001 }, () => '20100123453') });
    expect(codes(over.body)).toEqual(['INVALID_INPUT']);
    expect(stack.sandbox.calls).toHaveLength(0);
    const repeated = await stack.gql(ContribuyentesDocument, { rucs: Array.from({ length: 101 }, () => '20100123453') });
    expect(repeated.body.errors).toBeUndefined();
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(1);
  });

  it('no bearer token is UNAUTHENTICATED before any call, for every field', async () => {
    const { body } = await stack.gql(
      `{ contribuyente(ruc: "20100123453") { ruc } contribuyenteDetalle(ruc: "20100123453") { ruc } licencia(numLicencia: "Q46779354") { nombres } }`,
      undefined,
      { token: null },
    );
    expect(codes(body)).toEqual(['UNAUTHENTICATED', 'UNAUTHENTICATED', 'UNAUTHENTICATED']);
    expect(body.errors!.every((e) => e.extensions?.['retryable'] === false)).toBe(true);
    const m = await failure(ValidarComprobantesDocument, { comprobantes: [RECEIPT] }, null);
    expect(m.code).toBe('UNAUTHENTICATED');
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('an Authorization header of another scheme counts as no token', async () => {
    const { body } = await stack.gql(
      ContribuyenteDocument,
      { ruc: '20100123453' },
      { token: null, headers: { authorization: 'Basic c2FuZGJveC1wcm86eA==' } },
    );
    expect(codes(body)).toEqual(['UNAUTHENTICATED']);
    expect(stack.sandbox.calls).toHaveLength(0);
  });
});

describe('upstream answers mapped to codes', () => {
  it('upstream 400 invalid_input is INVALID_INPUT with the upstream message and code', async () => {
    const f = await failure(ContribuyenteDocument, { ruc: TRIGGERS.rejected.ruc });
    expect(f).toMatchObject({ code: 'INVALID_INPUT', retryable: false, message: 'El RUC es incorrecto' });
    expect(f.error.extensions).toMatchObject({ upstreamCode: 'invalid_input', upstreamStatus: 400 });
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(1);
  });

  it('upstream 404 is DOCUMENT_NOT_FOUND with the upstream message', async () => {
    const f = await failure(ContribuyenteDocument, { ruc: TRIGGERS.notFound.ruc });
    expect(f).toMatchObject({ code: 'DOCUMENT_NOT_FOUND', retryable: false, message: 'El RUC no existe' });
    const l = await failure(LicenciaDocument, { numLicencia: TRIGGERS.notFound.licencia });
    expect(l).toMatchObject({ code: 'DOCUMENT_NOT_FOUND', message: 'No se encontró información para la licencia indicada.' });
  });

  it('upstream 429 is QUOTA_EXCEEDED and the message keeps the remaining and sent counts', async () => {
    const f = await failure(ValidarComprobantesDocument, { comprobantes: [RECEIPT, RECEIPT, RECEIPT, RECEIPT] }, 'sandbox-low');
    expect(f).toMatchObject({ code: 'QUOTA_EXCEEDED', retryable: false });
    // Not a wait: a plan that ran out does not come back in a second.
    expect(f.error.extensions).not.toHaveProperty('retryAfterSeconds');
    expect(f.message).toMatch(/\b3\b.*\b4\b/);
    expect(stack.sandbox.callsTo('/validacion-multiple-cpe')[0]?.status).toBe(429);
  });

  it('upstream 401 (a token the upstream does not know) is UNAUTHENTICATED', async () => {
    const f = await failure(ContribuyenteDocument, { ruc: '20100123453' }, 'not-a-real-token');
    expect(f).toMatchObject({ code: 'UNAUTHENTICATED', retryable: false });
    expect(stack.sandbox.calls[0]?.status).toBe(401);
  });

  it('upstream 403 (licence on the free plan) is FORBIDDEN', async () => {
    const f = await failure(LicenciaDocument, { numLicencia: 'Q46779354' }, 'sandbox-free');
    expect(f).toMatchObject({ code: 'FORBIDDEN', retryable: false });
    expect(stack.sandbox.calls[0]?.status).toBe(403);
  });

  it('upstream 503 is UPSTREAM_UNAVAILABLE, retryable', async () => {
    const f = await failure(ContribuyenteDocument, { ruc: TRIGGERS.unavailable.ruc });
    expect(f).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });
    expect(f.error.extensions?.['upstreamCode']).toBe('upstream_unavailable');
  });

  it('another 5xx with an HTML body is UPSTREAM_UNAVAILABLE, and the body is not echoed', async () => {
    const f = await failure(ContribuyenteDocument, { ruc: TRIGGERS.badGateway.ruc });
    expect(f).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });
    expect(JSON.stringify(f.body)).not.toContain('<html>');
  });

  it('a 200 whose body is not JSON is UPSTREAM_ERROR, retryable (billed: the caller decides)', async () => {
    const f = await failure(ContribuyenteDetalleDocument, { ruc: TRIGGERS.brokenBody.ruc });
    expect(f).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
  });

  it('a reset connection is UPSTREAM_UNAVAILABLE', async () => {
    const f = await failure(LicenciaDocument, { numLicencia: TRIGGERS.reset.licencia });
    expect(f).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });
  });

  it('an answer slower than UPSTREAM_TIMEOUT_MS is UPSTREAM_UNAVAILABLE', async () => {
    const started = Date.now();
    const f = await failure(ContribuyenteDocument, { ruc: TRIGGERS.slow.ruc });
    expect(f).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });
    expect(f.message).toContain('no respondió a tiempo');
    // The 300 ms time-out, not the sandbox's 1500 ms delay, ended the wait.
    expect(Date.now() - started).toBeLessThan(1400);
  });

  it('a 200 whose record breaks the schema is UPSTREAM_ERROR', async () => {
    const f = await failure(ContribuyenteDocument, { ruc: TRIGGERS.badRecord.ruc });
    expect(f).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: false });
  });

  it('another 4xx is UPSTREAM_ERROR', async () => {
    const f = await failure(ContribuyenteDocument, { ruc: TRIGGERS.otherClientError.ruc });
    expect(f).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: false });
    expect(f.error.extensions).toMatchObject({ upstreamStatus: 422 });
  });

  it('a batch whose issuer triggers a 503 fails the mutation with UPSTREAM_UNAVAILABLE', async () => {
    const f = await failure(ValidarComprobantesDocument, { comprobantes: [{ ...RECEIPT, rucEmisor: TRIGGERS.unavailable.ruc }] });
    expect(f).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });
  });
});

describe('a failed field leaves its siblings resolved', () => {
  it('one failing alias, one invalid RUC and one good lookup in one operation', async () => {
    const { body } = await stack.gql(`{
      ok: contribuyente(ruc: "20100123453") { nombreORazonSocial }
      caido: contribuyente(ruc: "${TRIGGERS.unavailable.ruc}") { ruc }
      malo: contribuyente(ruc: "123") { ruc }
    }`);
    expect(body.data).toEqual({ ok: { nombreORazonSocial: 'COMERCIAL ANDINA S.A.C.' }, caido: null, malo: null });
    expect(errorAt(body, 'caido').extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });
    expect(errorAt(body, 'malo').extensions).toMatchObject({ code: 'INVALID_INPUT', retryable: false });
  });

  it('in contribuyentes, a bad RUC is null at its own index with the error path ending there', async () => {
    const { body } = await stack.gql(ContribuyentesDocument, { rucs: ['20100123453', '999', TRIGGERS.notFound.ruc, '10467793549'] });
    expect(body.data?.contribuyentes).toEqual([
      { __typename: 'Contribuyente', ruc: '20100123453', nombreORazonSocial: 'COMERCIAL ANDINA S.A.C.' },
      null,
      null,
      { __typename: 'Contribuyente', ruc: '10467793549', nombreORazonSocial: 'QUISPE MAMANI ROSA ELENA' },
    ]);
    expect(errorAt(body, 'contribuyentes', 1).extensions).toMatchObject({ code: 'INVALID_INPUT' });
    expect(errorAt(body, 'contribuyentes', 2).extensions).toMatchObject({ code: 'DOCUMENT_NOT_FOUND' });
    expect(
      stack.sandbox
        .callsTo('/ruc')
        .map((c) => (c.body as { ruc: string }).ruc)
        .sort(),
    ).toEqual(['10467793549', '20100123453', TRIGGERS.notFound.ruc].sort());
  });
});

describe("GraphQL's own errors carry code and retryable", () => {
  it('a document that does not parse is GRAPHQL_PARSE_FAILED', async () => {
    const { status, body } = await stack.gql('{ contribuyente(ruc: ');
    expect(status).toBe(400);
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'GRAPHQL_PARSE_FAILED', retryable: false });
  });

  it('an unknown field is GRAPHQL_VALIDATION_FAILED', async () => {
    const { status, body } = await stack.gql('{ contribuyente(ruc: "20100123453") { rucc } }');
    expect(status).toBe(400);
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', retryable: false });
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('a variable of the wrong type is BAD_USER_INPUT', async () => {
    const { body } = await stack.gql(ContribuyenteDocument, { ruc: 20100123453 } as never);
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', retryable: false });
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('a body that is not JSON is BAD_REQUEST', async () => {
    const res = await post(`${stack.url}/graphql`, '{"query": ');
    expect(res.status).toBe(400);
    const body = (await res.json()) as { errors: { extensions: Record<string, unknown> }[] };
    expect(body.errors[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', retryable: false });
  });
});

describe('time-outs by kind of call', () => {
  let batch: Stack;
  beforeAll(async () => {
    batch = await startStack({
      env: { UPSTREAM_TIMEOUT_MS: '5000', UPSTREAM_BATCH_TIMEOUT_MS: '300', UPSTREAM_RETRIES: '0' },
      sandbox: { slowMs: 1500 },
    });
  });
  afterAll(() => batch.close());

  it('a batch slower than UPSTREAM_BATCH_TIMEOUT_MS is UPSTREAM_UNAVAILABLE', async () => {
    const { body } = await batch.gql(ValidarComprobantesDocument, { comprobantes: [{ ...RECEIPT, rucEmisor: TRIGGERS.slow.ruc }] });
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });
  });

  it('while a lookup of the same delay finishes under UPSTREAM_TIMEOUT_MS', async () => {
    const { body } = await batch.gql(ContribuyenteDocument, { ruc: TRIGGERS.slow.ruc });
    expect(body.errors).toBeUndefined();
    expect(body.data?.contribuyente?.nombreORazonSocial).toBe('EMPRESA DE RESPUESTA LENTA S.A.C.');
  });
});
