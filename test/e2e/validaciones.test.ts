import { readdirSync, readFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SUNAT_SAMPLE } from '../../src/sandbox/sunat.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { Redis } from 'ioredis';
import { codes, redisDump, startRedis, startStack, TOKEN, type RedisServer, type Stack } from '../helpers.js';

/**
 * Background validations through SUNAT's free API (crearValidacionMasiva): answered at once,
 * validated at SUNAT's pace, paged, streamed, cancelled, kept on disk across a restart, and the
 * caller's alone. Expected states are worked out from the sandbox's rules, apart from the code.
 */

let sandbox: Sandbox;
let dir: string;
let stack: Stack;
beforeAll(async () => {
  sandbox = await startSandbox();
  dir = mkdtempSync(join(tmpdir(), 'jobs-'));
  stack = await startStack({ sharedSandbox: sandbox, env: { PADRON_DIR: dir, VALIDACION_MASIVA_MAX: '5000' } });
});
afterAll(async () => {
  await stack.close();
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => sandbox.reset());

const OTHER = 'sandbox-free';
const JOB =
  'id estado total validados creadaEn terminadaEn motivo resumen { aceptados anulados autorizados noAutorizados noExisten conError }';
type Job = {
  id: string;
  estado: string;
  total: number;
  validados: number;
  terminadaEn: string | null;
  motivo: string | null;
  resumen: Record<string, number>;
};

const CREAR = `mutation C($c: [ComprobanteInput!], $t: String, $api: CredencialesApiSunatInput) {
  crearValidacionMasiva(comprobantes: $c, texto: $t, credencialesApi: $api) { ${JOB} } }`;

async function crear(s: Stack, input: { c?: object[]; t?: string }, token = TOKEN, api: object | null = SUNAT_SAMPLE) {
  const { body } = await s.gql<{ crearValidacionMasiva: Job }, Record<string, unknown>>(CREAR, { ...input, api }, { token });
  return body;
}

async function job(s: Stack, id: string, token = TOKEN) {
  const { body } = await s.gql<{ validacionMasiva: Job | null }, { id: string }>(
    `query($id: ID!) { validacionMasiva(id: $id) { ${JOB} } }`,
    { id },
    { token },
  );
  return body;
}

async function until(s: Stack, id: string, done: (j: Job) => boolean, withinMs = 20_000): Promise<Job> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const now = (await job(s, id)).data!.validacionMasiva!;
    if (done(now)) return now;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${JSON.stringify(now)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const receiptCalls = () => sandbox.calls.filter((c) => c.path.endsWith('/validarcomprobante'));
const tokenCalls = () => sandbox.calls.filter((c) => c.path.includes('/oauth2/token'));

/** A line of `texto` for the sample issuer, numbered `n`. */
const line = (n: number, serie = 'F001', fecha = '2026-10-01') => `20100123453|01|${serie}|${n}|${fecha}|118.00`;

/** What the sandbox answers number `n` of the sample issuer (docs/sunat.md): worked out by hand from its rules. */
const stateOf = (n: number) => (n % 10 === 0 ? 'anulados' : n % 10 === 4 ? 'noAutorizados' : 'aceptados');

describe('crearValidacionMasiva', () => {
  it('answers at once, then validates each distinct receipt once through SUNAT, for no plan query', async () => {
    const quota = sandbox.quotaOf(TOKEN)!;
    // 300 lines: 250 distinct numbers, the first 50 twice; blank lines, CRLF and dd/mm/yyyy dates as a spreadsheet exports them.
    const numbers = [...Array.from({ length: 250 }, (_, i) => i + 1), ...Array.from({ length: 50 }, (_, i) => i + 1)];
    const texto = ['', ...numbers.map((n, i) => (i % 2 ? line(n) : line(n, 'F001', '01/10/2026'))), '   '].join('\r\n');
    const created = await crear(stack, { t: texto });
    expect(created.errors).toBeUndefined();
    const first = created.data!.crearValidacionMasiva;
    expect(first).toMatchObject({ estado: 'EN_COLA', total: 300, validados: 0, terminadaEn: null });
    const done = await until(stack, first.id, (j) => j.estado === 'TERMINADA');
    const expected = { aceptados: 0, anulados: 0, autorizados: 0, noAutorizados: 0, noExisten: 0, conError: 0 };
    for (const n of numbers) expected[stateOf(n)]++;
    expect(done).toMatchObject({ total: 300, validados: 300, resumen: expected, motivo: null });
    expect(done.terminadaEn).not.toBeNull();
    // Each distinct receipt asked once, under one token; nothing billed.
    const asked = receiptCalls().map((c) => (c.body as { numero: string }).numero);
    expect(asked).toHaveLength(250);
    expect(new Set(asked).size).toBe(250);
    expect(tokenCalls()).toHaveLength(1);
    expect((receiptCalls()[0]!.body as { fechaEmision: string }).fechaEmision).toBe('01/10/2026');
    expect(sandbox.quotaOf(TOKEN)).toBe(quota);
    expect(sandbox.calls.filter((c) => !c.path.startsWith('/v1/'))).toHaveLength(0);
    // At most SUNAT_API_CONCURRENCY (5) calls in flight at once.
    expect(sandbox.peakInFlight).toBeLessThanOrEqual(5);
  });

  it('pages the results in input order, repeated receipts at each of their positions', async () => {
    const list = [7, 10, 7, 14].map((n) => ({
      rucEmisor: '20100123453',
      codigoTipoDocumento: '01',
      serieDocumento: 'F001',
      numeroDocumento: String(n),
      fechaDeEmision: '2026-10-01',
      total: '118.00',
    }));
    const id = (await crear(stack, { c: list })).data!.crearValidacionMasiva.id;
    await until(stack, id, (j) => j.estado === 'TERMINADA');
    const page = async (after: string | null) =>
      (
        await stack.gql<
          {
            validacionMasiva: {
              comprobantes: { edges: { cursor: string; node: Record<string, unknown> }[]; pageInfo: Record<string, unknown> };
            };
          },
          Record<string, unknown>
        >(
          `query($id: ID!, $after: String) { validacionMasiva(id: $id) { comprobantes(first: 3, after: $after) {
            edges { cursor node { numeroDocumento fuente comprobanteEstadoDescripcion error { code } } } pageInfo { hasNextPage endCursor } } } }`,
          { id, after },
        )
      ).body.data!.validacionMasiva.comprobantes;
    const one = await page(null);
    expect(one.edges.map((e) => [e.node['numeroDocumento'], e.node['comprobanteEstadoDescripcion'], e.node['fuente']])).toEqual([
      ['7', 'ACEPTADO', 'SUNAT'],
      ['10', 'ANULADO', 'SUNAT'],
      ['7', 'ACEPTADO', 'SUNAT'],
    ]);
    expect(one.pageInfo).toEqual({ hasNextPage: true, endCursor: one.edges[2]!.cursor });
    const two = await page(one.pageInfo['endCursor'] as string);
    expect(two.edges.map((e) => e.node['numeroDocumento'])).toEqual(['14']);
    expect(two.pageInfo['hasNextPage']).toBe(false);
    expect(receiptCalls()).toHaveLength(3);
    const bad = await stack.gql(`query($id: ID!) { validacionMasiva(id: $id) { comprobantes(after: "bm9wZQ") { edges { cursor } } } }`, {
      id,
    });
    expect(codes(bad.body)).toEqual(['INVALID_INPUT']);
  });

  it('checks every line before anything is queued, naming the line (blank ones counted)', async () => {
    const texto = [line(1), '', line(2, 'F001', '2026-02-30'), 'no es un comprobante', line(3)].join('\n');
    const body = await crear(stack, { t: texto });
    expect(codes(body)).toEqual(['INVALID_INPUT']);
    expect(body.errors![0]!.message).toMatch(/línea 3\.fechaDeEmision/);
    expect(body.errors![0]!.message).toMatch(/línea 4: debe tener 6 partes/);
    expect(codes(await crear(stack, { t: line(1), c: [] }))).toEqual(['INVALID_INPUT']);
    expect(codes(await crear(stack, { t: '\n \n' }))).toEqual(['INVALID_INPUT']);
    const tooMany = Array.from({ length: 5001 }, (_, i) => line(i + 1)).join('\n');
    expect((await crear(stack, { t: tooMany })).errors![0]!.message).toMatch(/a lo más 5000/);
    // Without credentials of the call or of the gateway, no job.
    expect(codes(await crear(stack, { t: line(1) }, TOKEN, null))).toEqual(['INVALID_INPUT']);
    expect(sandbox.calls).toHaveLength(0);
  });

  it('refuses credentials SUNAT refuses at creation, and queues nothing', async () => {
    const body = await crear(stack, { t: line(1) }, TOKEN, { ...SUNAT_SAMPLE, clientSecret: 'not-the-secret' });
    expect(body.errors?.map((e) => [e.extensions?.['code'], e.extensions?.['retryable']])).toEqual([['SUNAT_CREDENTIALS_REJECTED', false]]);
    expect(JSON.stringify(body)).not.toContain('not-the-secret');
    expect(tokenCalls()).toHaveLength(1);
    expect(receiptCalls()).toHaveLength(0);
    const mine = await stack.gql<{ validacionesMasivas: Job[] }, never>(`{ validacionesMasivas { id estado } }`);
    expect(mine.body.data!.validacionesMasivas.every((j) => j.estado === 'TERMINADA')).toBe(true);
  });

  it('belongs to its caller: another token gets NOT_FOUND, an empty list, and a 404 for the CSV', async () => {
    const id = (await crear(stack, { t: line(1) })).data!.crearValidacionMasiva.id;
    const theirs = await job(stack, id, OTHER);
    expect(theirs.data).toEqual({ validacionMasiva: null });
    expect(codes(theirs)).toEqual(['NOT_FOUND']);
    const cancel = await stack.gql(`mutation($id: ID!) { cancelarValidacionMasiva(id: $id) { estado } }`, { id }, { token: OTHER });
    expect(codes(cancel.body)).toEqual(['NOT_FOUND']);
    expect(
      (await stack.gql<{ validacionesMasivas: Job[] }, never>(`{ validacionesMasivas { id } }`, undefined, { token: OTHER })).body.data,
    ).toEqual({
      validacionesMasivas: [],
    });
    expect((await fetch(`${stack.url}/validaciones/${id}.csv`, { headers: { authorization: `Bearer ${OTHER}` } })).status).toBe(404);
    expect((await fetch(`${stack.url}/validaciones/${id}.csv`)).status).toBe(401);
    expect(codes((await stack.gql(`{ validacionesMasivas { id } }`, undefined, { token: null })).body)).toEqual(['UNAUTHENTICATED']);
  });

  it('keeps at most VALIDACION_MASIVA_POR_LLAMANTE unfinished a caller (RATE_LIMITED, retryable), another once one is cancelled', async () => {
    const caller = 'a-caller-of-its-own';
    const slow = Array.from({ length: 20 }, (_, i) => line(i + 1, 'SLNT')).join('\n');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await crear(stack, { t: slow }, caller)).data!.crearValidacionMasiva.id);
    const over = await crear(stack, { t: slow }, caller);
    expect(over.errors?.map((e) => [e.extensions?.['code'], e.extensions?.['retryable']])).toEqual([['RATE_LIMITED', true]]);
    expect(over.errors![0]!.message).toMatch(/VALIDACION_MASIVA_POR_LLAMANTE/);
    for (const id of ids) await stack.gql(`mutation($id: ID!) { cancelarValidacionMasiva(id: $id) { id } }`, { id }, { token: caller });
    expect((await crear(stack, { t: line(1) }, caller)).errors).toBeUndefined();
    const subscribed = await fetch(`${stack.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${OTHER}` },
      body: JSON.stringify({ query: `subscription($id: ID!) { validacionMasiva(id: $id) { estado } }`, variables: { id: ids[0] } }),
    });
    expect(await subscribed.text()).toMatch(/NOT_FOUND/);
  });

  it('is cancelled: it stops asking SUNAT within a second, and keeps what it validated', async () => {
    // Slow receipts (3 s each in the sandbox): five at a time; numbered from 501, apart from other tests' jobs.
    const texto = Array.from({ length: 40 }, (_, i) => line(501 + i, 'SLNT')).join('\n');
    const mine = () => receiptCalls().filter((c) => Number((c.body as { numero: string }).numero) >= 501);
    const id = (await crear(stack, { t: texto })).data!.crearValidacionMasiva.id;
    await until(stack, id, (j) => j.estado === 'EN_CURSO');
    const { body } = await stack.gql<{ cancelarValidacionMasiva: Job }, { id: string }>(
      `mutation($id: ID!) { cancelarValidacionMasiva(id: $id) { ${JOB} } }`,
      { id },
    );
    expect(body.data!.cancelarValidacionMasiva.estado).toBe('CANCELADA');
    await new Promise((r) => setTimeout(r, 1500));
    const asked = mine().length;
    await new Promise((r) => setTimeout(r, 3500));
    // Nothing more once the cancel was seen; what was in flight then was at most one wave of five.
    expect(mine().length).toBe(asked);
    expect(asked).toBeLessThanOrEqual(5);
    expect((await job(stack, id)).data!.validacionMasiva!.estado).toBe('CANCELADA');
  });

  it('streams its progress over SSE: its state at once, then changes, then the end', async () => {
    const id = (await crear(stack, { t: Array.from({ length: 30 }, (_, i) => line(i + 1)).join('\n') })).data!.crearValidacionMasiva.id;
    const res = await fetch(`${stack.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ query: `subscription($id: ID!) { validacionMasiva(id: $id) { estado validados } }`, variables: { id } }),
      signal: AbortSignal.timeout(20_000),
    });
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const events = [...(await res.text()).matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as { data?: { validacionMasiva: Job } });
    const states = events.flatMap((e) => (e.data ? [e.data.validacionMasiva] : []));
    expect(states.length).toBeGreaterThanOrEqual(1);
    expect(states.at(-1)).toEqual({ estado: 'TERMINADA', validados: 30 });
  });

  it('answers its CSV: UTF-8 with BOM, ;-separated, one row per position, SUNAT’s words as they came', async () => {
    const list = [
      {
        rucEmisor: '20100123453',
        codigoTipoDocumento: '07',
        serieDocumento: 'F001',
        numeroDocumento: '5',
        fechaDeEmision: '2026-10-01',
        total: '118.00',
      },
      {
        rucEmisor: '20100123453',
        codigoTipoDocumento: '01',
        serieDocumento: 'SBAD',
        numeroDocumento: '6',
        fechaDeEmision: '2026-10-01',
        total: '118.00',
      },
      {
        rucEmisor: '20100123453',
        codigoTipoDocumento: '01',
        serieDocumento: 'F001',
        numeroDocumento: '10',
        fechaDeEmision: '2026-10-01',
        total: '118.00',
      },
    ];
    const id = (await crear(stack, { c: list })).data!.crearValidacionMasiva.id;
    await until(stack, id, (j) => j.estado === 'TERMINADA');
    const res = await fetch(`${stack.url}/validaciones/${id}.csv`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="validacion-${id}.csv"`);
    const bytes = Buffer.from(await res.arrayBuffer());
    // A browser app downloads it too: a preflight for its Authorization, and the file name readable.
    const preflight = await fetch(`${stack.url}/validaciones/${id}.csv`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.pe',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toBe('authorization');
    const browser = await fetch(`${stack.url}/validaciones/${id}.csv`, {
      headers: { authorization: `Bearer ${TOKEN}`, origin: 'https://app.example.pe' },
    });
    expect(browser.headers.get('access-control-allow-origin')).toBe('*');
    expect(browser.headers.get('access-control-expose-headers')).toBe('content-disposition');
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const rows = bytes.subarray(3).toString('utf8').split('\r\n');
    expect(rows).toEqual([
      'RUC emisor;Tipo;Serie;Número;Fecha de emisión;Total;Estado del comprobante;Estado del emisor;Condición del emisor;Observaciones;Error',
      '20100123453;07;F001;5;2026-10-01;118.00;ACEPTADO;ACTIVO;HABIDO;Nota vinculada a un comprobante de referencia;',
      '20100123453;01;SBAD;6;2026-10-01;118.00;;;;;SUNAT no valida este comprobante: El comprobante ingresado no es válido',
      '20100123453;01;F001;10;2026-10-01;118.00;ANULADO;ACTIVO;HABIDO;;',
      '',
    ]);
  });
});

