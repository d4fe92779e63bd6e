import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { codes, startStack, TOKEN, type Stack } from '../helpers.js';
import { TRIGGERS } from '../../src/sandbox/data.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());
afterEach(() => stack.sandbox.reset());

const cost = (body: { extensions?: Record<string, unknown> }) => body.extensions?.['cost'] as Record<string, number>;
/** Today in Lima, worked out apart from the gateway: UTC-5 all year. */
const limaToday = () => new Date(Date.now() - 5 * 3600_000).toISOString().slice(0, 10);

describe('tipoDeCambio(fecha) (POST /tipo-de-cambio)', () => {
  it('answers a Sunday with Friday’s rate, compra and venta as the decimal text SUNAT writes (JSON 3.75 is "3.750"), for one query', async () => {
    const before = stack.sandbox.quotaOf(TOKEN)!;
    const { body } = await stack.gql('{ tipoDeCambio(fecha: "2026-11-22") { fecha fechaSunat moneda compra venta consultadoEn } }');
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      tipoDeCambio: {
        fecha: '2026-11-22',
        fechaSunat: '2026-11-20',
        moneda: 'USD',
        compra: '3.750',
        venta: '3.758',
        consultadoEn: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    });
    expect(stack.sandbox.callsTo('/tipo-de-cambio').map((c) => c.body)).toEqual([{ fecha: '2026-11-22', moneda: 'USD' }]);
    expect(cost(body)).toMatchObject({ estimated: 1, queries: before - stack.sandbox.quotaOf(TOKEN)!, upstreamCalls: 1 });
    expect(cost(body)['queries']).toBe(1);
  });

  it('reads the other spelling the service uses (fecha_busqueda, decimal texts) alike', async () => {
    const { body } = await stack.gql('{ tipoDeCambio(fecha: "2025-06-01") { fechaSunat compra venta } }');
    expect(body.data).toEqual({
      tipoDeCambio: { fechaSunat: '2025-05-30', compra: expect.stringMatching(/^3\.\d{3}$/), venta: expect.stringMatching(/^3\.\d{3}$/) },
    });
  });

  it('asks for today in Lima when no date is given, priced as one query before it runs', async () => {
    const { body } = await stack.gql('{ tipoDeCambio { fecha fechaSunat } }');
    expect(body.errors).toBeUndefined();
    const today = limaToday();
    expect(body.data).toMatchObject({ tipoDeCambio: { fecha: today } });
    expect(stack.sandbox.callsTo('/tipo-de-cambio').map((c) => c.body)).toEqual([{ fecha: today, moneda: 'USD' }]);
    expect(cost(body)).toMatchObject({ estimated: 1, queries: 1 });
  });

  it('refuses a date that is not a real YYYY-MM-DD locally, for free', async () => {
    const { body } = await stack.gql(
      '{ a: tipoDeCambio(fecha: "2026-02-30") { compra } b: tipoDeCambio(fecha: "22/11/2026") { compra } c: tipoDeCambio(fecha: "") { compra } }',
    );
    expect(codes(body)).toEqual(['INVALID_INPUT', 'INVALID_INPUT', 'INVALID_INPUT']);
    expect(stack.sandbox.calls).toHaveLength(0);
    expect(cost(body)).toMatchObject({ estimated: 0, queries: 0 });
  });

  it('refuses a date past tomorrow in Lima, or before the first rate, locally, for free; tomorrow is asked', async () => {
    const inLima = (days: number) => new Date(Date.now() - 5 * 3_600_000 + days * 86_400_000).toISOString().slice(0, 10);
    const { body } = await stack.gql(
      `{ a: tipoDeCambio(fecha: "${inLima(2)}") { compra } b: tipoDeCambio(fecha: "9999-12-31") { compra } c: tipoDeCambio(fecha: "1989-12-31") { compra } d: tipoDeCambio(fecha: "${inLima(1)}") { fecha } }`,
    );
    expect(body.errors?.map((e) => [e.path?.[0], e.extensions?.['code']])).toEqual([
      ['a', 'INVALID_INPUT'],
      ['b', 'INVALID_INPUT'],
      ['c', 'INVALID_INPUT'],
    ]);
    expect(body.errors?.[0]?.message).toContain('posterior a mañana en Lima');
    expect(stack.sandbox.callsTo('/tipo-de-cambio').map((c) => (c.body as { fecha: string }).fecha)).toEqual([inLima(1)]);
    expect(cost(body)).toMatchObject({ estimated: 1, queries: 1 });
  });

  it('asks each date once per operation, however it is written', async () => {
    const { body } = await stack.gql(
      '{ a: tipoDeCambio(fecha: "2026-11-20") { compra } b: tipoDeCambio(fecha: " 2026-11-20 ") { venta } c: tipoDeCambio { fecha } d: tipoDeCambio(fecha: "%TODAY%") { fecha } }'.replace(
        '%TODAY%',
        limaToday(),
      ),
    );
    expect(body.errors).toBeUndefined();
    expect(
      stack.sandbox
        .callsTo('/tipo-de-cambio')
        .map((c) => (c.body as { fecha: string }).fecha)
        .sort(),
    ).toEqual(['2026-11-20', limaToday()].sort());
    expect(cost(body)).toMatchObject({ estimated: 2, queries: 2 });
  });
});

