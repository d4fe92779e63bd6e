import { join } from 'node:path';
import { setImmediate as yieldToLookups } from 'node:timers/promises';
import type { RootDatabase } from 'lmdb';
import type { Logger } from 'pino';
import { CHANGES_DAYS } from '../config/padron.js';
import { todayInLima } from '../upstream/dates.js';
import { readKept } from './record.js';
import { ChangeStore, MAX_CHANGES, StagedChanges, TooManyChanges, type Cambio, type TipoCambio } from './change-store.js';
import { SNAPSHOT, SnapshotReader } from './snapshot.js';
import { FLAG_REGISTERS } from './sources.js';

/**
 * What changed between two registers (contract, "What changed"): each import of a newer register
 * is compared with the one in use, their rows' snapshots read side by side in RUC order (a merge),
 * and the changes kept (./change-store.ts).
 */

/** Each flag register's type of change, by its flag's name (es_agente_de_retencion: AGENTE_DE_RETENCION). */
const FLAG_TIPOS = FLAG_REGISTERS.map(({ flag }) => flag.replace(/^es_/, '').toUpperCase() as TipoCambio);

/** A register's date as the changes name it: its day in Lima. */

/** What changed for one RUC, from what each index keeps of it (undefined: not in that register). */
export function changesOf(before: string | undefined, after: string | undefined): [TipoCambio, string | null, string | null][] {
  if (before === after) return [];
  if (before === undefined) return [['ALTA', null, readKept(after!).nombre]];
  if (after === undefined) return [['SALIDA', readKept(before).nombre, null]];
  const a = readKept(before);
  const b = readKept(after);
  const found: [TipoCambio, string | null, string | null][] = [];
  const compare = (tipo: TipoCambio, x: string | null, y: string | null) => x !== y && found.push([tipo, x, y]);
  compare('NOMBRE', a.nombre, b.nombre);
  compare('ESTADO', a.estado, b.estado);
  compare('CONDICION', a.condicion, b.condicion);
  compare('DIRECCION', a.direccion, b.direccion);
  compare('UBIGEO', a.ubigeo, b.ubigeo);
  FLAG_TIPOS.forEach((tipo, i) => compare(tipo, a.flags[i]!, b.flags[i]!));
  return found;
}

/** The comparison yields to lookups this often. */
const YIELD_EVERY = 50_000;
const RUC = /^\d{11}$/;

/** Every change from the rows of one snapshot (./snapshot.ts) to another's, in RUC order, to `each`. */
export async function compareSnapshots(
  before: SnapshotReader,
  after: SnapshotReader,
  each: (ruc: string, tipo: TipoCambio, antes: string | null, despues: string | null) => void,
  signal?: AbortSignal,
): Promise<void> {
  let lastX = '';
  let lastY = '';
  for (let n = 1; ; n++) {
    const x = await before.head();
    const y = await after.head();
    if (x === undefined && y === undefined) return;
    const kx = x?.slice(0, 11);
    const ky = y?.slice(0, 11);
    // A damaged snapshot would make every row after the damage a change: its rows must be RUCs, in order.
    if ((kx !== undefined && !(RUC.test(kx) && kx > lastX)) || (ky !== undefined && !(RUC.test(ky) && ky > lastY))) {
      throw new Error('a snapshot of the rows is damaged: its rows are not RUCs in order');
    }
    const ruc = ky === undefined || (kx !== undefined && kx < ky) ? kx! : ky;
    for (const [tipo, antes, despues] of changesOf(kx === ruc ? x!.slice(11) : undefined, ky === ruc ? y!.slice(11) : undefined))
      each(ruc, tipo, antes, despues);
    if (kx === ruc) {
      lastX = kx;
      before.advance();
    }
    if (ky === ruc) {
      lastY = ky;
      after.advance();
    }
    if (n % YIELD_EVERY === 0) {
      signal?.throwIfAborted();
      await yieldToLookups();
    }
  }
}

/** What one comparison recorded: the new register's date, its changes, and the older ones dropped. */
export interface Recorded {
  fecha: string;
  changes: number;
  pruned: number;
  durationMs: number;
  /** A second register of a date whose changes were kept: its own changes (merged into the day's in the store), to be told apart. */
  again?: Map<string, Cambio[]> | undefined;
}

/** A second register of the same date keeps its own changes apart (to be sent) only up to this many: a real one has a few. */
const MAX_AGAIN = 200_000;

