import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { SUNAT_SAMPLE } from '../../src/sandbox/sunat.js';
import { SunatCalls } from '../../src/sunat/calls.js';
import { SunatCredentialsRejected, SunatRefused, SunatUnavailable } from '../../src/sunat/errors.js';
import { SunatReceipts, type SunatResult } from '../../src/sunat/receipts.js';
import { SunatTokens } from '../../src/sunat/tokens.js';
import type { ComprobanteBody } from '../../src/upstream/schemas.js';
import { RECEIPT_BODY } from '../helpers.js';

let sandbox: Sandbox;
let calls: SunatCalls;
let receipts: SunatReceipts;
beforeAll(async () => {
  sandbox = await startSandbox();
  calls = new SunatCalls({ apiUrl: sandbox.url, authUrl: sandbox.url, retryBaseMs: 20, timeoutMs: 2000 });
  receipts = new SunatReceipts(calls, new SunatTokens(calls));
});
afterAll(async () => {
  await calls.close();
  await sandbox.close();
});
beforeEach(() => {
  sandbox.reset();
  sandbox.setFaults({});
});

const receipt = (over: Partial<ComprobanteBody> = {}): ComprobanteBody => ({ ...RECEIPT_BODY, ...over });
const tokenCalls = () => sandbox.calls.filter((c) => c.path.includes('/oauth2/token'));
const receiptCalls = () => sandbox.calls.filter((c) => c.path.endsWith('/validarcomprobante'));
const stateOf = (r: SunatResult) => ('receipt' in r ? r.receipt.comprobante_estado_codigo : r.error.constructor.name);

