import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { ChangeStore } from '../../src/padron/change-store.js';
import type { Recorded } from '../../src/padron/changes.js';
import { ChangesStep } from '../../src/padron/changes-step.js';
import { SNAPSHOT } from '../../src/padron/snapshot.js';
import { openIndex, type IndexMeta } from '../../src/padron/versions.js';
import { ruc } from '../fixtures/changes.js';

const dir = mkdtempSync(join(tmpdir(), 'changes-step-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const kept = (name: string, condicion: string) => `${name}|ACTIVO|${condicion}|150131|-|-|-|-|-|-|-|-|-|-|NNNN`;
const meta = (dateMs: number): IndexMeta => ({ dateMs, rows: 2, skipped: {}, importedAt: dateMs, durationMs: 1 });
const DAY = 86_400_000;

describe('the changes step', () => {
  it('opens its store, snapshots each import’s rows, compares them with the register in use before the switch and tells after it', async () => {
    let inUse: { path: string; dateMs: number } | undefined;
    const told: [ChangeStore, Recorded | undefined][] = [];
    const step = new ChangesStep({
      dir,
      logger: pino({ level: 'silent' }),
      inUse: () => inUse,
      onChanges: (store, recorded) => told.push([store, recorded]),
    });
    await step.open();
    expect(step.store).toBeDefined();
    expect(told).toEqual([[step.store, undefined]]);

    const importOf = async (path: string, dateMs: number, condicion: string) => {
      const db = await openIndex(path);
      const run = step.begin({ db, path, scratch: join(path, 'scratch') });
      run.row(ruc(1), kept('PROVEEDOR S.A.C.', condicion));
      run.row(ruc(2), kept('OTRO S.A.C.', 'HABIDO'));
      await run.finish();
      expect(existsSync(join(path, SNAPSHOT))).toBe(true);
      await run.beforeSwitch!(meta(dateMs));
      run.afterSwitch!();
      run.end!();
      await db.close();
    };
    // The first register is the baseline: nothing recorded, nothing told.
    await importOf(join(dir, 'v-1'), 1_800_000_000_000, 'HABIDO');
    expect(told).toHaveLength(1);
    inUse = { path: join(dir, 'v-1'), dateMs: 1_800_000_000_000 };
    await importOf(join(dir, 'v-2'), 1_800_000_000_000 + DAY, 'NO HABIDO');
    expect(told).toHaveLength(2);
    expect(told[1]![1]).toMatchObject({ changes: 1 });
    expect(step.store!.ofRuc(ruc(1)).map((c) => [c.tipo, c.antes, c.despues])).toEqual([['CONDICION', 'HABIDO', 'NO HABIDO']]);
    await step.close();
  });
});
