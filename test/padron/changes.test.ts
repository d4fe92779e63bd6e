import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeStore, StagedChanges, type TipoCambio } from '../../src/padron/change-store.js';
import { recordChanges } from '../../src/padron/changes.js';
import { todayInLima } from '../../src/upstream/dates.js';
import { SNAPSHOT, SnapshotWriter } from '../../src/padron/snapshot.js';
import type { Register } from '../../src/padron/register.js';
import { changedOn, DAY1, DAY2, FLAGS1, FLAGS2, ruc } from '../fixtures/changes.js';
import { mirrorOf, registerOver, rucOf } from '../fixtures/register.js';

/**
 * What changed between two registers, imported one after the other from a loopback mirror:
 * every type of change, exact, and nothing for the first register (the baseline).
 */

let dir: string;
let server: Server;
let set: (lines: string[], flags?: string[][]) => Promise<void>;
let padron: Register;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'changes-'));
  const mirror = await mirrorOf(DAY1, FLAGS1);
  server = mirror.server;
  set = mirror.set;
  padron = registerOver(mirror.url, dir);
  await padron.start();
});
afterAll(async () => {
  await padron?.close();
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the register’s changes', () => {
  it('records nothing for the first register (the baseline), then every change of a newer one, exactly', async () => {
    await padron.refresh();
    expect(padron.state()).toMatchObject({ state: 'ready', rows: DAY1.length });
    const store = padron.changes!;
    const all = { desde: '2000-01-01', hasta: '2100-01-01', first: 100 };
    expect(store.page(all).cambios).toEqual([]);

    await set(DAY2, FLAGS2);
    await padron.refresh();
    expect(padron.state()).toMatchObject({ state: 'ready', rows: DAY2.length, lastImport: { result: 'imported' } });
    const fecha = todayInLima(Date.parse(padron.state().date!));
    const page = store.page(all);
    expect(page.cambios).toEqual(changedOn(fecha));
    expect(page.hasNextPage).toBe(false);
  });

  it('answers a taxpayer’s own changes, newest first, and pages the feed by RUC, type and cursor', async () => {
    const store = padron.changes!;
    expect(store.ofRuc(ruc(8)).map((c) => c.tipo)).toEqual(['BUEN_CONTRIBUYENTE', 'AGENTE_DE_RETENCION']);
    expect(store.ofRuc(ruc(1))).toEqual([]);
    const all = { desde: '2000-01-01', hasta: '2100-01-01' };
    expect(store.page({ ...all, first: 10, rucs: [ruc(5), ruc(9)] }).cambios.map((c) => c.tipo)).toEqual(['CONDICION', 'ALTA']);
    expect(store.page({ ...all, first: 10, tipos: ['ESTADO', 'CONDICION'] }).cambios.map((c) => c.ruc)).toEqual([ruc(4), ruc(5)]);
    // Three at a time, following the cursor: every change once.
    const seen: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = store.page({ ...all, first: 3, after });
      seen.push(...page.cambios.map((c) => `${c.ruc}${c.tipo}`));
      if (!page.hasNextPage) break;
      after = page.endCursor!;
    }
    expect(seen).toHaveLength(9);
    expect(new Set(seen).size).toBe(9);
    expect(store.page({ ...all, desde: '2100-01-01', first: 10 }).cambios).toEqual([]);
  });
});

