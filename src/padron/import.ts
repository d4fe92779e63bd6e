import { rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Transform, Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { RootDatabase } from 'lmdb';
import yauzl from 'yauzl';
import type { Fetched, ImportProgress } from './fetch.js';
import { flagLine, padronLine, type SkipReason } from './lines.js';
import { nameIndexStep } from './name-step.js';
import { RowSorter } from './sort.js';
import type { StepRun } from './steps.js';
import type { Filled, IndexMeta } from './versions.js';

/** Rows written per transaction: the event loop is held for some 30 ms at a time, so lookups never stall. */
const ROWS_PER_TRANSACTION = 50_000;
const APPEND = { append: true };

/**
 * What a register may hold before the import stops rather than exhaust memory, disk or a core: a
 * broken or hostile mirror's zip may inflate to anything. SUNAT's lines are under 300 bytes, its
 * text 1.57 GB and 18.3 million lines, a flag register under 50 MB.
 */
const LIMITS = {
  lineBytes: 4096,
  padronBytes: 8 * 1024 ** 3,
  flagBytes: 1024 ** 3,
  rows: 60_000_000,
  flagRows: 2_000_000,
  /** Lines skipped: at most this share of the lines, and at most `skippedMax` in all. */
  skippedShare: 0.05,
  skippedMax: 1_000_000,
  /** A new register with fewer rows than this share of the one in use is refused (a cut or a sample, not SUNAT's day). */
  rowsKept: 0.9,
};

/** The first `.txt` entry of a zip, streamed and inflated, the time the zip gives it, and how to close the zip. */
function openText(zipPath: string): Promise<{ stream: Readable; modified: Date; close: () => void }> {
  return new Promise((resolve, reject) => {
    yauzl.open(zipPath, { lazyEntries: true, autoClose: false }, (error, zip) => {
      if (error) return reject(error);
      const close = () => zip.close();
      zip.on('error', reject);
      zip.on('end', () => {
        close();
        reject(new Error(`${basename(zipPath)}: no .txt entry`));
      });
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!/\.txt$/i.test(entry.fileName)) return zip.readEntry();
        zip.openReadStream(entry, (failed, stream) => {
          if (failed) {
            close();
            return reject(failed);
          }
          resolve({ stream, modified: entry.getLastModDate(), close });
        });
      });
      zip.readEntry();
    });
  });
}

/**
 * Each line of a zip's text, decoded from ISO-8859-1; lines end with LF, CRLF or a lone CR. The
 * zip is closed and its streams destroyed however it ends, `onLine` throwing included.
 */
async function eachLine(zipPath: string, maxBytes: number, onLine: (line: string) => void, signal?: AbortSignal): Promise<Date> {
  const { stream, modified, close } = await openText(zipPath);
  const name = basename(zipPath);
  const text = bounded(name, maxBytes);
  text.setEncoding('latin1');
  // Split here rather than by readline, whose promise per line costs more than the line's own reading.
  let carry = '';
  const each = (line: string) => {
    // Looked at on every line: a stop or the deadline must not wait for a batch that blank or skipped lines never fill.
    signal?.throwIfAborted();
    // A long line between two short ones of one chunk is past the transform's check (ISO-8859-1: a byte a character).
    if (line.length > LIMITS.lineBytes) throw new Error(`${name}: a line over ${LIMITS.lineBytes} bytes`);
    onLine(line);
  };
  const lines = new Writable({
    decodeStrings: false,
    write(chunk: string, _enc, done) {
      try {
        // A CR at the chunk's end may be the first half of a CRLF: kept for the next chunk.
        const held = chunk.endsWith('\r') ? 1 : 0;
        const parts = (carry + chunk.slice(0, chunk.length - held)).split(LINE_END);
        carry = parts.pop()! + (held ? '\r' : '');
        if (carry.length > LIMITS.lineBytes + 1) throw new Error(`${name}: a line over ${LIMITS.lineBytes} bytes`);
        for (const line of parts) each(line);
        done();
      } catch (error) {
        done(error as Error);
      }
    },
    final(done) {
      try {
        const last = carry.replace(/\r$/, '');
        if (last !== '') each(last);
        done();
      } catch (error) {
        done(error as Error);
      }
    },
  });
  try {
    await pipeline(stream, text, lines);
    return modified;
  } finally {
    text.destroy();
    stream.destroy();
    close();
  }
}

