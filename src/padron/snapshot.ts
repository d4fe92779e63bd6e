import { closeSync, createReadStream, existsSync, openSync, writeSync } from 'node:fs';
import { createGunzip, constants, gzipSync } from 'node:zlib';

/**
 * An index's rows in RUC order, gzipped beside it (`rows.gz`), as the import writes them: the
 * next import compares its own with them by reading this file, not the old index, whose pages,
 * read through LMDB's map, would all count in the process's RSS (1.9 GB at SUNAT's size).
 */
export const SNAPSHOT = 'rows.gz';

/** Text gathered before it is compressed and written: each piece is a gzip member of its own (gunzip reads them as one). */
const PIECE_CHARS = 1 << 20;

export class SnapshotWriter {
  readonly #fd: number;
  #held: string[] = [];
  #chars = 0;
  constructor(path: string) {
    this.#fd = openSync(path, 'w');
  }

  add(ruc: string, value: string): void {
    this.#held.push(ruc + value);
    this.#chars += value.length + 11;
    if (this.#chars >= PIECE_CHARS) this.#write();
  }

  #write(): void {
    if (this.#held.length === 0) return;
    // The fastest level: the file is read once, by the next import.
    writeSync(this.#fd, gzipSync(`${this.#held.join('\n')}\n`, { level: constants.Z_BEST_SPEED }));
    this.#held = [];
    this.#chars = 0;
  }

  /** Writes what is held and closes the file, whatever happens (a full disk leaves no descriptor open). */
  close(): void {
    try {
      this.#write();
    } finally {
      closeSync(this.#fd);
    }
  }
}

/** A snapshot read forward: `head()` the row at hand (its RUC its first 11 characters), `advance()` past it. */
export class SnapshotReader {
  #lines: string[] = [];
  #at = 0;
  #carry = '';
  #ended = false;
  readonly #chunks: AsyncIterator<string>;
  readonly #file: ReturnType<typeof createReadStream>;
  readonly #stream: ReturnType<typeof createGunzip>;

  private constructor(path: string) {
    this.#file = createReadStream(path);
    this.#stream = createGunzip();
    // pipe() passes no error on: the file's (EIO, a directory) fails the reading, rather than the process or a wait for good.
    this.#file.on('error', (error) => this.#stream.destroy(error));
    this.#file.pipe(this.#stream);
    this.#stream.setEncoding('utf8');
    this.#chunks = this.#stream[Symbol.asyncIterator]() as AsyncIterator<string>;
  }

  /** The snapshot at `path`, or undefined when there is none (an index written before snapshots). */
  static open(path: string): SnapshotReader | undefined {
    return existsSync(path) ? new SnapshotReader(path) : undefined;
  }

  async head(): Promise<string | undefined> {
    while (this.#at >= this.#lines.length && !this.#ended) {
      const { value, done } = await this.#chunks.next();
      const text = this.#carry + (done ? '' : (value as string));
      const lines = text.split('\n');
      this.#carry = lines.pop()!;
      this.#lines = lines;
      this.#at = 0;
      this.#ended = done === true;
    }
    return this.#lines[this.#at];
  }

  advance(): void {
    this.#at++;
  }

  close(): void {
    this.#stream.destroy();
    this.#file.destroy();
  }
}
