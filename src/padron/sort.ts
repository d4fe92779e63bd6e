import { closeSync, mkdirSync, openSync, readSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as yieldToLookups } from 'node:timers/promises';
import { Heap } from './heap.js';

/**
 * External sorts for the import: the register's rows by RUC, and the name index's entries. LMDB
 * is then written in key order only, appending: whatever the order of the lines, the index is never
 * read back while it is written, so neither its pages nor the time to find them grow with it
 * (docs/padron.md, "Whatever the order").
 */

/** Rows held before they are written, sorted, as one run: some 60 MB. */
const ROWS_PER_RUN = 200_000;
/** Rows of a run written at a time. */
const WRITE_ROWS = 5_000;
/** Entries sorted at a time: 4 MB, sorted in some 45 ms, so lookups are not held longer than by a transaction. */
const ENTRIES_PER_RUN = 1 << 19;
/** What a merge reads of each run at a time. */
const READ_BYTES = 1 << 18;
/** A merge yields to lookups after this many items. */
export const YIELD_EVERY = 50_000;

/** Digits of a row's line number: a register holds at most 60 million rows. */
const SEQ_DIGITS = 9;

/** A run's lines, read forward a chunk at a time. */
class LineReader {
  #buf = Buffer.alloc(READ_BYTES);
  #start = 0;
  #end = 0;
  #eof = false;
  readonly #fd: number;
  constructor(path: string) {
    this.#fd = openSync(path, 'r');
  }
  next(): string | undefined {
    for (;;) {
      const nl = this.#buf.indexOf(10, this.#start);
      if (nl >= 0 && nl < this.#end) {
        const line = this.#buf.toString('utf8', this.#start, nl);
        this.#start = nl + 1;
        return line;
      }
      if (this.#eof) return undefined;
      const left = this.#end - this.#start;
      if (left * 2 > this.#buf.length) this.#buf = Buffer.concat([this.#buf, Buffer.alloc(this.#buf.length)]);
      this.#buf.copy(this.#buf, 0, this.#start, this.#end);
      this.#start = 0;
      this.#end = left;
      const read = readSync(this.#fd, this.#buf, this.#end, this.#buf.length - this.#end, null);
      if (read === 0) {
        this.#eof = true;
        closeSync(this.#fd);
      }
      this.#end += read;
    }
  }
}

/**
 * Rows in any order, given back in RUC order, a RUC listed twice in the order of its lines: each
 * row is held as one text, its RUC, its line's number (fixed width) and its value, so that the
 * native sort of texts orders them with no comparison function.
 */
export class RowSorter {
  #held: string[] = [];
  #seq = 0;
  readonly #runs: string[] = [];
  constructor(
    readonly dir: string,
    readonly keyLength: number,
  ) {
    mkdirSync(dir, { recursive: true });
  }

  add(key: string, value: string): void {
    this.#held.push(`${key}${String(this.#seq++).padStart(SEQ_DIGITS, '0')}${value}`);
    if (this.#held.length >= ROWS_PER_RUN) this.#write();
  }

  #write(): void {
    const rows = this.#held.sort();
    this.#held = [];
    const path = join(this.dir, `rows-${this.#runs.length}`);
    // Written a slice at a time: the run joined whole would be a second copy of it, and its bytes a third.
    const fd = openSync(path, 'w');
    try {
      for (let i = 0; i < rows.length; i += WRITE_ROWS) writeSync(fd, `${rows.slice(i, i + WRITE_ROWS).join('\n')}\n`);
    } finally {
      closeSync(fd);
    }
    this.#runs.push(path);
  }

  /** Every row added, in order, to `each(key, value)`, yielding to lookups now and then (after `pause`). */
  async sorted(each: (key: string, value: string) => void, signal?: AbortSignal, pause?: () => void): Promise<void> {
    if (this.#held.length) this.#write();
    const readers = this.#runs.map((p) => new LineReader(p));
    const heads = readers.map((r) => r.next());
    // RUC and line number make every row's start unique: comparing whole texts compares them.
    const heap = new Heap((a, b) => heads[a]! < heads[b]!);
    heads.forEach((h, i) => h !== undefined && heap.push(i));
    const skip = this.keyLength + SEQ_DIGITS;
    for (let n = 1; heap.size; n++) {
      const run = heap.top;
      const line = heads[run]!;
      const next = (heads[run] = readers[run]!.next());
      heap.fix(next === undefined);
      each(line.slice(0, this.keyLength), line.slice(skip));
      if (n % YIELD_EVERY === 0) {
        pause?.();
        signal?.throwIfAborted();
        await yieldToLookups();
      }
    }
    pause?.();
  }
}

/** A run of entries, read forward a chunk at a time: `hi` and `lo` of the entry at hand. */
class EntryReader {
  readonly #fd: number;
  readonly #words = new Uint32Array(READ_BYTES / 4);
  #at = 0;
  #count = 0;
  hi = 0;
  lo = 0;
  constructor(path: string) {
    this.#fd = openSync(path, 'r');
  }
  next(): boolean {
    if (this.#at >= this.#count) {
      const read = readSync(this.#fd, this.#words, 0, this.#words.byteLength, null);
      if (read === 0) {
        closeSync(this.#fd);
        return false;
      }
      this.#count = read / 4;
      this.#at = 0;
    }
    // Little-endian 64-bit entries: the low word first.
    this.lo = this.#words[this.#at]!;
    this.hi = this.#words[this.#at + 1]!;
    this.#at += 2;
    return true;
  }
}

/** The name index's entries (./names.ts), 64 bits each, given back sorted. */
export class EntrySorter {
  readonly #words = new Uint32Array(ENTRIES_PER_RUN * 2);
  #count = 0;
  readonly #runs: string[] = [];
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  push(hi: number, lo: number): void {
    this.#words[this.#count * 2] = lo;
    this.#words[this.#count * 2 + 1] = hi;
    if (++this.#count === ENTRIES_PER_RUN) this.#write();
  }

  #write(): void {
    // As unsigned 64-bit numbers (little-endian: hi is the high word), sorted natively.
    const sorted = new BigUint64Array(this.#words.buffer, 0, this.#count).sort();
    const path = join(this.dir, `entries-${this.#runs.length}`);
    writeFileSync(path, new Uint8Array(sorted.buffer, 0, this.#count * 8));
    this.#runs.push(path);
    this.#count = 0;
  }

  /** Every entry pushed, in order, to `each(hi, lo)`, yielding to lookups now and then (after `pause`). */
  async sorted(each: (hi: number, lo: number) => void, signal?: AbortSignal, pause?: () => void): Promise<void> {
    if (this.#count) this.#write();
    const readers = this.#runs.map((p) => new EntryReader(p));
    const heap = new Heap((a, b) => {
      const x = readers[a]!;
      const y = readers[b]!;
      return x.hi < y.hi || (x.hi === y.hi && x.lo < y.lo);
    });
    readers.forEach((r, i) => r.next() && heap.push(i));
    for (let n = 1; heap.size; n++) {
      const reader = readers[heap.top]!;
      each(reader.hi, reader.lo);
      heap.fix(!reader.next());
      if (n % YIELD_EVERY === 0) {
        pause?.();
        signal?.throwIfAborted();
        await yieldToLookups();
      }
    }
    pause?.();
  }
}
