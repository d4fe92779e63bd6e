import { afterEach, describe, expect, it } from 'vitest';
import { SUNAT_SAMPLE } from '../../src/sandbox/sunat.js';
import { RECEIPT, TOKEN, startRedis, startStack, type Stack } from '../helpers.js';
import { startSandbox } from '../../src/sandbox/server.js';

/**
 * `validarComprobantes` through SUNAT's free API (docs/sunat.md): with a call's credentials or the
 * gateway's own, each receipt is asked of SUNAT's double in the sandbox and no plan query is spent.
 */

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const VALIDAR = `mutation V($c: [ComprobanteInput!]!, $api: CredencialesApiSunatInput) {
  validarComprobantes(comprobantes: $c, credencialesApi: $api) {
    cantidadDeComprobantes
    comprobantes { rucEmisor serieDocumento numeroDocumento fechaDeEmision total fuente comprobanteEstadoCodigo comprobanteEstadoDescripcion
      empresaEstadoDescripcion empresaCondicionDescripcion observaciones error { code message retryable } }
  }
}`;

type Validado = {
  fuente: string | null;
  numeroDocumento: string;
  serieDocumento: string;
  comprobanteEstadoCodigo: string | null;
  comprobanteEstadoDescripcion: string | null;
  error: { code: string; message: string; retryable: boolean } | null;
} & Record<string, unknown>;
type Answer = { validarComprobantes: { cantidadDeComprobantes: number; comprobantes: (Validado | null)[] } | null };

const sunatCalls = (s: Stack) => s.sandbox.calls.filter((c) => c.path.startsWith('/v1/'));
const paidCalls = (s: Stack) => s.sandbox.callsTo('/validacion-multiple-cpe');

async function validar(s: Stack, comprobantes: object[], api?: object) {
  const quota = s.sandbox.quotaOf(TOKEN)!;
  const { body } = await s.gql<Answer, Record<string, unknown>>(VALIDAR, { c: comprobantes, api });
  return { body, billed: quota - s.sandbox.quotaOf(TOKEN)!, answer: body.data?.validarComprobantes };
}

