import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { codes, docExample, startRedis, startStack, TOKEN, type Stack } from '../helpers.js';
import { TRIGGERS } from '../../src/sandbox/data.js';

let stack: Stack;
beforeAll(async () => {
  // The paid lookup's own behaviour; SUNAT's listing is the subject of the last block.
  stack = await startStack({ env: { TIPO_DE_CAMBIO: 'servicio' } });
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
    const cached = await startStack({ env: { CACHE: 'on', CACHE_TTL_TIPO_DE_CAMBIO_MS: '100', TIPO_DE_CAMBIO: 'servicio' } });
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

describe("tipoDeCambio and tiposDeCambio from SUNAT's month listing (TIPO_DE_CAMBIO)", () => {
  const LISTING = '/cl-at-ittipcam/tcS01Alias/listarTipoCambio';
  const listings = (s: Stack) => s.sandbox.callsTo(LISTING);
  const RATE = '{ fecha fechaSunat moneda compra venta fuente }';
  const FREE = 'sandbox-free';
  let free: Stack;
  beforeAll(async () => {
    // As npm start has it: the sandbox's listing, the months kept under PADRON_DIR (a directory of the stack's own).
    free = await startStack({ sharedSandbox: stack.sandbox });
  });
  afterAll(() => free.close());

  it('answers from the listing for no query, the month asked once with mes from 0, a token and the browser’s Referer and Origin', async () => {
    const before = stack.sandbox.quotaOf(TOKEN)!;
    const { body } = await free.gql(
      `{ domingo: tipoDeCambio(fecha: "2026-11-22") ${RATE} martes: tipoDeCambio(fecha: "2026-11-03") ${RATE} }`,
    );
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      domingo: { fecha: '2026-11-22', fechaSunat: '2026-11-20', moneda: 'USD', compra: '3.750', venta: '3.758', fuente: 'SUNAT' },
      martes: expect.objectContaining({ fecha: '2026-11-03', fechaSunat: '2026-11-03', fuente: 'SUNAT' }),
    });
    expect(cost(body)).toMatchObject({ queries: 0, upstreamCalls: 0 });
    expect(stack.sandbox.quotaOf(TOKEN)).toBe(before);
    expect(stack.sandbox.callsTo('/tipo-de-cambio')).toHaveLength(0);
    const [asked, ...more] = listings(stack);
    expect(more).toHaveLength(0);
    expect(asked!.body).toEqual({ anio: 2026, mes: 10, token: expect.stringMatching(/^.+$/) });
    expect(asked!.headers['referer']).toMatch(/^https:\/\/e-consulta\.sunat\.gob\.pe\//);
    expect(asked!.headers['origin']).toBe('https://e-consulta.sunat.gob.pe');
    expect(JSON.stringify(asked!.headers)).not.toContain(TOKEN);
    // The month is kept: another date of it asks nothing.
    stack.sandbox.reset();
    expect((await free.gql('{ tipoDeCambio(fecha: "2026-11-09") { compra } }')).body.errors).toBeUndefined();
    expect(listings(stack)).toHaveLength(0);
  });

  it("answers docs/sunat.md's example as it shows it", async () => {
    const { sent, token, shown } = docExample('docs/sunat.md', "## Exchange rates from SUNAT's listing");
    expect(token).toBe(TOKEN);
    expect((await free.gql(sent.query, sent.variables)).body).toEqual(shown);
  });

  it('gives each day of a range the rate the paid service gives it: a weekend and a holiday take the last business day', async () => {
    const { body } = await free.gql(`{ tiposDeCambio(desde: "2026-10-30", hasta: "2026-11-03") ${RATE} }`);
    expect(body.errors).toBeUndefined();
    const rates = (body.data as { tiposDeCambio: Record<string, string>[] }).tiposDeCambio;
    // Worked out by hand: 30 Oct a Friday, 31 Oct a Saturday, 1 Nov a Sunday (and All Saints'), 2 Nov a Monday.
    expect(rates.map((r) => [r['fecha'], r['fechaSunat']])).toEqual([
      ['2026-10-30', '2026-10-30'],
      ['2026-10-31', '2026-10-30'],
      ['2026-11-01', '2026-10-30'],
      ['2026-11-02', '2026-11-02'],
      ['2026-11-03', '2026-11-03'],
    ]);
    expect(cost(body)['queries']).toBe(0);
    for (const rate of rates) {
      // Another plan's token: the trigger tests above left this file's token throttled for a while.
      const paid = await stack.gql<{ tipoDeCambio: object }, never>(
        `{ tipoDeCambio(fecha: "${rate['fecha']}") { fechaSunat compra venta } }`,
        undefined,
        { token: FREE },
      );
      expect(paid.body.errors).toBeUndefined();
      expect({ ...paid.body.data!.tipoDeCambio, fuente: 'SUNAT' }).toEqual({
        fechaSunat: rate['fechaSunat'],
        compra: rate['compra'],
        venta: rate['venta'],
        fuente: rate['fuente'],
      });
    }
  });

  it('starts a month on the last business day of the month before: 2026-02-01, a Sunday, is 2026-01-30', async () => {
    stack.sandbox.reset();
    const { body } = await free.gql(`{ tiposDeCambio(desde: "2026-02-01", hasta: "2026-02-02") { fecha fechaSunat } }`);
    expect(body.data).toEqual({
      tiposDeCambio: [
        { fecha: '2026-02-01', fechaSunat: '2026-01-30' },
        { fecha: '2026-02-02', fechaSunat: '2026-02-02' },
      ],
    });
    expect(
      listings(stack)
        .map((c) => (c.body as { mes: number }).mes)
        .sort(),
    ).toEqual([0, 1]);
  });

  it('refuses a range past 366 days, in the wrong order, or ending after today in Lima, for free and asking nothing', async () => {
    stack.sandbox.reset();
    const tomorrow = new Date(Date.now() - 5 * 3600_000 + 86_400_000).toISOString().slice(0, 10);
    for (const [desde, hasta] of [
      ['2024-01-01', '2025-01-01'],
      ['2026-11-03', '2026-11-02'],
      ['2026-11-01', tomorrow],
      ['2026-11-31', '2026-12-01'],
    ]) {
      const { body } = await free.gql(`{ tiposDeCambio(desde: "${desde}", hasta: "${hasta}") { fecha } }`);
      expect(codes(body), `${desde}..${hasta}`).toEqual(['INVALID_INPUT']);
    }
    const leap = await free.gql(`{ tiposDeCambio(desde: "2024-01-01", hasta: "2024-12-31") { fecha } }`);
    expect((leap.body.data as { tiposDeCambio: unknown[] }).tiposDeCambio).toHaveLength(366);
    expect(stack.sandbox.calls.filter((c) => c.path !== LISTING)).toHaveLength(0);
  });

  it('keeps the months on disk: a restarted gateway asks SUNAT nothing for a month it read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rates-'));
    try {
      const first = await startStack({ sharedSandbox: stack.sandbox, env: { PADRON_DIR: dir } });
      await first.gql('{ tipoDeCambio(fecha: "2026-09-15") { compra } }');
      await first.close();
      stack.sandbox.reset();
      const again = await startStack({ sharedSandbox: stack.sandbox, env: { PADRON_DIR: dir } });
      const { body } = await again.gql(`{ tipoDeCambio(fecha: "2026-09-19") ${RATE} }`);
      await again.close();
      expect(body.data).toMatchObject({ tipoDeCambio: { fechaSunat: '2026-09-18', fuente: 'SUNAT' } });
      expect(stack.sandbox.calls).toHaveLength(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('asks the current month again when the day wanted is missing and it was read over an hour ago, and not before', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rates-'));
    const month = limaToday().slice(0, 7);
    const kept = (fetchedAt: number) =>
      writeFileSync(join(dir, 'tipos-de-cambio', `${month}.json`), JSON.stringify({ days: [], fetchedAt }));
    try {
      mkdirSync(join(dir, 'tipos-de-cambio'));
      kept(Date.now() - 10 * 60_000);
      const recent = await startStack({ sharedSandbox: stack.sandbox, env: { PADRON_DIR: dir } });
      stack.sandbox.reset();
      await recent.gql('{ tipoDeCambio { fecha } }');
      await recent.close();
      expect(listings(stack).filter((c) => (c.body as { mes: number }).mes === Number(month.slice(5)) - 1)).toHaveLength(0);
      kept(Date.now() - 2 * 3600_000);
      const old = await startStack({ sharedSandbox: stack.sandbox, env: { PADRON_DIR: dir } });
      stack.sandbox.reset();
      await old.gql('{ tipoDeCambio { fecha } }');
      await old.close();
      expect(listings(stack).filter((c) => (c.body as { mes: number }).mes === Number(month.slice(5)) - 1)).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('falls back to the paid lookup when the listing cannot be read (fuente SERVICIO, one query); tiposDeCambio is UPSTREAM_UNAVAILABLE', async () => {
    const down = createServer((_req, res) => res.writeHead(503).end('<html>down</html>'));
    await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
    const broken = await startStack({
      sharedSandbox: stack.sandbox,
      env: { TIPO_DE_CAMBIO: `http://127.0.0.1:${(down.address() as AddressInfo).port}` },
    });
    try {
      stack.sandbox.reset();
      const before = stack.sandbox.quotaOf(TOKEN)!;
      const { body } = await broken.gql(`{ tipoDeCambio(fecha: "2026-11-22") ${RATE} }`);
      expect(body.data).toMatchObject({ tipoDeCambio: { fechaSunat: '2026-11-20', compra: '3.750', fuente: 'SERVICIO' } });
      expect(before - stack.sandbox.quotaOf(TOKEN)!).toBe(1);
      expect(stack.sandbox.callsTo('/tipo-de-cambio')).toHaveLength(1);
      const range = await broken.gql('{ tiposDeCambio(desde: "2026-11-02", hasta: "2026-11-03") { fecha } }');
      expect(range.body.errors?.map((e) => [e.extensions?.['code'], e.extensions?.['retryable']])).toEqual([
        ['UPSTREAM_UNAVAILABLE', true],
      ]);
    } finally {
      await broken.close();
      await new Promise((resolve) => down.close(resolve));
    }
  });

  it('with TIPO_DE_CAMBIO=servicio, asks only the paid service, and tiposDeCambio says why it cannot answer', async () => {
    stack.sandbox.reset();
    const { body } = await stack.gql(
      `{ tipoDeCambio(fecha: "2026-11-22") { fuente } tiposDeCambio(desde: "2026-11-02", hasta: "2026-11-03") { fecha } }`,
      undefined,
      { token: FREE },
    );
    // tiposDeCambio is a non-null list: its error takes `data` with it.
    expect(body.data).toBeNull();
    expect(codes(body)).toEqual(['UPSTREAM_UNAVAILABLE']);
    const alone = await stack.gql(`{ tipoDeCambio(fecha: "2026-11-22") { fuente } }`, undefined, { token: FREE });
    expect(alone.body.data).toEqual({ tipoDeCambio: { fuente: 'SERVICIO' } });
    expect(body.errors![0]!.message).toContain('TIPO_DE_CAMBIO=servicio');
    expect(listings(stack)).toHaveLength(0);
  });
});

describe("SUNAT's months of rates in a fleet", () => {
  it('are read once for every instance sharing REDIS_URL', async () => {
    const redis = await startRedis();
    const env = { REDIS_URL: redis.url, CACHE_KEY_SECRET: 'a-secret-shared-by-the-fleet' };
    const one = await startStack({ sharedSandbox: stack.sandbox, env });
    const other = await startStack({ sharedSandbox: stack.sandbox, env });
    try {
      stack.sandbox.reset();
      expect((await one.gql('{ tipoDeCambio(fecha: "2026-08-14") { fuente } }')).body.data).toEqual({ tipoDeCambio: { fuente: 'SUNAT' } });
      const { body } = await other.gql('{ tiposDeCambio(desde: "2026-08-01", hasta: "2026-08-03") { fechaSunat } }');
      expect(body.data).toEqual({
        tiposDeCambio: [{ fechaSunat: '2026-07-31' }, { fechaSunat: '2026-07-31' }, { fechaSunat: '2026-08-03' }],
      });
      // August once, by the first; July by the second, which needed it for the 1st.
      expect(stack.sandbox.calls.map((c) => (c.body as { mes: number }).mes)).toEqual([7, 6]);
    } finally {
      await Promise.all([one.close(), other.close()]);
      await redis.stop();
    }
  });
});