/**
 * Records what changed from `before` (the register in use: its directory and date) to `after` (a
 * newer one, not yet in use), then drops the changes of registers older than `days`. The changes
 * are staged beside `after` and kept only once both snapshots are read whole: a comparison cut
 * short is made again by the next import (the register in use is still the old one); a damaged
 * snapshot, or a change store that fails, costs that day's changes, said in the log, never the
 * new register. Nothing for the first register (the baseline), for one not newer, or when the one
 * in use has no snapshot (written by an older gateway).
 */
export async function recordChanges(
  store: ChangeStore | undefined,
  before: { path: string; dateMs: number } | undefined,
  after: { path: string; dateMs: number },
  days = CHANGES_DAYS,
  logger?: Logger,
  signal?: AbortSignal,
): Promise<Recorded | undefined> {
  if (!store) return undefined;
  const started = performance.now();
  const fecha = todayInLima(after.dateMs);
  const staged = before && after.dateMs > before.dateMs ? await stagedChanges(before.path, after.path, logger, signal) : undefined;
  try {
    const later = staged !== undefined && store.hasDate(fecha);
    const again = later && staged.count <= MAX_AGAIN ? newsOf(store, await staged.read(fecha)) : undefined;
    if (later && staged.count > MAX_AGAIN)
      logger?.warn(
        { changes: { fecha, count: staged.count, max: MAX_AGAIN } },
        `padron: a later register of ${fecha} changed more than ${MAX_AGAIN} rows: its changes are kept (cambiosPadron, ` +
          `Contribuyente.cambios) but not sent to subscriptions or live feeds; the next day's are`,
      );
    if (staged) await store.commit(fecha, staged, signal);
    const pruned = await store.prune(todayInLima(after.dateMs - days * 86_400_000));
    const recorded = { fecha, changes: staged?.count ?? 0, pruned, durationMs: Math.round(performance.now() - started), again };
    if (staged) logger?.info({ changes: { ...recorded, again: again !== undefined } }, 'padron: changes recorded');
    return staged ? recorded : undefined;
  } catch (error) {
    if (signal?.aborted) throw error;
    logger?.warn({ err: error }, 'padron: the changes could not be kept; the new register is used all the same');
    return undefined;
  } finally {
    staged?.discard();
  }
}

/** A later register's changes less those the day holds already, each exactly (sent before, under their own ids). */
function newsOf(store: ChangeStore, byRuc: Map<string, Cambio[]>): Map<string, Cambio[]> {
  const news = new Map<string, Cambio[]>();
  for (const [ruc, list] of byRuc) {
    const fresh = list.filter((c) => !store.holds(c));
    if (fresh.length) news.set(ruc, fresh);
  }
  return news;
}

/** The changes from one snapshot to the other, staged in a file beside `after`; undefined when they cannot all be read (said why). */
async function stagedChanges(before: string, after: string, logger?: Logger, signal?: AbortSignal): Promise<StagedChanges | undefined> {
  const was = SnapshotReader.open(join(before, SNAPSHOT));
  const is = SnapshotReader.open(join(after, SNAPSHOT));
  if (!was || !is) {
    was?.close();
    is?.close();
    logger?.warn(
      'padron: the register in use has no snapshot of its rows (written by an older gateway); this one is the baseline of the changes',
    );
    return undefined;
  }
  // A name of the versions' kind: what a killed import left is removed with the rest.
  const staged = new StagedChanges(`${after}-changes`);
  try {
    await compareSnapshots(was, is, (ruc, tipo, antes, despues) => staged.add(ruc, tipo, antes, despues), signal);
    staged.end();
    return staged;
  } catch (error) {
    try {
      staged.end();
    } catch {
      // Closed already, or the disk is failing: the file goes all the same.
    }
    staged.discard();
    if (signal?.aborted) throw error;
    if (error instanceof TooManyChanges)
      logger?.warn(
        { changes: { over: MAX_CHANGES } },
        `padron: more than ${MAX_CHANGES} changes from the register in use to this one: not a day of SUNAT's register; ` +
          'none of its changes are kept or sent (the new register is used all the same)',
      );
    else logger?.warn({ err: error }, 'padron: the registers could not be compared; no change is kept for this one');
    return undefined;
  } finally {
    was.close();
    is.close();
  }
}