describe("validarComprobantes through SUNAT's free API", () => {
  it('asks SUNAT with the call’s credentials, answers every receipt with fuente SUNAT, and spends no plan query', async () => {
    stack = await startStack({ env: { MAX_OPERATION_COST: '5' } });
    const list = Array.from({ length: 12 }, (_, i) => ({ ...RECEIPT, numeroDocumento: String(1531 + i) }));
    const { body, billed, answer } = await validar(stack, list, SUNAT_SAMPLE);
    expect(body.errors).toBeUndefined();
    expect(answer!.cantidadDeComprobantes).toBe(12);
    expect(answer!.comprobantes[1]).toMatchObject({
      rucEmisor: '20100123453',
      numeroDocumento: '1532',
      fechaDeEmision: '2026-10-01',
      total: '1180.00',
      fuente: 'SUNAT',
      comprobanteEstadoCodigo: '1',
      comprobanteEstadoDescripcion: 'ACEPTADO',
      empresaEstadoDescripcion: 'ACTIVO',
      empresaCondicionDescripcion: 'HABIDO',
      error: null,
    });
    expect(answer!.comprobantes[3]).toMatchObject({ numeroDocumento: '1534', comprobanteEstadoDescripcion: 'NO AUTORIZADO' });
    // Twelve receipts over a cost limit of 5: free through SUNAT, estimated and spent 0.
    expect(body.extensions?.['cost']).toMatchObject({ estimated: 0, queries: 0, upstreamCalls: 0 });
    expect(billed).toBe(0);
    expect(paidCalls(stack)).toHaveLength(0);
    expect(sunatCalls(stack).filter((c) => c.path.endsWith('/validarcomprobante'))).toHaveLength(12);
    expect(sunatCalls(stack).filter((c) => c.path.includes('/oauth2/token'))).toHaveLength(1);
  });

  it('keeps a receipt SUNAT refuses or cannot answer on that receipt, and answers the others', async () => {
    stack = await startStack({ app: { sunatRetryBaseMs: 10 } });
    const { body, billed, answer } = await validar(
      stack,
      [RECEIPT, { ...RECEIPT, serieDocumento: 'SBAD' }, { ...RECEIPT, serieDocumento: 'S500' }],
      SUNAT_SAMPLE,
    );
    expect(body.errors).toBeUndefined();
    const [ok, refused, down] = answer!.comprobantes as Validado[];
    expect(ok).toMatchObject({ fuente: 'SUNAT', comprobanteEstadoCodigo: '1', error: null });
    expect(refused).toMatchObject({ fuente: 'SUNAT', comprobanteEstadoCodigo: null, serieDocumento: 'SBAD' });
    expect(refused!.error).toMatchObject({ code: 'INVALID_INPUT', retryable: false });
    expect(refused!.error!.message).toContain('El comprobante ingresado no es válido');
    expect(down).toMatchObject({ fuente: null, comprobanteEstadoCodigo: null, error: { code: 'UPSTREAM_UNAVAILABLE', retryable: true } });
    expect(answer!.cantidadDeComprobantes).toBe(1);
    expect(billed).toBe(0);
    // /metrics counts SUNAT's answers by call and outcome: the 5xx tried five times, never a clientId.
    const metrics = await (await fetch(`${stack.url}/metrics`)).text();
    expect(metrics).toMatch(/gateway_sunat_calls_total\{call="receipt",outcome="unavailable"\} 5\n/);
    expect(metrics).toMatch(/gateway_sunat_calls_total\{call="receipt",outcome="answered"\} 2\n/);
    expect(metrics).toMatch(/gateway_sunat_calls_total\{call="token",outcome="answered"\} 1\n/);
    expect(metrics).not.toContain(SUNAT_SAMPLE.clientId);
  });

  it('fails the field with SUNAT_CREDENTIALS_REJECTED before any receipt is asked, and shows no secret', async () => {
    stack = await startStack();
    const secret = 'not-the-secret-9f8e7d';
    const { body, billed } = await validar(stack, [RECEIPT, RECEIPT], { ...SUNAT_SAMPLE, clientSecret: secret });
    expect(body.errors?.map((e) => e.extensions?.['code'])).toEqual(['SUNAT_CREDENTIALS_REJECTED']);
    expect(body.errors?.[0]?.extensions?.['retryable']).toBe(false);
    expect(JSON.stringify(body)).not.toContain(secret);
    expect(stack.logs.join('')).not.toContain(secret);
    expect(sunatCalls(stack).filter((c) => c.path.endsWith('/validarcomprobante'))).toHaveLength(0);
    expect(billed).toBe(0);
  });

  it('refuses credentials written in the document, without quoting them', async () => {
    stack = await startStack();
    const { body } = await stack.gql(
      `mutation { validarComprobantes(comprobantes: [{ rucEmisor: "20100123453", codigoTipoDocumento: "01", serieDocumento: "F001", numeroDocumento: "1", fechaDeEmision: "2026-10-01", total: "1.00" }], credencialesApi: { rucEmpresa: "20100123453", clientId: "x", clientSecret: "written-secret-123" }) { cantidadDeComprobantes } }`,
    );
    expect(body.errors?.map((e) => e.extensions?.['code'])).toEqual(['SECRET_IN_DOCUMENT']);
    expect(JSON.stringify(body)).not.toContain('written-secret-123');
    expect(sunatCalls(stack)).toHaveLength(0);
  });

  it('asks SUNAT with the gateway’s own credentials (SUNAT_API_*) when the call brings none', async () => {
    stack = await startStack({
      env: {
        SUNAT_API_CLIENT_ID: SUNAT_SAMPLE.clientId,
        SUNAT_API_CLIENT_SECRET: SUNAT_SAMPLE.clientSecret,
        SUNAT_API_RUC: SUNAT_SAMPLE.rucEmpresa,
      },
    });
    const { answer, billed, body } = await validar(stack, [RECEIPT]);
    expect(answer!.comprobantes[0]).toMatchObject({ fuente: 'SUNAT', comprobanteEstadoCodigo: '1' });
    expect(body.extensions?.['cost']).toMatchObject({ estimated: 0, queries: 0 });
    expect(billed).toBe(0);
  });

  it('sends to the paid service, with SUNAT_API_FALLBACK=servicio, only what SUNAT could not answer', async () => {
    stack = await startStack({ env: { SUNAT_API_FALLBACK: 'servicio' }, app: { sunatRetryBaseMs: 10 } });
    const { answer, billed, body } = await validar(
      stack,
      [RECEIPT, { ...RECEIPT, serieDocumento: 'S500' }, { ...RECEIPT, serieDocumento: 'SBAD' }],
      SUNAT_SAMPLE,
    );
    const [ok, down, refused] = answer!.comprobantes as Validado[];
    expect(ok).toMatchObject({ fuente: 'SUNAT' });
    expect(down).toMatchObject({ fuente: 'SERVICIO', serieDocumento: 'S500', error: null });
    expect(refused).toMatchObject({ fuente: 'SUNAT', error: { code: 'INVALID_INPUT' } });
    expect(
      paidCalls(stack).map((c) => (c.body as { comprobantes: { serie_documento: string }[] }).comprobantes.map((r) => r.serie_documento)),
    ).toEqual([['S500']]);
    expect(billed).toBe(1);
    // Priced as if every receipt could fall back.
    expect(body.extensions?.['cost']).toMatchObject({ estimated: 3, queries: 1 });
  });

  it('holds no other caller while SUNAT is slow: lookups answer as before meanwhile', async () => {
    stack = await startStack();
    // Ten receipts SUNAT answers after 3 s each, five at a time: some 6 s of waiting on SUNAT.
    const slow = Array.from({ length: 10 }, (_, i) => ({ ...RECEIPT, serieDocumento: 'SLNT', numeroDocumento: String(i + 1) }));
    const started = Date.now();
    const validating = validar(stack, slow, SUNAT_SAMPLE);
    const times: number[] = [];
    while (Date.now() - started < 4000) {
      const t = performance.now();
      const { body } = await stack.gql('{ contribuyente(ruc: "20100123453") { ruc } }');
      expect(body.errors).toBeUndefined();
      times.push(performance.now() - t);
    }
    const { answer } = await validating;
    expect(answer!.comprobantes.every((c) => c?.fuente === 'SUNAT')).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(5900);
    expect(times.length).toBeGreaterThan(20);
    expect(Math.max(...times)).toBeLessThan(500);
  });

  it('validates as before, through the paid service, without credentials', async () => {
    stack = await startStack();
    const { answer, billed } = await validar(stack, [RECEIPT]);
    expect(answer!.comprobantes[0]).toMatchObject({
      fuente: 'SERVICIO',
      rucEmisor: '20100123453',
      comprobanteEstadoDescripcion: 'ACEPTADO',
    });
    expect(billed).toBe(1);
    expect(sunatCalls(stack)).toHaveLength(0);
  });
});

