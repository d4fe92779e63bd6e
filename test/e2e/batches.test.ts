import { afterEach, describe, expect, it } from 'vitest';
import { ValidarComprobantesDocument, ValidarComprobantesTextoDocument } from '../../operations/generated/graphql.js';
import { loadConfig } from '../../src/config.js';
import { TRIGGERS } from '../../src/sandbox/data.js';
import { RECEIPT, TOKEN, codes, receipts, startStack, type Stack } from '../helpers.js';

/**
 * Batches past the upstream's 100 receipts per call: split in input order, answered in input
 * order, a failed call losing only its own receipts (null, with one error naming them), and
 * no call after the quota ran out.
 */

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

interface Answer {
  cantidadDeComprobantes: number;
  comprobantes: ({ numeroDocumento: string } | null)[];
}

describe('a batch over 100 receipts', () => {
  it('goes upstream in calls of at most 100, in input order, and answers every receipt in input order', async () => {
    stack = await startStack({ env: { MAX_OPERATION_COST: '1000' } });
    const { body } = await stack.gql(ValidarComprobantesDocument, { comprobantes: receipts(250) });
    expect(body.errors).toBeUndefined();
    const answer = (body.data as { validarComprobantes: Answer }).validarComprobantes;
    expect(answer.comprobantes.map((c) => c?.numeroDocumento)).toEqual(receipts(250).map((r) => r.numeroDocumento));
    expect(answer.cantidadDeComprobantes).toBe(250);
    const calls = stack.sandbox
      .callsTo('/validacion-multiple-cpe')
      .map((c) => (c.body as { comprobantes: { numero_documento: string }[] }).comprobantes);
    expect(calls.map((c) => c.length).sort()).toEqual([100, 100, 50]);
    expect(
      calls
        .flat()
        .map((r) => r.numero_documento)
        .sort(),
    ).toEqual(
      receipts(250)
        .map((r) => r.numeroDocumento)
        .sort(),
    );
    expect(body.extensions?.['cost']).toMatchObject({ estimated: 250, queries: 250, upstreamCalls: 3 });
  });

  it('does the same for text lines, with SOL credentials on every call', async () => {
    stack = await startStack({ env: { MAX_OPERATION_COST: '1000', UPSTREAM_CONCURRENCY: '1' } });
    const lines = Array.from({ length: 101 }, (_, i) => `20100123453|01|F001|${i + 1}|2026-10-01|118.00`);
    const { body } = await stack.gql(ValidarComprobantesTextoDocument, {
      comprobantes: lines,
      credencialesSol: { rucEmpresa: '20100123453', usuario: 'USUARIO1', clave: 'clave-secreta' },
    });
    expect(body.errors).toBeUndefined();
    const answer = (body.data as { validarComprobantesTexto: Answer }).validarComprobantesTexto;
    expect(answer.comprobantes.map((c) => c?.numeroDocumento)).toEqual(lines.map((_, i) => String(i + 1)));
    const calls = stack.sandbox.callsTo('/validacion-multiple-cpe-v2');
    // One after another with UPSTREAM_CONCURRENCY=1: the first 100, then the last.
    expect(calls.map((c) => (c.body as { comprobantes: string[] }).comprobantes)).toEqual([lines.slice(0, 100), lines.slice(100)]);
    for (const call of calls) expect(call.body).toMatchObject({ ruc_empresa: '20100123453', sol_usuario: 'USUARIO1' });
  });

  it('loses only the receipts of a call that failed: null, with one error saying which and whether to retry', async () => {
    stack = await startStack({ env: { MAX_OPERATION_COST: '1000' } });
    const { body } = await stack.gql(ValidarComprobantesDocument, {
      comprobantes: receipts(250, { at: 150, ruc: TRIGGERS.unavailable.ruc }),
    });
    const answer = (body.data as { validarComprobantes: Answer }).validarComprobantes;
    expect(answer.comprobantes.slice(0, 100).every((c) => c !== null)).toBe(true);
    expect(answer.comprobantes.slice(100, 200).every((c) => c === null)).toBe(true);
    expect(answer.comprobantes.slice(200).every((c) => c !== null)).toBe(true);
    expect(answer.cantidadDeComprobantes).toBe(150);
    expect(body.errors).toHaveLength(1);
    expect(body.errors![0]).toMatchObject({
      path: ['validarComprobantes', 'comprobantes', 100],
      extensions: { code: 'UPSTREAM_UNAVAILABLE', retryable: true, receipts: { from: 100, to: 199 } },
    });
    // A batch is never retried: each try would bill every receipt again.
    expect(stack.sandbox.callsTo('/validacion-multiple-cpe')).toHaveLength(3);
  });

  it('loses only the receipts of a call whose answer is malformed (a count no Int holds): one UPSTREAM_ERROR naming them', async () => {
    stack = await startStack({ env: { MAX_OPERATION_COST: '1000' } });
    const { body } = await stack.gql(ValidarComprobantesDocument, {
      comprobantes: receipts(300, { at: 150, ruc: TRIGGERS.hugeCount.ruc }),
    });
    const answer = (body.data as { validarComprobantes: Answer }).validarComprobantes;
    expect(answer.comprobantes.map((c) => c !== null)).toEqual([
      ...Array(100).fill(true),
      ...Array(100).fill(false),
      ...Array(100).fill(true),
    ]);
    expect(answer.cantidadDeComprobantes).toBe(200);
    expect(body.errors).toHaveLength(1);
    expect(body.errors![0]).toMatchObject({
      path: ['validarComprobantes', 'comprobantes', 100],
      extensions: { code: 'UPSTREAM_ERROR', retryable: false, receipts: { from: 100, to: 199 } },
    });
    // Answered with a 2xx: billed, all three calls.
    expect(body.extensions?.['cost']).toMatchObject({ queries: 300, upstreamCalls: 3 });
  });

  it('sends no call after the quota ran out: the receipts not sent are QUOTA_EXCEEDED too', async () => {
    stack = await startStack({ env: { MAX_OPERATION_COST: '1000', UPSTREAM_CONCURRENCY: '1' } });
    stack.sandbox.setQuota(TOKEN, 150);
    const { body } = await stack.gql(ValidarComprobantesDocument, { comprobantes: receipts(350) });
    const answer = (body.data as { validarComprobantes: Answer }).validarComprobantes;
    expect(answer.comprobantes.filter((c) => c !== null)).toHaveLength(100);
    expect(stack.sandbox.callsTo('/validacion-multiple-cpe')).toHaveLength(2);
    expect(body.errors?.map((e) => [e.extensions?.['code'], e.extensions?.['receipts'], e.path?.at(-1)])).toEqual([
      ['QUOTA_EXCEEDED', { from: 100, to: 199 }, 100],
      ['QUOTA_EXCEEDED', { from: 200, to: 299 }, 200],
      ['QUOTA_EXCEEDED', { from: 300, to: 349 }, 300],
    ]);
    expect(stack.sandbox.quotaOf(TOKEN)).toBe(50);
  });

  it('refuses more than MAX_RECEIPTS as INVALID_INPUT, and more than MAX_OPERATION_COST as COST_LIMIT_EXCEEDED, with no call', async () => {
    stack = await startStack({ env: { MAX_OPERATION_COST: '5000' } });
    const over = await stack.gql(ValidarComprobantesDocument, { comprobantes: receipts(1001) });
    expect(codes(over.body)).toEqual(['INVALID_INPUT']);
    expect(over.body.errors?.[0]?.message).toBe('Enviar máximo 1000 comprobantes por consulta (MAX_RECEIPTS).');
    await stack.close();
    stack = await startStack();
    const costly = await stack.gql(ValidarComprobantesDocument, { comprobantes: receipts(101) });
    expect(codes(costly.body)).toEqual(['COST_LIMIT_EXCEEDED']);
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('fits a full batch of the default maximum, its longest receipts, under the default body limit', async () => {
    const config = loadConfig({});
    const longest = { ...RECEIPT, numeroDocumento: '12345678', total: '999999999999.99' };
    stack = await startStack({ env: { MAX_OPERATION_COST: String(config.limits.maxReceipts) } });
    const { status, body } = await stack.gql(ValidarComprobantesDocument, {
      comprobantes: Array.from({ length: config.limits.maxReceipts }, () => longest),
    });
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(stack.sandbox.callsTo('/validacion-multiple-cpe')).toHaveLength(config.limits.maxReceipts / 100);
  });
});
