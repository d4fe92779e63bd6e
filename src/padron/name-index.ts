import type { Database, RootDatabase } from 'lmdb';
import { BUCKETS, rankOf } from './names.js';

/**
 * The name index on disk: for each stream (a bucket, and whether the word is the name's first),
 * its taxpayers' ranks (./names.ts) in order, in blocks of up to BLOCK entries. A block's key is
 * its stream (4 bytes) and its last rank (8 bytes, a big-endian double: positive doubles sort as
 * their bytes), so the block holding a rank is the first at or after it.
 */
export type NamesDb = Database<Buffer, Buffer>;

/** Entries a block holds: 8 KB, read whole to find one. */
const BLOCK = 1024;
/** The key under which the streams' sizes are kept (no stream's key begins with 0xff). */
const COUNTS_KEY = Buffer.from([0xff]);
export const STREAMS = BUCKETS * 2;

export function openNames(db: RootDatabase<string, string>): NamesDb {
  return db.openDB<Buffer, Buffer>('names', { keyEncoding: 'binary', encoding: 'binary' });
}

export function blockKey(stream: number, rank: number): Buffer {
  const key = Buffer.allocUnsafe(12);
  key.writeUInt32BE(stream, 0);
  key.writeDoubleBE(rank, 4);
  return key;
}

/** Writes the entries it is given in order, as blocks, in transactions of the root database. */
export class NamesWriter {
  readonly #counts = new Uint32Array(STREAMS);
  #stream = -1;
  #block = new Float64Array(BLOCK);
  #size = 0;
  #pending: [Buffer, Buffer][] = [];
  entries = 0;

  constructor(
    readonly root: RootDatabase<string, string>,
    readonly names: NamesDb,
  ) {}

  add(hi: number, lo: number): void {
    const stream = hi >>> 15;
    if (stream !== this.#stream || this.#size === BLOCK) this.#close();
    this.#stream = stream;
    const rank = rankOf(hi, lo);
    // Equal entries (none are: a name files a bucket once) would only repeat a rank.
    if (this.#size > 0 && this.#block[this.#size - 1] === rank) return;
    this.#block[this.#size++] = rank;
    this.#counts[stream]!++;
    this.entries++;
  }

  #close(): void {
    if (this.#size === 0) return;
    const block = this.#block.slice(0, this.#size);
    this.#pending.push([blockKey(this.#stream, block[this.#size - 1]!), Buffer.from(block.buffer)]);
    this.#size = 0;
  }

  /** Writes the blocks made so far, appended (they come in key order). */
  flush(): void {
    const pending = this.#pending;
    this.#pending = [];
    if (pending.length) this.root.transactionSync(() => pending.forEach(([k, v]) => this.names.putSync(k, v, { append: true })));
  }

  /** The last block, and the streams' sizes. */
  finish(): void {
    this.#close();
    this.flush();
    this.root.transactionSync(() => this.names.putSync(COUNTS_KEY, Buffer.from(this.#counts.buffer)));
  }
}

/** The streams' sizes, or undefined for an index without names (one written before the search). */
export function readCounts(names: NamesDb): Uint32Array | undefined {
  const bytes = names.getBinary(COUNTS_KEY);
  if (!bytes || bytes.length !== STREAMS * 4) return undefined;
  return new Uint32Array(Uint8Array.from(bytes).buffer);
}

/** One stream's ranks, read forward by `seek`. */
export class StreamReader {
  #block: Float64Array | undefined;
  #at = 0;
  constructor(
    readonly names: NamesDb,
    readonly stream: number,
  ) {}

  /** The first rank at or after `t` in this stream, or Infinity. */
  seek(t: number): number {
    let block = this.#block;
    if (!block || block[block.length - 1]! < t) {
      block = this.#block = this.#load(t);
      this.#at = 0;
      if (!block) return Infinity;
    }
    if (block[this.#at]! >= t) return block[this.#at]!;
    let lo = this.#at;
    let hi = block.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (block[mid]! < t) lo = mid + 1;
      else hi = mid;
    }
    this.#at = lo;
    return block[lo]!;
  }

  #load(t: number): Float64Array | undefined {
    for (const { key, value } of this.names.getRange({ start: blockKey(this.stream, t), limit: 1 })) {
      if (key.readUInt32BE(0) !== this.stream || key.length !== 12) return undefined;
      return new Float64Array(Uint8Array.from(value).buffer);
    }
    return undefined;
  }
}

/** Several streams read as one: the first rank at or after `t` in any. */
export class UnionReader {
  constructor(
    readonly parts: StreamReader[],
    readonly size: number,
  ) {}

  seek(t: number): number {
    let min = Infinity;
    for (const part of this.parts) min = Math.min(min, part.seek(t));
    return min;
  }
}
