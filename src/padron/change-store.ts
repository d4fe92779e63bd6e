import { closeSync, createReadStream, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setImmediate as yieldToLookups } from 'node:timers/promises';
import type { RootDatabase } from 'lmdb';
import type { Logger } from 'pino';
import { PadronRefused } from './search.js';
import { openIndex } from './versions.js';

/**
 * The changes kept (./changes.ts), in an LMDB environment of their own under PADRON_DIR
 * (`changes`), which outlives the indexes: keyed by date, RUC and type (the feed) and by RUC,
 * date and type (a taxpayer's own). A comparison's changes are staged in a file first and written
 * here only once it has read both registers whole: one cut short or reading a damaged snapshot
 * leaves nothing.
 */

/** The types of change, in the contract's order. A type's code in the keys is its place here: never reordered. */
export const TIPOS_CAMBIO = [
  'ALTA',
  'SALIDA',
  'NOMBRE',
  'ESTADO',
  'CONDICION',
  'DIRECCION',
  'UBIGEO',
  'AGENTE_DE_RETENCION',
  'AGENTE_DE_PERCEPCION',
  'AGENTE_DE_PERCEPCION_COMBUSTIBLE',
  'BUEN_CONTRIBUYENTE',
] as const;
export type TipoCambio = (typeof TIPOS_CAMBIO)[number];

export interface Cambio {
  ruc: string;
  /** YYYY-MM-DD: the register's date in Lima. */
  fecha: string;
  tipo: TipoCambio;
  antes: string | null;
  despues: string | null;
}

/** Changes written per transaction (some milliseconds each, as the import's); the event loop turns between them. */
const PER_TRANSACTION = 10_000;
/** More changes than this in one day is no day of SUNAT's register (a hostile or broken mirror): none are kept. */
export const MAX_CHANGES = 2_000_000;
const tipoCode = (tipo: TipoCambio) => String(TIPOS_CAMBIO.indexOf(tipo)).padStart(2, '0');
const byDate = (fecha: string, ruc: string, tipo: string) => `d${fecha}${ruc}${tipo}`;
const byRuc = (ruc: string, fecha: string, tipo: string) => `r${ruc}${fecha}${tipo}`;

function cambioOf(key: string, value: string): Cambio {
  const [fecha, ruc] = key[0] === 'd' ? [key.slice(1, 11), key.slice(11, 22)] : [key.slice(12, 22), key.slice(1, 12)];
  const [antes, despues] = JSON.parse(value) as [string | null, string | null];
  return { ruc, fecha, tipo: TIPOS_CAMBIO[Number(key.slice(22, 24))]!, antes, despues };
}

/** A page's cursor: the key of its last change, opaque to the caller; one this store did not give is refused. */
const CURSOR = /^d\d{4}-\d{2}-\d{2}\d{13}$/;
const cursorOfKey = (key: string) => Buffer.from(key).toString('base64url');
function keyOfCursor(cursor: string): string {
  const key = cursor.length <= 64 ? Buffer.from(cursor, 'base64url').toString('latin1') : '';
  if (!CURSOR.test(key)) throw new PadronRefused('changesCursorNotOurs');
  return key;
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
  /** Only these RUCs' (none or empty: every RUC's). */
  rucs?: readonly string[] | undefined;
  /** Only these types (none or empty: every type). */
  tipos?: readonly TipoCambio[] | undefined;
  first: number;
  /** A cursor this store gave: the key of the last change seen. */
  after?: string | undefined;
}

/** Entries a page of the feed reads at most (a rare type over many days): beyond it, a short page and a cursor to go on. */
const MAX_SCANNED = 50_000;

/** A comparison found more changes than MAX_CHANGES: no day of SUNAT's register. */
export class TooManyChanges extends Error {
  constructor() {
    super(`over ${MAX_CHANGES} changes: not a day of SUNAT's register`);
  }
}

/** One comparison's changes, staged in a file (`path`) until it has ended: each as a line of RUC, type code and JSON. */
export class StagedChanges {
  readonly #fd: number;
  #held: string[] = [];
  count = 0;
  constructor(readonly path: string) {
    this.#fd = openSync(path, 'w');
  }