describe('a job across a restart', () => {
  it('goes on from local disk where it stopped, asking again only what was in flight; its secret is never on disk in clear', async () => {
    const own = mkdtempSync(join(tmpdir(), 'jobs-restart-'));
    try {
      // Every answer 150 ms late: the first instance stops with calls in flight.
      sandbox.setFaults({ latencyMs: 150 });
      const first = await startStack({ sharedSandbox: sandbox, env: { PADRON_DIR: own } });
      const texto = Array.from({ length: 60 }, (_, i) => line(i + 1)).join('\n');
      const id = (await crear(first, { t: texto })).data!.crearValidacionMasiva.id;
      await until(first, id, (j) => j.validados >= 10, 30_000);
      await first.close();
      for (const file of readdirSync(join(own, 'validaciones')))
        expect(readFileSync(join(own, 'validaciones', file)).includes(Buffer.from(SUNAT_SAMPLE.clientSecret)), file).toBe(false);
      const before = receiptCalls().length;
      const second = await startStack({ sharedSandbox: sandbox, env: { PADRON_DIR: own } });
      try {
        const done = await until(second, id, (j) => j.estado === 'TERMINADA', 60_000);
        expect(done.validados).toBe(60);
        const numbers = receiptCalls().map((c) => (c.body as { numero: string }).numero);
        // Asked again: only those in flight when the first stopped (at most its 10 workers' worth).
        expect(numbers.length - 60).toBeLessThanOrEqual(10);
        expect(new Set(numbers).size).toBe(60);
        expect(before).toBeGreaterThanOrEqual(10);
        expect(second.logs.join('')).not.toContain(SUNAT_SAMPLE.clientSecret);
      } finally {
        await second.close();
      }
    } finally {
      sandbox.setFaults({});
      rmSync(own, { recursive: true, force: true });
    }
  });
});