describe('the new lookups’ failures, each from a sandbox trigger (a DNI, a date)', () => {
  const cases = [
    ['unavailable', 'UPSTREAM_UNAVAILABLE'],
    ['notFound', 'DOCUMENT_NOT_FOUND'],
    ['planDenied', 'FORBIDDEN'],
    ['badRecord', 'UPSTREAM_ERROR'],
    ['otherDocument', 'UPSTREAM_ERROR'],
    ['throttled', 'RATE_LIMITED'],
  ] as const;
  for (const [trigger, code] of cases) {
    it(`${trigger}: ${code} for that field only, billed as the service bills it`, async () => {
      const before = stack.sandbox.quotaOf(TOKEN)!;
      const { dni, fecha } = TRIGGERS[trigger];
      const { body } = await stack.gql(
        `{ persona(dni: "${dni}") { dni } tipoDeCambio(fecha: "${fecha}") { compra } ok: tipoDeCambio(fecha: "2026-11-20") { compra } }`,
      );
      expect(codes(body)).toEqual([code, code]);
      expect(body.data).toEqual({ persona: null, tipoDeCambio: null, ok: { compra: '3.750' } });
      expect(cost(body)['queries']).toBe(before - stack.sandbox.quotaOf(TOKEN)!);
    });
  }
});

describe('tipoDeCambio in the cache', () => {
  it('keeps a past date’s rate (it never changes), and today’s only for CACHE_TTL_TIPO_DE_CAMBIO_MS', async () => {
    const cached = await startStack({ env: { CACHE: 'on', CACHE_TTL_TIPO_DE_CAMBIO_MS: '100' } });
    try {
      const ask = () => cached.gql(`{ pasado: tipoDeCambio(fecha: "2026-11-20") { compra } hoy: tipoDeCambio { fecha } }`);
      expect((await ask()).body.errors).toBeUndefined();
      await new Promise((r) => setTimeout(r, 250));
      const { body } = await ask();
      expect(body.errors).toBeUndefined();
      const asked = cached.sandbox.callsTo('/tipo-de-cambio').map((c) => (c.body as { fecha: string }).fecha);
      expect(asked).toEqual(['2026-11-20', limaToday(), limaToday()]);
      expect(cost(body)).toMatchObject({ queries: 1, cacheHits: 1 });
    } finally {
      await cached.close();
    }
  });
});

describe('a plan that does not include a lookup beyond the spec, refused at 403 (the free plan’s branches)', () => {
  it('is FORBIDDEN for that field only, not billed, and the rest of the answer is intact', async () => {
    const before = stack.sandbox.quotaOf('sandbox-free')!;
    const { body } = await stack.gql(
      '{ contribuyente(ruc: "20100123453") { ruc establecimientos { codigo } representantes { cargo } } tipoDeCambio(fecha: "2026-11-20") { compra } }',
      undefined,
      { token: 'sandbox-free' },
    );
    expect(body.errors?.map((e) => [e.path, e.extensions?.['code'], e.extensions?.['upstreamStatus']])).toEqual([
      [['contribuyente', 'establecimientos'], 'FORBIDDEN', 403],
    ]);
    expect(body.data).toEqual({
      contribuyente: { ruc: '20100123453', establecimientos: null, representantes: [{ cargo: 'GERENTE GENERAL' }, { cargo: 'APODERADO' }] },
      tipoDeCambio: { compra: '3.750' },
    });
    expect(cost(body)['queries']).toBe(before - stack.sandbox.quotaOf('sandbox-free')!);
    expect(cost(body)['queries']).toBe(3);
  });
});
