import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TAXPAYERS } from '../../src/sandbox/data.js';
import { FLAG_ONLY_RUC, REGISTER_ONLY, SANDBOX_PADRON } from '../../src/sandbox/padron.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { readmeExample, startStack, type Stack } from '../helpers.js';

const FIELDS =
  'ruc nombreORazonSocial estado condicion direccion direccionCompleta departamento provincia distrito ubigeo esAgenteDeRetencion esBuenContribuyente esAgenteDePercepcion esAgenteDePercepcionCombustible fuente consultadoEn';
const LIST = `query($rucs: [String!]!) { contribuyentes(rucs: $rucs) { ${FIELDS} } }`;
type Row = Record<string, unknown>;
const rows = (body: { data?: unknown }) => (body.data as { contribuyentes: Row[] }).contribuyentes;
const cost = (body: { extensions?: Record<string, unknown> }) => body.extensions?.['cost'] as Record<string, number>;

let sandbox: Sandbox;
let dir: string;
let stack: Stack;

async function health(s: Stack) {
  return ((await (await fetch(`${s.url}/health`)).json()) as { padron: { state: string; rows: number; lastImport: Row | null } }).padron;
}

/** Until the register's last import has the outcome `result` (or the register answers, for `ready`). */
async function until(s: Stack, check: (p: Awaited<ReturnType<typeof health>>) => boolean, withinMs = 15_000) {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const padron = await health(s);
    if (check(padron)) return padron;
    if (Date.now() > deadline) throw new Error(`the register never got there: ${JSON.stringify(padron)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const withPadron = (refreshMs = 3_600_000) =>
  startStack({
    sharedSandbox: sandbox,
    env: { CACHE: 'on', PADRON: `${sandbox.url}/__sandbox/padron/`, PADRON_DIR: dir, PADRON_REFRESH_MS: String(refreshMs) },
  });

beforeAll(async () => {
  sandbox = await startSandbox();
  dir = mkdtempSync(join(tmpdir(), 'padron-'));
  stack = await withPadron(500);
});
afterAll(async () => {
  await stack?.close();
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('SUNAT’s register kept by the gateway (PADRON), imported from the sandbox’s zips in SUNAT’s format', () => {
  it('imports every row, skips and counts the lines importers trip on, and says so on /health', async () => {
    const padron = await until(stack, (p) => p.state === 'ready');
    expect(padron.rows).toBe(SANDBOX_PADRON.rows);
    expect(padron.lastImport).toMatchObject({ result: 'imported', rows: SANDBOX_PADRON.rows, skipped: SANDBOX_PADRON.skipped });
    const metrics = await (await fetch(`${stack.url}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`^gateway_padron_rows ${SANDBOX_PADRON.rows}$`, 'm'));
    expect(metrics).toMatch(/^gateway_padron_last_import_ok 1$/m);
    expect(metrics).toMatch(/^gateway_padron_age_seconds \d/m);
    // The line follows the switch /health reports by the old index's closing: a moment on a busy machine.
    const logged = Date.now() + 10_000;
    while (!/"result":"imported"[^\n]*padron: imported/.test(stack.logs.join('')) && Date.now() < logged)
      await new Promise((r) => setTimeout(r, 50));
    expect(stack.logs.join('')).toMatch(/"result":"imported"[^\n]*padron: imported/);
  });

  it('answers the README’s worked search (query 5) as the README shows it, by name, for nothing', async () => {
    await until(stack, (p) => p.state === 'ready');
    const { sent, shown } = readmeExample('5. A name typed in a form');
    sandbox.reset();
    const answer = await stack.gql(sent.query, sent.variables);
    expect(answer.body).toEqual(shown);
    expect(sandbox.calls).toHaveLength(0);
  });

  it('answers every sample taxpayer as the service does, for free and without a call: fuente PADRON, counted as localHits', async () => {
    const rucs = TAXPAYERS.map((t) => t.ruc);
    sandbox.reset();
    const local = await stack.gql(LIST, { rucs });
    expect(local.body.errors).toBeUndefined();
    expect(sandbox.calls).toHaveLength(0);
    expect(cost(local.body)).toMatchObject({ queries: 0, upstreamCalls: 0, localHits: rucs.length });
    expect(await (await fetch(`${stack.url}/metrics`)).text()).toMatch(/^gateway_cache_lookups_total\{op="ruc",result="local"\} \d+$/m);
    // The same RUCs from the service (no-cache skips the register), field by field.
    const remote = await stack.gql(LIST, { rucs }, { headers: { 'cache-control': 'no-cache' } });
    expect(sandbox.callsTo('/ruc')).toHaveLength(rucs.length);
    const fromService = rows(remote.body);
    for (const [i, row] of rows(local.body).entries()) {
      const service = fromService[i]!;
      expect(row['fuente']).toBe('PADRON');
      expect(service['fuente']).toBe('SERVICIO');
      for (const field of [
        'ruc',
        'nombreORazonSocial',
        'estado',
        'condicion',
        'direccion',
        'direccionCompleta',
        'departamento',
        'provincia',
        'distrito',
        'ubigeo',
      ]) {
        expect(row[field], `${String(row['ruc'])} ${field}`).toEqual(service[field]);
      }
      for (const flag of ['esAgenteDeRetencion', 'esBuenContribuyente', 'esAgenteDePercepcion', 'esAgenteDePercepcionCombustible']) {
        // The register says NO for a RUC its flag register does not list; the service's sample data leaves some flags out.
        if (service[flag] !== null) expect(row[flag], `${String(row['ruc'])} ${flag}`).toEqual(service[flag]);
      }
    }
  });

  it('composes an address from its parts, keeps a name’s quotes, makes a lost Ñ an Ñ again, and leaves an unknown place unnamed', async () => {
    const rucs = Object.values(REGISTER_ONLY).map((line) => line.slice(0, 11));
    sandbox.reset();
    const { body } = await stack.gql(LIST, { rucs });
    expect(sandbox.calls).toHaveLength(0);
    const [company, enye, unknownPlace] = rows(body);
    expect(company).toMatchObject({
      nombreORazonSocial: 'CONSTRUCTORA EL "SOL" S.A.C.',
      direccion: 'AV. LARCO NRO. 345 DPTO. 501 URB. SAN ANTONIO',
      direccionCompleta: 'AV. LARCO NRO. 345 DPTO. 501 URB. SAN ANTONIO, LIMA - LIMA - MIRAFLORES',
      ubigeo: '150122',
      esAgenteDeRetencion: false,
    });
    expect(enye).toMatchObject({ nombreORazonSocial: 'INVERSIONES PEÑA S.R.L.', distrito: 'SAN ISIDRO' });
    expect(unknownPlace).toMatchObject({ ubigeo: '999999', departamento: null, provincia: null, distrito: null });
    expect(stack.logs.join('')).toMatch(/"ubigeo":"999999"[^\n]*a location code the table does not name/);
  });

  it('sends to the service what it does not hold: an unknown RUC, one listed only in a flag register', async () => {
    sandbox.reset();
    const { body } = await stack.gql(LIST, { rucs: ['20999999990', FLAG_ONLY_RUC] });
    expect(
      sandbox
        .callsTo('/ruc')
        .map((c) => (c.body as { ruc: string }).ruc)
        .sort(),
    ).toEqual(['20999999990', FLAG_ONLY_RUC].sort());
    expect(cost(body)).toMatchObject({ localHits: 0, queries: 2 });
  });

  it('answers a person from it when the operation asks only what it holds (their RUC 10’s name), however the person is reached', async () => {
    sandbox.reset();
    const { body } = await stack.gql(`{
      persona(dni: "46779354") { dni nombreCompleto fuente ...Ruc }
      licencia(numLicencia: "Q46779354") { titular { __typename dni nombreCompleto } }
    }
    fragment Ruc on Persona { contribuyente { ruc fuente } }`);
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      persona: {
        dni: '46779354',
        nombreCompleto: 'QUISPE MAMANI ROSA ELENA',
        fuente: 'PADRON',
        contribuyente: { ruc: '10467793549', fuente: 'PADRON' },
      },
      licencia: { titular: { __typename: 'Persona', dni: '46779354', nombreCompleto: 'QUISPE MAMANI ROSA ELENA' } },
    });
    expect(sandbox.calls.map((c) => c.path)).toEqual(['/licencia-conducir']);
    expect(cost(body)).toMatchObject({ localHits: 3, queries: 2 });
    // Asked what only the service has (the given names), the person comes from it.
    const more = await stack.gql('{ persona(dni: "46779354") { nombres fuente } }', undefined, { headers: { 'x-request-id': 'nombres' } });
    expect(more.body.data).toEqual({ persona: { nombres: 'ROSA ELENA', fuente: 'SERVICIO' } });
    expect(sandbox.callsTo('/dni')).toHaveLength(1);
  });

  it('keeps answering from the register in use when a refresh meets a corrupt or a truncated zip', async () => {
    for (const fault of ['corrupt', 'truncated'] as const) {
      const before = (await health(stack)).lastImport?.['at'];
      sandbox.setFaults({ padron: fault });
      const failed = await until(stack, (p) => p.lastImport?.['at'] !== before && p.lastImport?.['result'] === 'failed');
      expect(failed.lastImport?.['error']).toEqual(expect.any(String));
      sandbox.reset();
      const { body } = await stack.gql(LIST, { rucs: [TAXPAYERS[0]!.ruc] });
      expect(rows(body)[0]).toMatchObject({ fuente: 'PADRON' });
      expect(sandbox.calls).toHaveLength(0);
      expect(await health(stack)).toMatchObject({ state: 'ready', rows: SANDBOX_PADRON.rows });
    }
    sandbox.setFaults({});
    await until(stack, (p) => p.lastImport?.['result'] === 'unchanged');
  });

  it('reuses the index on disk after a restart, before any import', async () => {
    await stack.close();
    // No import can succeed now: whatever answers comes from the index already on disk.
    sandbox.setFaults({ padron: 'truncated' });
    stack = await withPadron();
    await until(stack, (p) => p.state === 'ready', 5_000);
    sandbox.reset();
    const { body } = await stack.gql(LIST, { rucs: [TAXPAYERS[1]!.ruc] });
    expect(rows(body)[0]).toMatchObject({ fuente: 'PADRON' });
    expect(sandbox.calls).toHaveLength(0);
    sandbox.setFaults({});
  });

  it('leaves to the service a register older than PADRON_MAX_AGE_MS, and says it is stale', async () => {
    // A directory of its own: the one the suite's gateway holds is locked for any other.
    const own = mkdtempSync(join(tmpdir(), 'padron-older-'));
    const older = await startStack({
      sharedSandbox: sandbox,
      env: { PADRON: `${sandbox.url}/__sandbox/padron/`, PADRON_DIR: own, PADRON_MAX_AGE_MS: '1', PADRON_REFRESH_MS: '3600000' },
    });
    try {
      expect(await until(older, (p) => p.state !== 'empty', 10_000)).toMatchObject({ state: 'stale', rows: SANDBOX_PADRON.rows });
      sandbox.reset();
      const { body } = await older.gql(LIST, { rucs: [TAXPAYERS[2]!.ruc] });
      expect(rows(body)[0]).toMatchObject({ fuente: 'SERVICIO' });
      expect(sandbox.callsTo('/ruc')).toHaveLength(1);
      expect(cost(body)).toMatchObject({ localHits: 0, queries: 1 });
    } finally {
      await older.close();
      rmSync(own, { recursive: true, force: true });
    }
  });
});