describe('background validations in a fleet (REDIS_URL): BullMQ shares the work', () => {
  let redis: RedisServer;
  let inspect: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    inspect = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    inspect.disconnect();
    await redis.stop();
  });
  const fleet = () => {
    const env = { REDIS_URL: redis.url, CACHE_KEY_SECRET: 'a-secret-shared-by-the-fleet' };
    return Promise.all([0, 1].map(() => startStack({ sharedSandbox: sandbox, env, app: { jobLockMs: 2_000 } })));
  };

  it('validates a job made on one instance with both, each receipt once, at the fleet’s pace; the other answers it and its CSV', async () => {
    sandbox.setFaults({ latencyMs: 50 });
    const [a, b] = await fleet();
    try {
      const id = (await crear(a!, { t: Array.from({ length: 450 }, (_, i) => line(i + 1)).join('\n') })).data!.crearValidacionMasiva.id;
      const done = await until(b!, id, (j) => j.estado === 'TERMINADA', 60_000);
      const expected = { aceptados: 0, anulados: 0, autorizados: 0, noAutorizados: 0, noExisten: 0, conError: 0 };
      for (let n = 1; n <= 450; n++) expected[stateOf(n)]++;
      expect(done).toMatchObject({ validados: 450, resumen: expected });
      const numbers = receiptCalls().map((c) => (c.body as { numero: string }).numero);
      expect(numbers).toHaveLength(450);
      expect(new Set(numbers).size).toBe(450);
      expect(sandbox.peakInFlight).toBeLessThanOrEqual(5);
      // Both instances asked SUNAT (each its own connections).
      const csv = await fetch(`${b!.url}/validaciones/${id}.csv`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect((await csv.text()).split('\r\n')).toHaveLength(452);
      expect(codes(await job(b!, id, OTHER))).toEqual(['NOT_FOUND']);
    } finally {
      sandbox.setFaults({});
      await Promise.all([a!.close(), b!.close()]);
    }
  });

  it('takes up a stopped instance’s parts on another, asking again only what was in flight; no secret or token in Redis', async () => {
    sandbox.setFaults({ latencyMs: 100 });
    const [a, b] = await fleet();
    try {
      const id = (await crear(a!, { t: Array.from({ length: 400 }, (_, i) => line(i + 1)).join('\n') })).data!.crearValidacionMasiva.id;
      await until(a!, id, (j) => j.validados >= 60, 30_000);
      await a!.close();
      // Sealed while it runs, dropped when it ends.
      expect(JSON.parse((await inspect.hget(`{vm}:s:${id}`, 'sealed'))!)).toMatchObject({
        iv: expect.any(String),
        data: expect.any(String),
      });
      const done = await until(b!, id, (j) => j.estado === 'TERMINADA', 60_000);
      expect(done.validados).toBe(400);
      expect(await inspect.hget(`{vm}:s:${id}`, 'sealed')).toBe('');
      expect(await inspect.ttl(`{vm}:s:${id}`)).toBeGreaterThan(29 * 86_400);
      const numbers = receiptCalls().map((c) => (c.body as { numero: string }).numero);
      expect(new Set(numbers).size).toBe(400);
      // At most what the stopped instance had in flight: two parts, ten calls each.
      expect(numbers.length - 400).toBeLessThanOrEqual(20);
      const tokens = sandbox.calls.flatMap((c) => /^Bearer (.+)$/.exec(String(c.headers['authorization'] ?? ''))?.[1] ?? []);
      expect(tokens.length).toBeGreaterThan(0);
      const dump = await redisDump(inspect);
      expect(dump).toContain(id);
      for (const secret of [SUNAT_SAMPLE.clientSecret, TOKEN, ...new Set(tokens)]) expect(dump).not.toContain(secret);
      for (const text of [
        b!.logs.join(''),
        a!.logs.join(''),
        await (await fetch(`${b!.url}/metrics`)).text(),
        await (await fetch(`${b!.url}/health`)).text(),
      ])
        for (const secret of [SUNAT_SAMPLE.clientSecret, ...new Set(tokens)]) expect(text).not.toContain(secret);
    } finally {
      sandbox.setFaults({});
      await b!.close();
    }
  });
});

