import { join } from 'node:path';
import { setImmediate as yieldToLookups } from 'node:timers/promises';
import type { RootDatabase } from 'lmdb';
import type { Logger } from 'pino';
import { CHANGES_DAYS } from '../config/padron.js';
import { composeAddress } from './record.js';
import { SNAPSHOT, SnapshotReader } from './snapshot.js';
import { FLAG_REGISTERS } from './sources.js';
import { openIndex } from './versions.js';

/**
 * What changed between two registers (contract, "What changed"): each import of a newer register
 * is compared with the one in use, both read in RUC order (a merge), and the changes are kept in
 * an LMDB environment of their own under PADRON_DIR (`changes`), which outlives the indexes.
 */

const FLAG_TIPOS = FLAG_REGISTERS.map(({ flag }) => flag.replace(/^es_/, '').toUpperCase());
export const TIPOS_CAMBIO = ['ALTA', 'SALIDA', 'NOMBRE', 'ESTADO', 'CONDICION', 'DIRECCION', 'UBIGEO', ...FLAG_TIPOS] as const;
export type TipoCambio = (typeof TIPOS_CAMBIO)[number];

export interface Cambio {
  ruc: string;
  /** YYYY-MM-DD: the register's date in Lima. */
  fecha: string;
  tipo: TipoCambio;
  antes: string | null;
  despues: string | null;
}

/** A register's date as the changes name it: its day in Lima. */
const LIMA_DAY = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Lima', year: 'numeric', month: '2-digit', day: '2-digit' });
export const fechaOf = (dateMs: number) => LIMA_DAY.format(dateMs);

const text = (v: string | undefined) => (v === undefined || v === '' || v === '-' ? null : v);
const flagOf = (flags: string | undefined, i: number) => (flags?.[i] === 'S' ? 'SI' : 'NO');

/** What changed for one RUC, from what each index keeps of it (undefined: not in that register). */
export function changesOf(before: string | undefined, after: string | undefined): [TipoCambio, string | null, string | null][] {
  if (before === after) return [];
  if (before === undefined) return [['ALTA', null, after!.slice(0, after!.indexOf('|'))]];
  if (after === undefined) return [['SALIDA', before.slice(0, before.indexOf('|')), null]];
  const a = before.split('|');
  const b = after.split('|');
  const found: [TipoCambio, string | null, string | null][] = [];
  const compare = (tipo: TipoCambio, x: string | null, y: string | null) => x !== y && found.push([tipo, x, y]);
  compare('NOMBRE', a[0] ?? null, b[0] ?? null);
  compare('ESTADO', text(a[1]), text(b[1]));
  compare('CONDICION', text(a[2]), text(b[2]));
  compare('DIRECCION', composeAddress(a), composeAddress(b));
  compare('UBIGEO', text(a[3]), text(b[3]));
  FLAG_TIPOS.forEach((tipo, i) => compare(tipo as TipoCambio, flagOf(a[14], i), flagOf(b[14], i)));
  return found;
}

/** The comparison yields to lookups this often. */
const YIELD_EVERY = 50_000;

/** Every change from the rows of one snapshot (./snapshot.ts) to another's, in RUC order, to `each`. */
export async function compareSnapshots(
  before: SnapshotReader,
  after: SnapshotReader,
  each: (ruc: string, tipo: TipoCambio, antes: string | null, despues: string | null) => void,
  signal?: AbortSignal,
): Promise<void> {
  for (let n = 1; ; n++) {
    const x = await before.head();
    const y = await after.head();
    if (x === undefined && y === undefined) return;
    const kx = x?.slice(0, 11);
    const ky = y?.slice(0, 11);
    const ruc = ky === undefined || (kx !== undefined && kx < ky) ? kx! : ky;
    for (const [tipo, antes, despues] of changesOf(kx === ruc ? x!.slice(11) : undefined, ky === ruc ? y!.slice(11) : undefined)) each(ruc, tipo, antes, despues);
    if (kx === ruc) before.advance();
    if (ky === ruc) after.advance();
    if (n % YIELD_EVERY === 0) {
      signal?.throwIfAborted();
      await yieldToLookups();
    }
  }
}