/** Lines end with LF, CRLF or a lone CR. */
const LINE_END = /\r\n|\r|\n/;

/** Passes the text on, failing at a line over LIMITS.lineBytes (readline would hold any line whole) or past `maxBytes` in all. */
function bounded(name: string, maxBytes: number): Transform {
  let sinceEnd = 0;
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      total += chunk.length;
      const end = Math.max(chunk.lastIndexOf(0x0a), chunk.lastIndexOf(0x0d));
      sinceEnd = end < 0 ? sinceEnd + chunk.length : chunk.length - end - 1;
      if (sinceEnd > LIMITS.lineBytes) return done(new Error(`${name}: a line over ${LIMITS.lineBytes} bytes`));
      done(total > maxBytes ? new Error(`${name}: over ${maxBytes} bytes of text`) : null, chunk);
    },
  });
}

/** Each flag register's RUCs, sorted, as numbers: 8 bytes a RUC, where a Map of texts holds an object and a string for each. */
async function readFlags(paths: readonly string[], signal?: AbortSignal): Promise<Float64Array[]> {
  const registers: Float64Array[] = [];
  for (const path of paths) {
    const rucs: number[] = [];
    let last: string | undefined;
    await eachLine(
      path,
      LIMITS.flagBytes,
      (line) => {
        const ruc = flagLine(line);
        // A RUC repeated on the next line is one RUC: a register listing one RUC millions of times holds no memory.
        if (!ruc || ruc === last) return;
        last = ruc;
        if (rucs.push(Number(ruc)) > LIMITS.flagRows) throw new Error(`${basename(path)}: over ${LIMITS.flagRows} RUCs`);
      },
      signal,
    );
    registers.push(Float64Array.from(rucs).sort());
  }
  return registers;
}