describe("README's worked query 7", () => {
  it('runs as written: the sample month queued, validated, summed up and written as a CSV', async () => {
    const own = mkdtempSync(join(tmpdir(), 'jobs-readme-'));
    // As npm start has it: the gateway's own credentials are the sandbox's sample ones.
    const sample = {
      SUNAT_API_CLIENT_ID: SUNAT_SAMPLE.clientId,
      SUNAT_API_CLIENT_SECRET: SUNAT_SAMPLE.clientSecret,
      SUNAT_API_RUC: SUNAT_SAMPLE.rucEmpresa,
    };
    const fresh = await startStack({ sharedSandbox: sandbox, env: { PADRON_DIR: own, ...sample } });
    try {
      const readme = readFileSync('README.md', 'utf8');
      const section = readme.slice(readme.indexOf('**7. A month of purchases'));
      const mutation = /query: "(mutation[^"]+)"/.exec(section)![1]!;
      const file = /readFileSync\("([^"]+)"/.exec(section)![1]!;
      const summary = JSON.parse(/-d '(\{.*\})'/.exec(section)![1]!) as { query: string };
      const [created, summed] = /```json\n([\s\S]*?)\n```/
        .exec(section)![1]!
        .split('\n')
        .map((l) => JSON.parse(l) as unknown);
      const first = (await fresh.gql<{ crearValidacionMasiva: { id: string } }, { t: string }>(mutation, { t: readFileSync(file, 'utf8') }))
        .body;
      const { id } = first.data!.crearValidacionMasiva;
      expect(first).toEqual(JSON.parse(JSON.stringify(created).replace('<id>', id)));
      await until(fresh, id, (j) => j.estado === 'TERMINADA');
      expect((await fresh.gql(summary.query)).body).toEqual(summed);
      const csv = await fetch(`${fresh.url}/validaciones/${id}.csv`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const rows = (await csv.text()).split('\r\n');
      expect(rows).toHaveLength(14);
      expect(rows[6]).toBe('20555678909;01;F001;77;2026-10-07;944.00;ACEPTADO;BAJA DE OFICIO;NO HABIDO;;');
    } finally {
      await fresh.close();
      rmSync(own, { recursive: true, force: true });
    }
  });
});