/** Changes written per transaction. */
const PER_TRANSACTION = 10_000;
const tipoCode = (tipo: TipoCambio) => String(TIPOS_CAMBIO.indexOf(tipo)).padStart(2, '0');
/** Keys: by date (`d`, date, RUC, type) for the feed, and by RUC (`r`, RUC, date, type) for a taxpayer's own. */
const byDate = (fecha: string, ruc: string, tipo: string) => `d${fecha}${ruc}${tipo}`;
const byRuc = (ruc: string, fecha: string, tipo: string) => `r${ruc}${fecha}${tipo}`;

function cambioOf(key: string, value: string): Cambio {
  const [fecha, ruc] = key[0] === 'd' ? [key.slice(1, 11), key.slice(11, 22)] : [key.slice(12, 22), key.slice(1, 12)];
  const [antes, despues] = JSON.parse(value) as [string | null, string | null];
  return { ruc, fecha, tipo: TIPOS_CAMBIO[Number(key.slice(22, 24))]!, antes, despues };
}

/** A page of the feed: the changes, each one's cursor, and where to go on. */
export interface CambiosPage {
  cambios: Cambio[];
  cursors: string[];
  hasNextPage: boolean;
  endCursor: string | null;
}

export interface CambiosQuery {
  desde: string;
  hasta: string;
  rucs?: readonly string[] | undefined;
  tipos?: readonly TipoCambio[] | undefined;
  first: number;
  /** A cursor this store gave: the key of the last change seen. */
  after?: string | undefined;
}

/** Entries a page of the feed passes over at most (a rare type over many days): beyond it, a short page and a cursor to go on. */
const MAX_SCANNED = 200_000;

export class ChangeStore {
  private constructor(readonly db: RootDatabase<string, string>) {}

  static async open(dir: string): Promise<ChangeStore> {
    return new ChangeStore(await openIndex(join(dir, 'changes')));
  }

  /**
   * A writer of one register's changes (`fecha`), in transactions of PER_TRANSACTION (held some
   * milliseconds each, as the import's). A second register of the same day keeps each change's
   * first `antes`, and a change undone that day is no change.
   */
  writer(fecha: string): { add(ruc: string, tipo: TipoCambio, antes: string | null, despues: string | null): void; flush(): void; count: number } {
    // Each change held as text of its own: `antes` and `despues` are slices of the snapshot's chunks, which they would keep alive.
    let pending: [string, string, string][] = [];
    const db = this.db;
    const flush = () => {
      const batch = pending;
      pending = [];
      db.transactionSync(() => {
        for (const [ruc, tipo, value] of batch) {
          const d = byDate(fecha, ruc, tipo);
          const earlier = db.get(d);
          const [antes, despues] = JSON.parse(value) as [string | null, string | null];
          const first = earlier === undefined ? antes : (JSON.parse(earlier) as [string | null])[0];
          if (earlier !== undefined && first === despues) {
            db.removeSync(d);
            db.removeSync(byRuc(ruc, fecha, tipo));
            continue;
          }
          const kept = earlier === undefined ? value : JSON.stringify([first, despues]);
          db.putSync(d, kept);
          db.putSync(byRuc(ruc, fecha, tipo), kept);
        }
      });
    };
    const writer = {
      count: 0,
      add(ruc: string, tipo: TipoCambio, antes: string | null, despues: string | null) {
        pending.push([ruc, tipoCode(tipo), JSON.stringify([antes, despues])]);
        writer.count++;
        if (pending.length >= PER_TRANSACTION) flush();
      },
      flush,
    };
    return writer;
  }

  /** Removes the changes of registers dated before `fecha`. */
  prune(fecha: string): number {
    let removed = 0;
    // A transaction's worth at a time: PADRON_CHANGES_DAYS lowered may drop months of changes at once.
    for (;;) {
      const keys = [...this.db.getKeys({ start: 'd', end: `d${fecha}`, limit: PER_TRANSACTION })];
      if (keys.length === 0) return removed;
      this.db.transactionSync(() => {
        for (const k of keys) {
          this.db.removeSync(k);
          this.db.removeSync(byRuc(k.slice(11, 22), k.slice(1, 11), k.slice(22, 24)));
        }
      });
      removed += keys.length;
    }
  }

