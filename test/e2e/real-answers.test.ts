import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TRIGGERS } from '../../src/sandbox/data.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { postBodyOnce, receipts, spawnGateway, startStack, type OnceAnswer, type SpawnedGateway, type Stack } from '../helpers.js';

/**
 * The registry as it really answers (shared/spec/upstream-notes.md): whole records, empty
 * values as null, receipts with their codes, its refusals without a code, throttling, and the
 * last good record while it is down.
 */

const NATURAL_PERSON = '10456789019';
const FULL = `direccion direccionCompleta departamento provincia distrito ubigeo consultadoEn`;

describe('whole records, empty is null (the sandbox answers like the service)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  it('Contribuyente and its detalle carry the place fields, the location code and the percepción flags', async () => {
    const { body } = await stack.gql(`{ contribuyente(ruc: "20100123453") { ${FULL} esAgenteDePercepcion esAgenteDePercepcionCombustible
      detalle { ${FULL} } } }`);
    expect(body.errors).toBeUndefined();
    const c = (body.data as { contribuyente: Record<string, unknown> & { detalle: Record<string, unknown> } }).contribuyente;
    const place = {
      direccion: 'AV. JAVIER PRADO ESTE NRO. 1234',
      direccionCompleta: 'AV. JAVIER PRADO ESTE NRO. 1234, LIMA - LIMA - SAN ISIDRO',
      departamento: 'LIMA',
      provincia: 'LIMA',
      distrito: 'SAN ISIDRO',
      ubigeo: '150131',
    };
    expect(c).toMatchObject({ ...place, esAgenteDePercepcion: true, esAgenteDePercepcionCombustible: false });
    expect(c.detalle).toMatchObject(place);
    for (const at of [c.consultadoEn, c.detalle.consultadoEn]) {
      expect(at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(Math.abs(Date.parse(at as string) - Date.now())).toBeLessThan(60_000);
    }
  });

  it('a natural person whose address comes back "" and "-", with ubigeo [null, null, null], resolves with nulls and no error', async () => {
    const { body } = await stack.gql(`{ contribuyente(ruc: "${NATURAL_PERSON}") { ruc ${FULL} detalle { ${FULL} } } }`);
    expect(body.errors).toBeUndefined();
    const c = (body.data as { contribuyente: Record<string, unknown> & { detalle: Record<string, unknown> } }).contribuyente;
    const empty = { direccion: null, direccionCompleta: null, departamento: null, provincia: null, distrito: null, ubigeo: null };
    expect(c).toMatchObject(empty);
    expect(c.detalle).toMatchObject(empty);
    expect(stack.sandbox.callsTo('/ruc').at(-1)?.body).toEqual({ ruc: NATURAL_PERSON });
  });

  it('receipts carry their state code, its typed form, and the issuer’s state and condition, from either spelling', async () => {
    const fields = `comprobantes { numeroDocumento comprobanteEstadoCodigo comprobanteEstado comprobanteEstadoDescripcion
      empresaEstadoCodigo empresaEstadoDescripcion empresaCondicionCodigo empresaCondicionDescripcion }`;
    const sent = [...receipts(2), { ...receipts(1)[0]!, rucEmisor: '20999999990', numeroDocumento: '7' }];
    const objects = await stack.gql(`mutation($c: [ComprobanteInput!]!) { validarComprobantes(comprobantes: $c) { ${fields} } }`, {
      c: sent,
    });
    expect(objects.body.errors).toBeUndefined();
    const lines = sent.map((r) =>
      [r.rucEmisor, r.codigoTipoDocumento, r.serieDocumento, r.numeroDocumento, r.fechaDeEmision, r.total].join('|'),
    );
    const text = await stack.gql(`mutation($c: [String!]!) { validarComprobantesTexto(comprobantes: $c) { ${fields} } }`, { c: lines });
    expect(text.body.errors).toBeUndefined();
    // The -v2 answer spells it empresa_estado_description: the same field either way.
    expect(JSON.stringify(stack.sandbox.callsTo('/validacion-multiple-cpe-v2').length)).toBe('1');
    for (const body of [objects.body, text.body]) {
      const list = Object.values(body.data as Record<string, { comprobantes: Record<string, unknown>[] }>)[0]!.comprobantes;
      expect(list[0]).toEqual({
        numeroDocumento: '1',
        comprobanteEstadoCodigo: '1',
        comprobanteEstado: 'ACEPTADO',
        comprobanteEstadoDescripcion: 'ACEPTADO',
        empresaEstadoCodigo: '00',
        empresaEstadoDescripcion: 'ACTIVO',
        empresaCondicionCodigo: '00',
        empresaCondicionDescripcion: 'HABIDO',
      });
      // An unknown issuer: "-" is no value.
      expect(list[2]).toMatchObject({
        comprobanteEstadoCodigo: '0',
        comprobanteEstado: 'NO_EXISTE',
        empresaEstadoCodigo: null,
        empresaEstadoDescripcion: null,
      });
    }
  });
});

