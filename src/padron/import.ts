import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { RootDatabase } from 'lmdb';
import { request } from 'undici';
import yauzl from 'yauzl';
import { flagLine, padronLine, type SkipReason } from './lines.js';
import { FLAG_REGISTERS, PADRON_ZIP } from './sources.js';
import type { Filled } from './versions.js';

/** The most a zip may weigh: SUNAT's padrón is about 391 MB, a flag register 5 to 50 MB. */
const MAX_PADRON_BYTES = 2 * 1024 ** 3;
const MAX_FLAGS_BYTES = 512 * 1024 ** 2;
/**
 * Rows written per transaction: the event loop is held for some 30 ms at a time, so lookups never
 * stall, and few enough transactions that the index's pages read back stay few in memory (docs/padron.md).
 */
const ROWS_PER_TRANSACTION = 50_000;
const APPEND = { append: true };

/** The zips fetched for one import: where each is on disk, and the padrón's date as its server gives it. */
export interface Fetched {
  padron: string;
  flags: string[];
  lastModified: number | undefined;
}

/**
 * Downloads the five zips into `dir`, each at most its size; undefined when the padrón has not
 * changed since `since` (the server answers 304 to If-Modified-Since). Nothing is unzipped on disk.
 */
export async function fetchZips(urls: { padron: string; flags: string[] }, dir: string, since: number | undefined): Promise<Fetched | undefined> {
  await mkdir(dir, { recursive: true });
  const padron = join(dir, PADRON_ZIP);
  const got = await download(urls.padron, padron, MAX_PADRON_BYTES, since);
  if (!got) return undefined;
  const flags = await Promise.all(
    urls.flags.map(async (url, i) => {
      const path = join(dir, FLAG_REGISTERS[i]!.zip);
      await download(url, path, MAX_FLAGS_BYTES, undefined);
      return path;
    }),
  );
  return { padron, flags, lastModified: got.lastModified };
}

async function download(url: string, path: string, maxBytes: number, since: number | undefined) {
  const res = await request(url, {
    headers: since ? { 'if-modified-since': new Date(since).toUTCString() } : {},
    headersTimeout: 60_000,
    bodyTimeout: 120_000,
  });
  if (res.statusCode === 304) {
    await res.body.dump();
    return undefined;
  }
  if (res.statusCode !== 200) {
    await res.body.dump();
    throw new Error(`${url}: HTTP ${res.statusCode}`);
  }
  let seen = 0;
  const bounded = new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      done(seen > maxBytes ? new Error(`${url}: over ${maxBytes} bytes`) : null, chunk);
    },
  });
  await pipeline(res.body, bounded, createWriteStream(`${path}.part`));
  await rename(`${path}.part`, path);
  const modified = Date.parse(String(res.headers['last-modified'] ?? ''));
  return { lastModified: Number.isNaN(modified) ? undefined : modified };
}

/** The first `.txt` entry of a zip, streamed and inflated, and the time the zip gives it. */
function openText(zipPath: string): Promise<{ stream: Readable; modified: Date }> {
  return new Promise((resolve, reject) => {
    yauzl.open(zipPath, { lazyEntries: true, autoClose: true }, (error, zip) => {
      if (error) return reject(error);
      zip.on('error', reject);
      zip.on('end', () => reject(new Error(`${zipPath}: no .txt entry`)));
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!/\.txt$/i.test(entry.fileName)) return zip.readEntry();
        zip.openReadStream(entry, (failed, stream) => (failed ? reject(failed) : resolve({ stream, modified: entry.getLastModDate() })));
      });
      zip.readEntry();
    });
  });
}

/** Each line of a zip's text, decoded from ISO-8859-1; lines end with LF, CRLF or a lone CR. */
async function eachLine(zipPath: string, onLine: (line: string) => void): Promise<Date> {
  const { stream, modified } = await openText(zipPath);
  stream.setEncoding('latin1');
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  for await (const line of lines) onLine(line);
  return modified;
}

/** Each flag register's RUCs, sorted, as numbers: a few MB where a Map of texts took tens (docs/padron.md). */
async function readFlags(paths: readonly string[]): Promise<Float64Array[]> {
  const registers: Float64Array[] = [];
  for (const path of paths) {
    const rucs: number[] = [];
    await eachLine(path, (line) => {
      const ruc = flagLine(line);
      if (ruc) rucs.push(Number(ruc));
    });
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

/** Fills `db` from the fetched zips, streaming: the padrón's text is never held whole, nor written unzipped. */
export async function fillIndex(db: RootDatabase<string, string>, fetched: Fetched): Promise<Filled> {
  const flags = await readFlags(fetched.flags);
  const skipped: Record<SkipReason, number> = { fields: 0, ruc: 0, name: 0 };
  let rows = 0;
  let lastKey: string | undefined;
  /** The greatest RUC written: a row after it is appended, which keeps the index's pages full and only its last ones in memory. */
  let greatest = '';
  let batch: [string, string][] = [];
  let first = true;
  const flush = () => {
    const writing = batch;
    batch = [];
    db.transactionSync(() => {
      for (const [key, value] of writing) {
        // SUNAT writes its register in RUC order; a row out of it is put in its place (docs/padron.md).
        if (key > greatest) db.putSync(key, value, APPEND);
        else db.putSync(key, value);
        if (key > greatest) greatest = key;
      }
    });
  };
  const modified = await eachLine(fetched.padron, (line) => {
    const row = padronLine(line);
    const header = first;
    first = false;
    // The header (RUC|NOMBRE O RAZÓN SOCIAL|...) is no row, and no skip.
    if (header && row === 'ruc') return;
    if (typeof row === 'string') {
      if (line.trim() !== '') skipped[row]++;
      return;
    }
    batch.push([row.ruc, `${row.columns}|${flagText(flags, row.ruc)}`]);
    rows++;
    lastKey = row.ruc;
    if (batch.length >= ROWS_PER_TRANSACTION) flush();
  });
  if (batch.length) flush();
  return { dateMs: fetched.lastModified ?? modified.getTime(), rows, skipped, lastKey };
}

/** Removes what one import downloaded. */
export const removeZips = (dir: string) => rm(dir, { recursive: true, force: true });