  /** A RUC's changes since `desde` (all kept when absent), newest first. */
  ofRuc(ruc: string, desde?: string): Cambio[] {
    const found = [...this.db.getRange({ start: `r${ruc}${desde ?? ''}`, end: `r${ruc}~` })].map(({ key, value }) => cambioOf(key, value));
    return found.reverse();
  }

  /** A page of the changes between two dates (inclusive), in date, RUC and type order: of some RUCs and types, or all. */
  page(q: CambiosQuery): CambiosPage {
    const tipos = q.tipos?.length ? new Set(q.tipos.map(tipoCode)) : undefined;
    const from = q.after && q.after >= `d${q.desde}` ? `${q.after}\0` : `d${q.desde}`;
    const end = `d${q.hasta}~`;
    const found: { key: string; value: string }[] = [];
    let scanned = 0;
    /** Where a page whose work ran out goes on from: the last entry it looked at. */
    let lookedAt: string | undefined;
    let spent = false;
    const take = (key: string, value: string) => {
      lookedAt = key;
      if (tipos && !tipos.has(key.slice(22, 24))) return true;
      found.push({ key, value });
      return found.length <= q.first;
    };
    if (q.rucs) {
      // Each RUC's own, put in the feed's order: at most the kept days' worth each.
      const keys: { key: string; value: string }[] = [];
      for (const ruc of new Set(q.rucs)) {
        for (const { key, value } of this.db.getRange({ start: `r${ruc}${q.desde}`, end: `r${ruc}${q.hasta}~` })) {
          const d = byDate(key.slice(12, 22), ruc, key.slice(22, 24));
          if (d >= from) keys.push({ key: d, value });
        }
      }
      keys.sort((a, b) => (a.key < b.key ? -1 : 1));
      for (const { key, value } of keys) if (!take(key, value)) break;
    } else {
      for (const { key, value } of this.db.getRange({ start: from, end })) {
        if (++scanned > MAX_SCANNED) {
          spent = true;
          break;
        }
        if (!take(key, value)) break;
      }
    }
    const more = found.length > q.first;
    if (more) found.length = q.first;
    const cursors = found.map((f) => f.key);
    const endCursor = spent && !more ? lookedAt! : (cursors.at(-1) ?? null);
    return { cambios: found.map((f) => cambioOf(f.key, f.value)), cursors, hasNextPage: more || spent, endCursor };
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

/** What one comparison recorded: the new register's date, its changes, and the older ones dropped. */
export interface Recorded {
  fecha: string;
  changes: number;
  pruned: number;
  durationMs: number;
}


/**
 * Records what changed from `before` (the register in use: its directory and date) to `after` (a
 * newer one, not yet in use: a comparison cut short is made again with the next import), then
 * drops the changes older than `days`. Nothing for the first register (the baseline), for one not
 * newer, or when the one in use has no snapshot (written before them). A snapshot that cannot be
 * read costs the changes, said in the log, not the new register.
 */
export async function recordChanges(
  store: ChangeStore | undefined,
  before: { path: string; dateMs: number } | undefined,
  after: { path: string; dateMs: number },
  days = CHANGES_DAYS,
  logger?: Logger,
  signal?: AbortSignal,
): Promise<Recorded | undefined> {
  if (!store || !before || after.dateMs <= before.dateMs) return undefined;
  const was = SnapshotReader.open(join(before.path, SNAPSHOT));
  const is = SnapshotReader.open(join(after.path, SNAPSHOT));
  if (!was || !is) {
    was?.close();
    is?.close();
    logger?.warn('padron: the register in use has no snapshot of its rows (written by an older gateway); this one is the baseline of the changes');
    return undefined;
  }
  const started = performance.now();
  const fecha = fechaOf(after.dateMs);
  const writer = store.writer(fecha);
  try {
    await compareSnapshots(was, is, writer.add, signal);
  } catch (error) {
    if (signal?.aborted) throw error;
    logger?.warn({ err: error }, 'padron: the changes could not all be read; those found are kept');
  } finally {
    was.close();
    is.close();
  }
  writer.flush();
  const pruned = store.prune(fechaOf(after.dateMs - days * 86_400_000));
  const recorded = { fecha, changes: writer.count, pruned, durationMs: Math.round(performance.now() - started) };
  logger?.info({ changes: recorded }, 'padron: changes recorded');
  return recorded;
}