function listed(sorted: Float64Array, ruc: number): boolean {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const at = sorted[mid]!;
    if (at === ruc) return true;
    if (at < ruc) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** `S` or `N` per flag register, in FLAG_REGISTERS's order. */
function flagText(registers: readonly Float64Array[], ruc: string): string {
  const n = Number(ruc);
  let text = '';
  for (const sorted of registers) text += listed(sorted, n) ? 'S' : 'N';
  return text;
}

export type SkipCount = Record<SkipReason | 'duplicate', number>;

interface FillOptions {
  signal?: AbortSignal;
  rowsInUse?: number;
  progress?: ImportProgress;
  /** The register's steps (./steps.ts), run over this import's rows. @default the name index alone */
  steps?: StepRun[];
}

/**
 * Fills `db` from the fetched zips, streaming: the padrón's text is never held whole, nor written
 * unzipped. Its rows are sorted on disk first (./sort.ts), then appended in RUC order, each given
 * to every step as it is written; once the register is found to be one, each step finishes its
 * part. Neither the time nor the memory depends on the order of the lines. Stops when `signal`
 * aborts, and refuses a register that is not one (LIMITS).
 */
export async function fillIndex(
  db: RootDatabase<string, string>,
  fetched: Fetched,
  scratch: string,
  options: FillOptions = {},
): Promise<Filled> {
  const { signal, rowsInUse = 0, progress } = options;
  const steps = options.steps ?? [nameIndexStep.begin({ db, path: scratch, scratch, signal })];
  if (progress) progress.phase = 'indexing';
  const flags = await readFlags(fetched.flags, signal);
  const sorter = new RowSorter(join(scratch, 'rows'), 11);
  const read = await readRows(fetched.padron, flags, sorter, signal, progress);
  const written = await writeRows(db, sorter, steps, signal);
  const skipped: SkipCount = { ...read.skipped, duplicate: written.duplicates };
  refuseUnlikeSunat({ lines: read.lines, skips: read.skips, duplicates: written.duplicates, rows: written.rows, rowsInUse });
  const derived: Partial<IndexMeta> = {};
  for (const step of steps) Object.assign(derived, await step.finish());
  // A date past now is a mirror's error or a forgery: believed, it would never go stale.
  const dateMs = Math.min(fetched.lastModified ?? read.modified.getTime(), Date.now());
  return { ...derived, dateMs, rows: written.rows, skipped, lastKey: written.lastKey };
}

/** Phase 1: each line of the padrón read, checked and added to `sorter` as [RUC, what the index keeps]. */
async function readRows(path: string, flags: Float64Array[], sorter: RowSorter, signal?: AbortSignal, progress?: ImportProgress) {
  const skipped: Record<SkipReason, number> = { fields: 0, ruc: 0, name: 0 };
  let lines = 0;
  let skips = 0;
  let rows = 0;
  const modified = await eachLine(
    path,
    LIMITS.padronBytes,
    function readLine(line) {
      const row = padronLine(line);
      if (progress) progress.linesRead++;
      // The header (RUC|NOMBRE O RAZÓN SOCIAL|...) is no row, and no skip.
      if (lines++ === 0 && row === 'ruc') return;
      if (typeof row === 'string') {
        if (line.trim() === '') return;
        skipped[row]++;
        if (++skips > LIMITS.skippedMax) throw new Error(`over ${LIMITS.skippedMax} lines skipped: not SUNAT's register`);
        return;
      }
      sorter.add(row.ruc, `${row.columns}|${flagText(flags, row.ruc)}`);
      if (++rows > LIMITS.rows) throw new Error(`over ${LIMITS.rows} rows`);
    },
    signal,
  );
  return { modified, lines, skips, skipped };
}

/**
 * Phase 2: the rows in RUC order, appended in transactions and given to each step; a RUC listed again keeps its first line (a later
 * one may be an impostor's name).
 */
async function writeRows(db: RootDatabase<string, string>, sorter: RowSorter, steps: StepRun[], signal?: AbortSignal) {
  let rows = 0;
  let duplicates = 0;
  let lastKey: string | undefined;
  let batch: [string, string][] = [];
  const flush = () => {
    const writing = batch;
    batch = [];
    if (writing.length) db.transactionSync(() => writing.forEach(([key, value]) => db.putSync(key, value, APPEND)));
  };
  await sorter.sorted(
    function writeRow(key, value) {
      if (key === lastKey) {
        if (++duplicates > LIMITS.skippedMax) throw new Error(`over ${LIMITS.skippedMax} RUCs listed again: not SUNAT's register`);
        return;
      }
      lastKey = key;
      batch.push([key, value]);
      rows++;
      for (const step of steps) step.row(key, value);
    },
    signal,
    flush,
  );
  return { rows, duplicates, lastKey };
}

/** Throws when what was read is not SUNAT's register: mostly bad lines or duplicates, or far fewer rows than the one in use. */
function refuseUnlikeSunat(read: { lines: number; skips: number; duplicates: number; rows: number; rowsInUse: number }): void {
  const { lines, skips, duplicates, rows, rowsInUse } = read;
  const tolerated = Math.max(100, lines * LIMITS.skippedShare);
  if (skips > tolerated) throw new Error(`${skips} of ${lines} lines skipped: not SUNAT's register`);
  if (duplicates > tolerated) throw new Error(`${duplicates} of ${lines - 1} lines list a RUC again: not SUNAT's register`);
  if (rows < rowsInUse * LIMITS.rowsKept)
    throw new Error(`${rows} rows, against ${rowsInUse} in the register in use: not a whole register`);
}

/** Removes what one import downloaded. */
export const removeZips = (dir: string) => rm(dir, { recursive: true, force: true });