describe('a comparison that cannot be made', () => {
  it('records nothing for a register refused (a cut one is no day of SALIDAs), and keeps what was recorded', async () => {
    const before = padron.changes!.page({ desde: '2000-01-01', hasta: '2100-01-01', first: 100 }).cambios;
    await set(DAY2.slice(0, 2), FLAGS2);
    await padron.refresh();
    expect(padron.state()).toMatchObject({ rows: DAY2.length, lastImport: { result: 'failed' } });
    expect(padron.changes!.page({ desde: '2000-01-01', hasta: '2100-01-01', first: 100 }).cambios).toEqual(before);
  });

  it('makes the new register the baseline when the one in use has no snapshot of its rows; keeps nothing from a damaged one', async () => {
    const root = mkdtempSync(join(tmpdir(), 'snapshots-'));
    const store = await ChangeStore.open(root);
    const all = { desde: '2000-01-01', hasta: '2100-01-01', first: 100 };
    const DAY_ONE = Date.parse('2026-11-01T12:00:00Z');
    try {
      const old = join(root, 'old');
      const neu = join(root, 'new');
      for (const d of [old, neu]) mkdirSync(d);
      const write = (d: string, rows: string[]) => {
        const w = new SnapshotWriter(join(d, SNAPSHOT));
        for (const r of rows) w.add(r.slice(0, 11), r.slice(12));
        w.close();
      };
      write(neu, DAY2);
      expect(await recordChanges(store, { path: old, dateMs: DAY_ONE }, { path: neu, dateMs: DAY_ONE + 86_400_000 })).toBeUndefined();
      // Not gzip; gzip of rows out of order (as a damaged one reads): nothing kept, no error out.
      writeFileSync(join(old, SNAPSHOT), 'not gzip');
      expect(await recordChanges(store, { path: old, dateMs: DAY_ONE }, { path: neu, dateMs: DAY_ONE + 86_400_000 })).toBeUndefined();
      write(old, [...DAY1].reverse());
      expect(await recordChanges(store, { path: old, dateMs: DAY_ONE }, { path: neu, dateMs: DAY_ONE + 86_400_000 })).toBeUndefined();
      expect(store.page(all).cambios).toEqual([]);
      // A directory where the snapshot should be: a read error, not a crash nor a wait.
      rmSync(join(old, SNAPSHOT));
      mkdirSync(join(old, SNAPSHOT));
      expect(await recordChanges(store, { path: old, dateMs: DAY_ONE }, { path: neu, dateMs: DAY_ONE + 86_400_000 })).toBeUndefined();
      rmSync(join(old, SNAPSHOT), { recursive: true });
      // And with both whole, the changes: DAY1's rows to DAY2's, flags aside; the staging file gone.
      write(old, DAY1);
      expect(await recordChanges(store, { path: old, dateMs: DAY_ONE }, { path: neu, dateMs: DAY_ONE + 86_400_000 })).toMatchObject({
        changes: 7,
      });
      expect(store.page(all).cambios).toHaveLength(7);
      expect(existsSync(`${neu}-changes`)).toBe(false);
    } finally {
      await store.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('the change store', () => {
  let store: ChangeStore;
  let root: string;
  let n = 0;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'change-store-'));
    store = await ChangeStore.open(root);
  });
  afterAll(async () => {
    await store?.close();
    rmSync(root, { recursive: true, force: true });
  });

  /** Keeps `changes` as one register's of `fecha`, as a comparison does. */
  async function keep(fecha: string, changes: [string, TipoCambio, string | null, string | null][]) {
    const staged = new StagedChanges(join(root, `staged-${n++}`));
    for (const [r, tipo, antes, despues] of changes) staged.add(r, tipo, antes, despues);
    staged.end();
    await store.commit(fecha, staged);
    staged.discard();
  }

  it('keeps a change’s first `antes` when a second register of the day changes it again, and forgets one undone', async () => {
    await keep('2026-11-20', [
      [ruc(1), 'ESTADO', 'ACTIVO', 'SUSPENSION TEMPORAL'],
      [ruc(2), 'CONDICION', 'HABIDO', 'NO HABIDO'],
    ]);
    await keep('2026-11-20', [
      [ruc(1), 'ESTADO', 'SUSPENSION TEMPORAL', 'BAJA DE OFICIO'],
      [ruc(2), 'CONDICION', 'NO HABIDO', 'HABIDO'],
    ]);
    expect(store.ofRuc(ruc(1))).toEqual([{ ruc: ruc(1), fecha: '2026-11-20', tipo: 'ESTADO', antes: 'ACTIVO', despues: 'BAJA DE OFICIO' }]);
    expect(store.ofRuc(ruc(2))).toEqual([]);
  });

  it('knows a change it holds exactly: sent once, it is no news again (issue 52)', async () => {
    await keep('2026-11-21', [[ruc(5), 'CONDICION', 'HABIDO', 'NO HABIDO']]);
    const cambio = { ruc: ruc(5), fecha: '2026-11-21', tipo: 'CONDICION' as const, antes: 'HABIDO', despues: 'NO HABIDO' };
    expect(store.holds(cambio)).toBe(true);
    expect(store.holds({ ...cambio, despues: 'NO HALLADO' })).toBe(false);
    expect(store.holds({ ...cambio, fecha: '2026-11-22' })).toBe(false);
  });

  it('drops the changes of registers of the last day not kept and before', async () => {
    await keep('2026-08-01', [[ruc(3), 'NOMBRE', 'A', 'B']]);
    await keep('2026-08-02', [[ruc(4), 'NOMBRE', 'A', 'B']]);
    expect(await store.prune('2026-08-01')).toBe(1);
    expect(store.ofRuc(ruc(3))).toEqual([]);
    expect(store.ofRuc(ruc(4))).toHaveLength(1);
    expect(store.ofRuc(ruc(1))).toHaveLength(1);
  });

  it('drops more changes than a transaction holds, a transaction at a time', async () => {
    await keep(
      '2026-07-01',
      Array.from(
        { length: 25_000 },
        (_, i) => [rucOf('10', 20_000_000 + i), 'UBIGEO', '150101', '150131'] as [string, TipoCambio, string, string],
      ),
    );
    expect(store.page({ desde: '2026-07-01', hasta: '2026-07-01', first: 1 }).hasNextPage).toBe(true);
    expect(await store.prune('2026-07-01')).toBe(25_000);
    expect(store.page({ desde: '2026-07-01', hasta: '2026-07-01', first: 1 }).cambios).toEqual([]);
  });

  it('keeps a poller’s place on an empty page', () => {
    const last = store.page({ desde: '2000-01-01', hasta: '2100-01-01', first: 100 });
    const after = store.page({ desde: '2000-01-01', hasta: '2100-01-01', first: 100, after: last.endCursor! });
    expect(after).toMatchObject({ cambios: [], hasNextPage: false, endCursor: last.endCursor });
  });
});