describe("SUNAT's pace in a fleet (REDIS_URL)", () => {
  it('keeps at most SUNAT_API_CONCURRENCY calls in flight per clientId across every instance', async () => {
    const redis = await startRedis();
    const sandbox = await startSandbox();
    // Every answer 100 ms late: calls of both instances overlap.
    sandbox.setFaults({ latencyMs: 100 });
    const env = { REDIS_URL: redis.url, CACHE_KEY_SECRET: 'a-secret-shared-by-the-fleet' };
    const a = await startStack({ sharedSandbox: sandbox, env });
    const b = await startStack({ sharedSandbox: sandbox, env });
    try {
      const list = (from: number) => Array.from({ length: 20 }, (_, i) => ({ ...RECEIPT, numeroDocumento: String(from + i) }));
      const [one, two] = await Promise.all([validar(a, list(100), SUNAT_SAMPLE), validar(b, list(200), SUNAT_SAMPLE)]);
      expect(one.body.errors).toBeUndefined();
      expect(two.body.errors).toBeUndefined();
      expect(sunatCalls(a).filter((c) => c.path.endsWith('/validarcomprobante'))).toHaveLength(40);
      // Each instance alone would have had 5 in flight: together, still 5.
      expect(sandbox.peakInFlight).toBe(5);
    } finally {
      await Promise.all([a.close(), b.close()]);
      await sandbox.close();
      await redis.stop();
    }
  });
});
