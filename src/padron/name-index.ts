import type { Database, RootDatabase } from 'lmdb';
import { LRUCache } from 'lru-cache';
import { Heap } from './heap.js';
import { LOW_SIGNS, STREAMS, streamOf, valueOf } from './names.js';

/**
 * The name index on disk: for each stream (a bucket, and whether the word is the name's first),
 * its taxpayers' ranks (./names.ts) in order, in blocks of up to BLOCK entries. A block's key is
 * its stream (4 bytes) and its last rank (8 bytes, a big-endian double: positive doubles sort as
 * their bytes), so the block holding a rank is the first at or after it.
 */
export type NamesDb = Database<Buffer, Buffer>;

/** Entries a block holds: 8 KB, read whole to find one. */
const BLOCK = 1024;
/** Blocks written a transaction: 8 MB. */
const FLUSH_BLOCKS = 1_000;
/** The key under which the streams' sizes are kept (no stream's key begins with 0xff). */
const COUNTS_KEY = Buffer.from([0xff]);

/**
 * The name index's database, named for its layout (./names.ts): an index of an earlier layout has none, so the gateway
 * imports the register again at start, as it does an index written before the search. 2: signs by the 4th character whole.
 */
const NAMES_DB = 'names.2';

export function openNames(db: RootDatabase<string, string>): NamesDb {
  return db.openDB<Buffer, Buffer>(NAMES_DB, { keyEncoding: 'binary', encoding: 'binary' });
}

export function blockKey(stream: number, rank: number): Buffer {
  const key = Buffer.allocUnsafe(12);
  key.writeUInt32BE(stream, 0);
  key.writeDoubleBE(rank, 4);
  return key;
}

/** How a sorted index's 64-bit entries read: each one's stream and its value in the stream; `streams` when their sizes are kept. */
export interface EntryLayout {
  stream(hi: number): number;
  value(hi: number, lo: number): number;
  streams?: number;
}

/** The name index's entries (./names.ts): a stream per bucket, sign group and first word or not, whose sizes are kept. */
export const NAME_ENTRIES: EntryLayout = { stream: streamOf, value: valueOf, streams: STREAMS };
/** The pair index's (./names.ts): a stream per pair of buckets; a value is the rank times LOW_SIGNS, read as a name entry with no sign. */
export const PAIR_ENTRIES: EntryLayout = { stream: (hi) => hi >>> 8, value: (hi, lo) => ((hi & 0xff) * 0x1_0000_0000 + lo) * LOW_SIGNS };

/** Writes the entries it is given in order, as blocks, in transactions of the root database. */
export class NamesWriter {
  readonly #counts: Uint32Array | undefined;
  #stream = -1;
  #block = new Float64Array(BLOCK);
  #size = 0;
  #pending: [Buffer, Buffer][] = [];
  entries = 0;

  constructor(
    readonly root: RootDatabase<string, string>,
    readonly names: NamesDb,
    readonly layout: EntryLayout = NAME_ENTRIES,
  ) {
    this.#counts = layout.streams === undefined ? undefined : new Uint32Array(layout.streams);
  }