describe("receipts validated through SUNAT's free API", () => {
  it('imports nothing from graphql anywhere in src/sunat', () => {
    const dir = new URL('../../src/sunat/', import.meta.url);
    for (const file of readdirSync(dir)) expect(readFileSync(new URL(file, dir), 'utf8'), file).not.toMatch(/from ['"]graphql/);
  });

  it("asks SUNAT one receipt a call under the company's RUC, the date as dd/mm/yyyy, and maps its codes", async () => {
    const [accepted, cancelled] = await receipts.validate(SUNAT_SAMPLE, [receipt(), receipt({ numero_documento: '1530' })]);
    expect(accepted).toEqual({
      receipt: {
        serie_documento: 'F001',
        numero_documento: '1532',
        comprobante_estado_codigo: '1',
        comprobante_estado_descripcion: 'ACEPTADO',
        empresa_estado_codigo: '00',
        empresa_estado_descripcion: 'ACTIVO',
        empresa_condicion_codigo: '00',
        empresa_condicion_descripcion: 'HABIDO',
        observaciones: [],
        observaciones_detalle: [],
      },
    });
    expect(stateOf(cancelled!)).toBe('2');
    const sent = receiptCalls();
    expect(sent.map((c) => c.path)).toEqual([
      `/v1/contribuyente/contribuyentes/${SUNAT_SAMPLE.rucEmpresa}/validarcomprobante`,
      `/v1/contribuyente/contribuyentes/${SUNAT_SAMPLE.rucEmpresa}/validarcomprobante`,
    ]);
    expect(sent[0]!.body).toEqual({
      numRuc: '20100123453',
      codComp: '01',
      numeroSerie: 'F001',
      numero: '1532',
      fechaEmision: '01/10/2026',
      monto: '1180.00',
    });
  });

  it('reads "0001" as 1, keeps a code the table lacks with no description, strips the leading "- " of a remark', async () => {
    const [padded, unknown, note, absent] = await receipts.validate(SUNAT_SAMPLE, [
      receipt({ serie_documento: 'S000' }),
      receipt({ serie_documento: 'S999' }),
      receipt({ codigo_tipo_documento: '07' }),
      receipt({ ruc_emisor: '20999999995' }),
    ]);
    expect(padded).toMatchObject({ receipt: { comprobante_estado_codigo: '1', comprobante_estado_descripcion: 'ACEPTADO' } });
    expect(unknown).toMatchObject({ receipt: { comprobante_estado_codigo: '9', comprobante_estado_descripcion: null } });
    expect(note).toMatchObject({ receipt: { observaciones: ['Nota vinculada a un comprobante de referencia'] } });
    expect(absent).toMatchObject({
      receipt: { comprobante_estado_codigo: '0', comprobante_estado_descripcion: 'NO EXISTE', empresa_estado_codigo: null },
    });
  });

  it('asks a token once for many receipts, and a receipt repeated in the list once', async () => {
    const fresh = new SunatReceipts(calls, new SunatTokens(calls));
    const list = [receipt(), receipt({ numero_documento: '01532' }), receipt({ numero_documento: '7' }), receipt()];
    const results = await fresh.validate(SUNAT_SAMPLE, list);
    await fresh.validate(SUNAT_SAMPLE, [receipt({ numero_documento: '8' })]);
    expect(results.map(stateOf)).toEqual(['1', '1', '1', '1']);
    expect(receiptCalls()).toHaveLength(3);
    expect(tokenCalls()).toHaveLength(1);
  });

  it('answers a 401 with one new token and one new try', async () => {
    await receipts.validate(SUNAT_SAMPLE, [receipt()]);
    sandbox.reset();
    // The token expires under this receipt: SUNAT answers 401 once.
    const [expired] = await receipts.validate(SUNAT_SAMPLE, [receipt({ serie_documento: 'S401', numero_documento: '11' })]);
    expect(stateOf(expired!)).toBe('1');
    expect(tokenCalls()).toHaveLength(1);
    expect(receiptCalls().map((c) => c.status)).toEqual([401, 200]);
  });

  it('keeps one receipt’s refusal or outage on that receipt, and answers the others', async () => {
    const results = await receipts.validate(SUNAT_SAMPLE, [
      receipt({ serie_documento: 'SBAD' }),
      receipt({ serie_documento: 'S500' }),
      receipt(),
    ]);
    expect(results[0]).toMatchObject({ error: { sunatMessage: 'El comprobante ingresado no es válido' } });
    expect((results[0] as { error: Error }).error).toBeInstanceOf(SunatRefused);
    expect((results[1] as { error: Error }).error).toBeInstanceOf(SunatUnavailable);
    expect(stateOf(results[2]!)).toBe('1');
    // A 5xx is tried five times in all, then left.
    expect(receiptCalls().filter((c) => (c.body as { numeroSerie: string }).numeroSerie === 'S500')).toHaveLength(5);
  });

  it('fails everything before any receipt is asked when SUNAT refuses the credentials', async () => {
    await expect(receipts.validate({ ...SUNAT_SAMPLE, clientSecret: 'wrong' }, [receipt(), receipt()])).rejects.toBeInstanceOf(
      SunatCredentialsRejected,
    );
    expect(receiptCalls()).toHaveLength(0);
    // The refusal is not kept as a token: the right secret is asked for at once.
    await expect(receipts.validate(SUNAT_SAMPLE, [receipt()])).resolves.toHaveLength(1);
  });

  it('waits out a 429 as its Retry-After says', async () => {
    const started = Date.now();
    const [throttled] = await receipts.validate(SUNAT_SAMPLE, [receipt({ serie_documento: 'S429' })]);
    expect(stateOf(throttled!)).toBe('1');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(receiptCalls()).toHaveLength(2);
  });

  it('keeps at most `concurrency` calls in flight for one clientId', async () => {
    sandbox.setFaults({ latencyMs: 50 });
    const list = Array.from({ length: 20 }, (_, i) => receipt({ numero_documento: String(100 + i * 10 + 1) }));
    const results = await receipts.validate(SUNAT_SAMPLE, list);
    expect(results.map(stateOf)).toEqual(list.map(() => '1'));
    expect(receiptCalls()).toHaveLength(20);
    expect(sandbox.peakInFlight).toBe(5);
  });
});