describe('refusals as the service sends them', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { CACHE: 'on' } });
  });
  afterAll(() => stack.close());
  beforeEach(() => {
    stack.sandbox.reset();
    stack.sandbox.setFaults({});
  });
  const lookup = (ruc: string) => stack.gql(`{ contribuyente(ruc: "${ruc}") { ruc } }`);

  it('a 200 without a code saying nothing was found is DOCUMENT_NOT_FOUND, kept like a 404: asked again, no call', async () => {
    const first = await lookup(TRIGGERS.notFoundWithoutCode.ruc);
    expect(first.body.errors?.[0]?.extensions).toMatchObject({ code: 'DOCUMENT_NOT_FOUND', retryable: false });
    const again = await lookup(TRIGGERS.notFoundWithoutCode.ruc);
    expect(again.body.errors?.[0]?.extensions).toMatchObject({ code: 'DOCUMENT_NOT_FOUND' });
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(1);
  });

  it('a 2xx with PLAN_DENIED is FORBIDDEN, costs nothing, and refuses that operation alone for the rest of the request', async () => {
    const { body } = await stack.gql(
      `{ a: contribuyente(ruc: "${TRIGGERS.planDenied.ruc}") { ruc } b: contribuyenteDetalle(ruc: "20100123453") { ruc } }`,
    );
    expect(body.errors?.map((e) => [e.path, e.extensions?.['code'], e.extensions?.['retryable']])).toEqual([[['a'], 'FORBIDDEN', false]]);
    expect(body.data).toEqual({ a: null, b: { ruc: '20100123453' } });
    expect(body.extensions?.['cost']).toMatchObject({ queries: 1, upstreamCalls: 2 });
  });

  it('a 2xx saying the plan’s queries ran out is QUOTA_EXCEEDED, and costs nothing', async () => {
    const { body } = await lookup(TRIGGERS.planExhausted.ruc);
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'QUOTA_EXCEEDED', retryable: false });
    expect(body.extensions?.['cost']).toMatchObject({ queries: 0, upstreamCalls: 1 });
  });

  it('a throttling 429 is RATE_LIMITED, retryable, with Retry-After’s seconds; the token’s next lookup is answered at once without a call', async () => {
    const { body } = await lookup(TRIGGERS.throttled.ruc);
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', retryable: true, retryAfterSeconds: 30 });
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(1);
    // 30 s does not fit the 15 s deadline: refused at once, with what is left.
    const started = Date.now();
    const next = await lookup('20501234568');
    expect(Date.now() - started).toBeLessThan(1000);
    expect(next.body.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', retryable: true });
    expect(next.body.errors?.[0]?.extensions?.['retryAfterSeconds']).toBeGreaterThan(25);
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(1);
    // Another token is not held back, and the breaker did not open.
    const other = await stack.gql(`{ contribuyente(ruc: "20501234568") { ruc } }`, undefined, { token: 'sandbox-free' });
    expect(other.body.errors).toBeUndefined();
    const ready = (await (await fetch(`${stack.url}/ready`)).json()) as Record<string, unknown>;
    expect(JSON.stringify(ready)).not.toContain('open');
  });

  it('a throttle that fits the deadline is waited out without a call, then the lookup is made', async () => {
    const throttled = await startStack({ env: { CACHE: 'on' } });
    try {
      throttled.sandbox.setFaults({ retryAfter: 2 });
      const first = await throttled.gql(`{ contribuyente(ruc: "${TRIGGERS.throttled.ruc}") { ruc } }`);
      expect(first.body.errors?.[0]?.extensions).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 2 });
      const started = Date.now();
      const next = await throttled.gql(`{ contribuyente(ruc: "20501234568") { ruc } }`);
      expect(next.body.errors).toBeUndefined();
      expect(Date.now() - started).toBeGreaterThan(1500);
      expect(throttled.sandbox.callsTo('/ruc')).toHaveLength(2);
    } finally {
      await throttled.close();
    }
  });

  it('a Retry-After past UPSTREAM_RETRY_AFTER_MAX_MS counts as that bound: ten years, a date in 2100 or 400 digits hold the token back only that long', async () => {
    // 1.5 s: honoured as 2 whole seconds, unlike the 1 s of a missing or unreadable one.
    const bounded = await startStack({ env: { UPSTREAM_RETRY_AFTER_MAX_MS: '1500' } });
    try {
      const tenYears = String(10 * 365 * 24 * 3600);
      for (const [i, retryAfter] of [tenYears, 'Fri, 01 Jan 2100 00:00:00 GMT', '9'.repeat(400)].entries()) {
        bounded.sandbox.setFaults({ retryAfter });
        const first = await bounded.gql(`{ contribuyente(ruc: "${TRIGGERS.throttled.ruc}") { ruc } }`);
        expect(first.body.errors?.[0]?.extensions, retryAfter.slice(0, 20)).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 2 });
        // The token's next lookup waits out the 1.5 s honoured, then is made: not locked out.
        const next = await bounded.gql(`{ contribuyente(ruc: "20501234568") { ruc } }`, undefined, {
          headers: { 'cache-control': 'no-cache' },
        });
        expect(next.body.errors, retryAfter.slice(0, 20)).toBeUndefined();
        expect(bounded.sandbox.callsTo('/ruc')).toHaveLength(2 * (i + 1));
      }
    } finally {
      await bounded.close();
    }
  });

  it('a missing or unreadable Retry-After counts as 1 s, and retryAfterSeconds is always a whole number', async () => {
    // Each lookup after the first waits out the 1 s its predecessor set, then meets the next header.
    for (const retryAfter of [null, 'soon', '-5']) {
      stack.sandbox.setFaults({ retryAfter });
      const { body } = await stack.gql(`{ contribuyente(ruc: "${TRIGGERS.throttled.ruc}") { ruc } }`, undefined, { token: 'sandbox-low' });
      expect(body.errors?.[0]?.extensions, String(retryAfter)).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 1 });
    }
    stack.sandbox.setFaults({});
  });
});