  add(hi: number, lo: number): void {
    const stream = this.layout.stream(hi);
    if (stream !== this.#stream || this.#size === BLOCK) this.#close();
    this.#stream = stream;
    const value = this.layout.value(hi, lo);
    // Equal entries (none are: a name files a bucket and sign once) would only repeat one.
    if (this.#size > 0 && this.#block[this.#size - 1] === value) return;
    this.#block[this.#size++] = value;
    if (this.#counts) this.#counts[stream]!++;
    this.entries++;
  }

  #close(): void {
    if (this.#size === 0) return;
    const block = this.#block.slice(0, this.#size);
    this.#pending.push([blockKey(this.#stream, block[this.#size - 1]!), Buffer.from(block.buffer)]);
    this.#size = 0;
  }

  /**
   * Writes the blocks made so far, appended (they come in key order), once there are FLUSH_BLOCKS of them (or `all`): each
   * transaction maps the pages it copies, and the pages around them, into the process's RSS (docs/performance.md).
   */
  flush(all = false): void {
    if (!all && this.#pending.length < FLUSH_BLOCKS) return;
    const pending = this.#pending;
    this.#pending = [];
    if (pending.length) this.root.transactionSync(() => pending.forEach(([k, v]) => this.names.putSync(k, v, { append: true })));
  }

  /** The last block, and the streams' sizes (an empty list when they are not kept: the index is then known complete). */
  finish(): void {
    this.#close();
    this.flush(true);
    const counts = this.#counts ?? new Uint32Array(0);
    this.root.transactionSync(() => this.names.putSync(COUNTS_KEY, Buffer.from(counts.buffer)));
  }
}

/** The pair index, beside the name index in the same environment. */
export function openPairs(db: RootDatabase<string, string>): NamesDb {
  return db.openDB<Buffer, Buffer>('pairs', { keyEncoding: 'binary', encoding: 'binary' });
}

/** Whether a pair index was written whole (one written before pairs has none). */
export const hasPairs = (pairs: NamesDb) => pairs.getBinary(COUNTS_KEY) !== undefined;

/** The streams' sizes, or undefined for an index without names (one written before the search). */
export function readCounts(names: NamesDb): Uint32Array | undefined {
  const bytes = names.getBinary(COUNTS_KEY);
  if (!bytes || bytes.length !== STREAMS * 4) return undefined;
  return new Uint32Array(Uint8Array.from(bytes).buffer);
}

/** What one page's search has spent: entries passed over in streams, and blocks read. */
export interface Spent {
  scanned: number;
}

/** Entries a page may pass over (a block read counts as 256): beyond it a seek answers where it stopped, and the search is refused. */
export const MAX_SCANNED = 50_000_000;

/**
 * Where each stream's blocks end (their keys' last entries), read once a stream is first searched
 * and kept with its version: a block is then found by halves in memory and read by its exact key,
 * with no cursor.
 */
export class BlockDirectory {
  /** The streams searched most lately: all of SUNAT's would hold some 40 MB, mostly for streams never asked. */
  readonly #lasts = new LRUCache<number, Float64Array>({ max: 50_000 });
  constructor(readonly names: NamesDb) {}

  of(stream: number): Float64Array {
    let lasts = this.#lasts.get(stream);
    if (!lasts) {
      const keys = [...this.names.getKeys({ start: blockKey(stream, 0), end: blockKey(stream + 1, 0) })];
      lasts = Float64Array.from(
        keys.filter((k) => k.length === 12),
        (k) => k.readDoubleBE(4),
      );
      this.#lasts.set(stream, lasts);
    }
    return lasts;
  }

  /** A stream's entries, about (its blocks are full but the last): what orders a join's streams. */
  size(stream: number): number {
    const blocks = this.of(stream).length;
    return blocks === 0 ? 0 : blocks * BLOCK - BLOCK / 2;
  }
}

/** One stream's entries, read forward by `seek`: each is a rank times LOW_SIGNS plus its word's sign's low bits. */
export class StreamReader {
  #block: Float64Array | undefined;
  /** Which block of the stream is at hand, and the entry in it. */
  #number = -1;
  #at = 0;
  readonly #lasts: Float64Array;
  /** Where this reader's blocks are copied, one after another: no buffer allocated per block read. */
  #buffer: Float64Array | undefined;
  constructor(
    readonly names: NamesDb,
    readonly stream: number,
    /** The low bits of the signs let through (undefined: all). */
    readonly signs: Uint8Array | undefined,
    readonly spent: Spent,
    directory: BlockDirectory,
  ) {
    this.#lasts = directory.of(stream);
  }

  /** The first rank at or after `t` in this stream whose sign is let through, or Infinity. */
  seek(t: number): number {
    const signs = this.signs;
    let target = t * LOW_SIGNS;
    for (;;) {
      const block = this.#reach(target);
      if (!block) return Infinity;
      if (!signs) return Math.floor(block[this.#at]! / LOW_SIGNS);
      // Past the entries of the stream's other words: a scan of numbers, no name read.
      const spent = this.spent;
      for (let i = this.#at; i < block.length; i++) {
        const v = block[i]!;
        // The page's work spent: where the scan stopped is a lower bound, and a candidate the names will refuse.
        // The sign's low bits: `v % LOW_SIGNS` is a floating-point remainder, four times slower (docs/performance.md).
        if (signs[v - Math.floor(v / LOW_SIGNS) * LOW_SIGNS]! || ++spent.scanned > MAX_SCANNED) {
          this.#at = i;
          return Math.floor(v / LOW_SIGNS);
        }
      }
      target = block[block.length - 1]! + 1;
    }
  }

  /** A block's entries, copied from LMDB's buffer (valid only until the next read) into this reader's own. */
  #read(key: Buffer): Float64Array {
    const bytes = this.names.getBinaryFast(key)!;
    // LMDB's buffer is larger than the value: its `length` says the value's.
    const size = bytes.length;
    const buffer = (this.#buffer ??= new Float64Array(BLOCK));
    new Uint8Array(buffer.buffer, 0, size).set(bytes.subarray(0, size));
    return buffer.subarray(0, size / 8);
  }

  /** The block holding the first entry at or after `target`, `#at` on that entry; undefined past the stream's end. */
  #reach(target: number): Float64Array | undefined {
    let block = this.#block;
    if (!block || block[block.length - 1]! < target) {
      const lasts = this.#lasts;
      // The first block whose last entry reaches the target: the next one most often, else by halves.
      let k = this.#number + 1;
      if (k < lasts.length && lasts[k]! < target) {
        let hi = lasts.length;
        while (k < hi) {
          const mid = (k + hi) >>> 1;
          if (lasts[mid]! < target) k = mid + 1;
          else hi = mid;
        }
      }
      if (k >= lasts.length) return undefined;
      this.spent.scanned += 256;
      block = this.#block = this.#read(blockKey(this.stream, lasts[k]!));
      this.#number = k;
      this.#at = 0;
    }
    if (block[this.#at]! >= target) return block;
    let lo = this.#at;
    let hi = block.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (block[mid]! < target) lo = mid + 1;
      else hi = mid;
    }
    this.#at = lo;
    return block;
  }
}

/** Several streams read as one: the first rank at or after `t` in any. A seek moves only the streams behind `t`. */
export class UnionReader {
  /** Each stream's last answer, where it stands; the streams not yet past their end, the nearest on top. */
  readonly #heads: Float64Array;
  readonly #heap: Heap;
  constructor(
    readonly parts: StreamReader[],
    readonly size: number,
  ) {
    const heads = (this.#heads = new Float64Array(parts.length).fill(-1));
    this.#heap = new Heap((a, b) => heads[a]! < heads[b]!);
    parts.forEach((_, i) => this.#heap.push(i));
  }

  seek(t: number): number {
    // Most words read one stream, or two: no heap to keep.
    if (this.parts.length === 1) return this.parts[0]!.seek(t);
    const heads = this.#heads;
    const heap = this.#heap;
    // A stream that stands at or past `t` answers where it stands: only those behind are moved.
    while (heap.size && heads[heap.top]! < t) {
      const top = heap.top;
      heads[top] = this.parts[top]!.seek(t);
      heap.fix(heads[top] === Infinity);
    }
    return heap.size ? heads[heap.top]! : Infinity;
  }
}