  add(ruc: string, tipo: TipoCambio, antes: string | null, despues: string | null): void {
    if (++this.count > MAX_CHANGES) throw new TooManyChanges();
    // Serialized now: `antes` and `despues` are slices of the snapshot's chunks, which they would keep alive.
    this.#held.push(`${ruc}${tipoCode(tipo)}${JSON.stringify([antes, despues])}\n`);
    if (this.#held.length >= PER_TRANSACTION) this.#write();
  }

  #write(): void {
    const lines = this.#held;
    this.#held = [];
    if (lines.length) writeSync(this.#fd, lines.join(''));
  }

  /** Ends the staging: what is held is written, and the file closed, whatever happens. */
  end(): void {
    try {
      this.#write();
    } finally {
      closeSync(this.#fd);
    }
  }

  discard(): void {
    rmSync(this.path, { force: true });
  }

  /** The changes staged (once ended), as `fecha`'s, grouped by RUC in the file's order. */
  async read(fecha: string): Promise<Map<string, Cambio[]>> {
    const byRuc = new Map<string, Cambio[]>();
    const lines = createInterface({ input: createReadStream(this.path, 'utf8'), crlfDelay: Infinity });
    for await (const line of lines) {
      const cambio = cambioOf(byDate(fecha, line.slice(0, 11), line.slice(11, 13)), line.slice(13));
      byRuc.set(cambio.ruc, [...(byRuc.get(cambio.ruc) ?? []), cambio]);
    }
    return byRuc;
  }
}

export class ChangeStore {
  private constructor(readonly db: RootDatabase<string, string>) {}

  static async open(dir: string): Promise<ChangeStore> {
    return new ChangeStore(await openIndex(join(dir, 'changes')));
  }

  /** The store under `dir`, or none, said in the log, when it cannot be opened (a read-only PADRON_DIR, a damaged store). */
  static openOrSay(dir: string, logger: Logger): Promise<ChangeStore | undefined> {
    return ChangeStore.open(dir).catch((error: unknown) => {
      logger.warn({ err: error }, 'padron: the changes under PADRON_DIR/changes could not be opened; none are read or kept');
      return undefined;
    });
  }

  /**
   * Writes one register's (`fecha`) staged changes, PER_TRANSACTION at a time. A second register
   * of the same day keeps each change's first `antes`, and a change undone that day is no change.
   */
  async commit(fecha: string, staged: StagedChanges, signal?: AbortSignal): Promise<void> {
    let batch: string[] = [];
    const lines = createInterface({ input: createReadStream(staged.path, 'utf8'), crlfDelay: Infinity });
    try {
      for await (const line of lines) {
        batch.push(line);
        if (batch.length < PER_TRANSACTION) continue;
        this.#write(fecha, batch);
        batch = [];
        signal?.throwIfAborted();
        await yieldToLookups();
      }
      this.#write(fecha, batch);
    } finally {
      lines.close();
    }
  }

  #write(fecha: string, lines: string[]): void {
    const db = this.db;
    db.transactionSync(() => {
      for (const line of lines) {
        const [ruc, tipo, value] = [line.slice(0, 11), line.slice(11, 13), line.slice(13)];
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
  }

  /** Removes the changes of registers dated `fecha` or before, a transaction's worth at a time, the event loop turning between. */
  async prune(fecha: string): Promise<number> {
    let removed = 0;
    for (;;) {
      const keys = [...this.db.getKeys({ start: 'd', end: `d${fecha}~`, limit: PER_TRANSACTION })];
      if (keys.length === 0) return removed;
      this.db.transactionSync(() => {
        for (const k of keys) {
          this.db.removeSync(k);
          this.db.removeSync(byRuc(k.slice(11, 22), k.slice(1, 11), k.slice(22, 24)));
        }
      });
      removed += keys.length;
      await yieldToLookups();
    }
  }

  /** Whether changes of `fecha` are kept. */
  hasDate(fecha: string): boolean {
    return [...this.db.getKeys({ start: `d${fecha}`, end: `d${fecha}~`, limit: 1 })].length > 0;
  }

  /** The dates that have changes, after `after` when given, oldest first. */
  dates(after = ''): string[] {
    const dates: string[] = [];
    // One seek per date: from past the last date's keys.
    for (let from = after ? `d${after}~` : 'd'; ;) {
      const [key] = [...this.db.getKeys({ start: from, end: 'd~', limit: 1 })];
      if (key === undefined) return dates;
      dates.push(key.slice(1, 11));
      from = `d${dates.at(-1)}~`;
    }
  }

  /**
   * One date's changes in RUC and type order, PER_TRANSACTION at a time, the event loop turning between: a day of any
   * size is read in bounded memory, never whole.
   */
  async *batchesOf(fecha: string): AsyncGenerator<Cambio[]> {
    for (let from = `d${fecha}`; ; await yieldToLookups()) {
      const batch: Cambio[] = [];
      for (const { key, value } of this.db.getRange({ start: from, end: `d${fecha}~`, limit: PER_TRANSACTION })) {
        batch.push(cambioOf(key, value));
        from = `${key}\0`;
      }
      if (batch.length > 0) yield batch;
      if (batch.length < PER_TRANSACTION) return;
    }
  }

  /** Whether `fecha` holds this very change already (the same `antes` and `despues`): sent before, it is no news. */
  holds(cambio: Cambio): boolean {
    const kept = this.db.get(byDate(cambio.fecha, cambio.ruc, tipoCode(cambio.tipo)));
    return kept !== undefined && kept === JSON.stringify([cambio.antes, cambio.despues]);
  }

  /** How many changes `fecha` has. */
  async countOf(fecha: string): Promise<number> {
    let count = 0;
    for await (const batch of this.batchesOf(fecha)) count += batch.length;
    return count;
  }

  /** The changes of `fecha` of these RUCs, grouped by RUC: each RUC's own keys read, nothing else of the day. */
  ofRucsOn(fecha: string, rucs: Iterable<string>): Map<string, Cambio[]> {
    const found = new Map<string, Cambio[]>();
    for (const ruc of rucs) {
      const list = [...this.db.getRange({ start: `d${fecha}${ruc}`, end: `d${fecha}${ruc}~` })].map(({ key, value }) =>
        cambioOf(key, value),
      );
      if (list.length) found.set(ruc, list);
    }
    return found;
  }

  /** A RUC's changes since `desde` (all kept when absent), newest first. */
  ofRuc(ruc: string, desde?: string): Cambio[] {
    const found = [...this.db.getRange({ start: `r${ruc}${desde ?? ''}`, end: `r${ruc}~` })].map(({ key, value }) => cambioOf(key, value));
    return found.reverse();
  }

  /** A page of the changes between two dates (inclusive), in date, RUC and type order: of some RUCs and types, or all. */
  page(asked: CambiosQuery): CambiosPage {
    const q = { ...asked, after: asked.after === undefined ? undefined : keyOfCursor(asked.after) };
    const tipos = q.tipos?.length ? new Set(q.tipos.map(tipoCode)) : undefined;
    const from = q.after && q.after >= `d${q.desde}` ? `${q.after}\0` : `d${q.desde}`;
    const found: { key: string; value: string }[] = [];
    let scanned = 0;
    /** Where a page whose work ran out goes on from: the last entry it looked at. */
    let lookedAt: string | undefined;
    let spent = false;
    const take = (key: string, value: string) => {
      if (++scanned > MAX_SCANNED) {
        spent = true;
        return false;
      }
      lookedAt = key;
      if (tipos && !tipos.has(key.slice(22, 24))) return true;
      found.push({ key, value });
      return found.length <= q.first;
    };
    if (q.rucs?.length) {
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
      for (const { key, value } of this.db.getRange({ start: from, end: `d${q.hasta}~` })) if (!take(key, value)) break;
    }
    const more = found.length > q.first;
    if (more) found.length = q.first;
    const cursors = found.map((f) => f.key);
    // An empty page keeps the caller's place: a poller that saves endCursor each time loses nothing.
    const endCursor = spent && !more ? (lookedAt ?? q.after ?? null) : (cursors.at(-1) ?? q.after ?? null);
    return {
      cambios: found.map((f) => cambioOf(f.key, f.value)),
      cursors: cursors.map(cursorOfKey),
      hasNextPage: more || spent,
      endCursor: endCursor && cursorOfKey(endCursor),
    };
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
