import type { Database, RootDatabase } from 'lmdb';
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
/** The key under which the streams' sizes are kept (no stream's key begins with 0xff). */
const COUNTS_KEY = Buffer.from([0xff]);

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
    const stream = streamOf(hi);
    if (stream !== this.#stream || this.#size === BLOCK) this.#close();
    this.#stream = stream;
    const value = valueOf(hi, lo);
    // Equal entries (none are: a name files a bucket and sign once) would only repeat one.
    if (this.#size > 0 && this.#block[this.#size - 1] === value) return;
    this.#block[this.#size++] = value;
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

/** One stream's entries, read forward by `seek`: each is a rank times LOW_SIGNS plus its word's sign's low bits. */
export class StreamReader {
  #block: Float64Array | undefined;
  #at = 0;
  /** The blocks after the one at hand, read in order while a scan goes on block after block. */
  #ahead: Iterator<{ key: Buffer; value: Buffer }> | undefined;
  /** Past its last entry: every later seek is Infinity, with no read. */
  #done = false;
  constructor(
    readonly names: NamesDb,
    readonly stream: number,
    /** The low bits of the signs let through (undefined: all). */
    readonly signs: Uint8Array | undefined,
  ) {}

  /** The first rank at or after `t` in this stream whose sign is let through, or Infinity. */
  seek(t: number): number {
    const signs = this.signs;
    let target = t * LOW_SIGNS;
    for (;;) {
      const block = this.#reach(target);
      if (!block) return Infinity;
      if (!signs) return Math.floor(block[this.#at]! / LOW_SIGNS);
      // Past the entries of the stream's other words: a scan of numbers, no name read.
      for (let i = this.#at; i < block.length; i++) {
        const v = block[i]!;
        if (signs[v % LOW_SIGNS]) {
          this.#at = i;
          return Math.floor(v / LOW_SIGNS);
        }
      }
      target = block[block.length - 1]! + 1;
    }
  }

  /** The block holding the first entry at or after `target`, `#at` on that entry; undefined past the stream's end. */
  #reach(target: number): Float64Array | undefined {
    if (this.#done) return undefined;
    let block = this.#block;
    if (!block || block[block.length - 1]! < target) {
      block = this.#block = this.#load(target);
      this.#at = 0;
      if (!block) {
        this.#done = true;
        return undefined;
      }
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

  #load(target: number): Float64Array | undefined {
    // The next block in order, when it reaches the target (a scan); else a jump, by the keys' order.
    const next = this.#ahead?.next();
    if (next && !next.done && this.#ours(next.value.key) && next.value.key.readDoubleBE(4) >= target) return blockOf(next.value.value);
    this.#ahead = this.names.getRange({ start: blockKey(this.stream, target), end: blockKey(this.stream + 1, 0) })[Symbol.iterator]();
    const found = this.#ahead.next();
    return !found.done && this.#ours(found.value.key) ? blockOf(found.value.value) : undefined;
  }

  #ours(key: Buffer): boolean {
    return key.length === 12 && key.readUInt32BE(0) === this.stream;
  }
}

/** A block's entries, copied out of LMDB's memory (which the next read may reuse) into aligned memory. */
const blockOf = (value: Buffer) => new Float64Array(value.buffer.slice(value.byteOffset, value.byteOffset + value.length));

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