/** `npm start`, a sandbox of the test's own, a short time to live. */
describe('the last good record while the registry is down (npm start)', () => {
  let sandbox: Sandbox;
  let gateway: SpawnedGateway | undefined;
  beforeAll(async () => {
    sandbox = await startSandbox();
    // A second, so that seven asks on a busy machine fall within one record's life; the waits below outlast it.
    gateway = await spawnGateway({ UPSTREAM_URL: sandbox.url, CACHE_TTL_RUC_MS: '1000', UPSTREAM_RETRIES: '0' });
  });
  afterAll(async () => {
    await gateway?.stop();
    await sandbox?.close();
  });
  beforeEach(() => sandbox.setFaults({}));

  const ask = (ruc: string, token = 'sandbox-pro', headers: Record<string, string> = {}): Promise<OnceAnswer> =>
    postBodyOnce(gateway!.url, { query: `{ contribuyente(ruc: "${ruc}") { ruc consultadoEn } }` }, { token, headers });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('keeps consultadoEn: a cached record says when it was received', async () => {
    const first = await ask('20602345671');
    const at = (first.body.data?.['contribuyente'] as { consultadoEn: string }).consultadoEn;
    const again = await Promise.all(Array.from({ length: 6 }, () => ask('20602345671')));
    for (const a of again) expect((a.body.data?.['contribuyente'] as { consultadoEn: string }).consultadoEn).toBe(at);
  });

  it('answers the same token’s last good record, listed in extensions.stale, when refreshing it finds the sources down', async () => {
    const fresh = await ask('20501234568');
    const at = (fresh.body.data?.['contribuyente'] as { consultadoEn: string }).consultadoEn;
    await sleep(1100);
    await fetch(`${sandbox.url}/__sandbox/sources/down`, { method: 'POST' });
    const calls = sandbox.callsTo('/ruc').length;
    const stale = await ask('20501234568');
    expect(stale.body.errors).toBeUndefined();
    expect(stale.body.data).toEqual({ contribuyente: { ruc: '20501234568', consultadoEn: at } });
    expect((stale.body.extensions as Record<string, unknown>)['stale']).toEqual([{ path: ['contribuyente'], consultadoEn: at }]);
    expect(stale.body.extensions?.cost).toMatchObject({ staleHits: 1, upstreamCalls: 1 });
    // It asked first.
    expect(sandbox.callsTo('/ruc').length).toBe(calls + 1);
    // Never across tokens: another token has no record of its own.
    const other = await ask('20501234568', 'sandbox-free');
    expect(other.body.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    // no-cache refreshes first, and still falls back on the last good record.
    const noCache = await ask('20501234568', 'sandbox-pro', { 'cache-control': 'no-cache' });
    expect(noCache.body.extensions?.cost).toMatchObject({ staleHits: 1 });
    await fetch(`${sandbox.url}/__sandbox/sources/up`, { method: 'POST' });
    const back = await ask('20501234568');
    expect((back.body.data?.['contribuyente'] as { consultadoEn: string }).consultadoEn > at).toBe(true);
    expect((back.body.extensions as Record<string, unknown>)['stale']).toBeUndefined();
    const metrics = await (await fetch(`${gateway!.url.replace('/graphql', '')}/metrics`)).text();
    expect(metrics).toMatch(/gateway_cache_lookups_total\{op="ruc",result="stale"\} [1-9]/);
  });

  it('any other answer is the answer: an expired record whose refresh is refused for quota is not served stale', async () => {
    const fresh = await ask('20603456786');
    expect(fresh.body.errors).toBeUndefined();
    await sleep(1100);
    const quota = sandbox.quotaOf('sandbox-pro')!;
    sandbox.setQuota('sandbox-pro', 0);
    try {
      const refused = await ask('20603456786');
      expect(refused.body.errors?.[0]?.extensions).toMatchObject({ code: 'QUOTA_EXCEEDED' });
      expect(refused.body.data).toEqual({ contribuyente: null });
    } finally {
      sandbox.setQuota('sandbox-pro', quota);
    }
  });
});

describe('CACHE_STALE_IF_ERROR_MS=0', () => {
  it('turns the last good record off: the outage is the answer', async () => {
    const stack = await startStack({ env: { CACHE: 'on', CACHE_TTL_RUC_MS: '200', CACHE_STALE_IF_ERROR_MS: '0', UPSTREAM_RETRIES: '0' } });
    try {
      await stack.gql(`{ contribuyente(ruc: "20501234568") { ruc } }`);
      await new Promise((r) => setTimeout(r, 300));
      stack.sandbox.setFaults({ sourcesDown: true });
      const { body } = await stack.gql(`{ contribuyente(ruc: "20501234568") { ruc } }`);
      expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    } finally {
      await stack.close();
    }
  });
});