describe('a job against a slow SUNAT', () => {
  it('holds no other caller: searches, the register and lookups answer as before while it runs', async () => {
    const own = mkdtempSync(join(tmpdir(), 'jobs-register-'));
    const registered = await startStack({ sharedSandbox: sandbox, env: { PADRON: `${sandbox.url}/__sandbox/padron/`, PADRON_DIR: own } });
    try {
      const deadline = Date.now() + 20_000;
      while (((await (await fetch(`${registered.url}/health`)).json()) as { padron: { state: string } }).padron.state !== 'ready') {
        if (Date.now() > deadline) throw new Error('the sandbox register never got ready');
        await new Promise((r) => setTimeout(r, 50));
      }
      // Every receipt 3 s at SUNAT, five at a time: the job runs for the whole test.
      const id = (await crear(registered, { t: Array.from({ length: 60 }, (_, i) => line(i + 1, 'SLNT')).join('\n') })).data!
        .crearValidacionMasiva.id;
      await until(registered, id, (j) => j.estado === 'EN_CURSO');
      const times: number[] = [];
      for (let i = 0; i < 20; i++) {
        const started = performance.now();
        const { body } = await registered.gql(
          `{ buscarContribuyentes(texto: "mamani", first: 2) { edges { node { ruc } } } contribuyente(ruc: "20100123453") { estado fuente } persona(dni: "46779354") { nombres } }`,
        );
        times.push(performance.now() - started);
        expect(body.errors).toBeUndefined();
      }
      // Never held by the job's calls (3 s each at SUNAT); a busy machine's noise aside.
      expect(Math.max(...times)).toBeLessThan(2_000);
      expect([...times].sort((a, b) => a - b)[10]!).toBeLessThan(300);
      expect((await job(registered, id)).data!.validacionMasiva!.estado).toBe('EN_CURSO');
    } finally {
      await registered.close();
      rmSync(own, { recursive: true, force: true });
    }
  });
});
