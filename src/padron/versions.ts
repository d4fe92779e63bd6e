import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, open as openFile, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RootDatabase } from 'lmdb';
import { BlockDirectory, hasPairs, type NamesDb, openNames, openPairs, readCounts } from './name-index.js';

/** What a complete index says of itself, written last: an index without it is no index. */
export interface IndexMeta {
  /** The register's date (epoch ms): the padrón zip's Last-Modified, else its entry's time. */
  dateMs: number;
  rows: number;
  skipped: Record<string, number>;
  importedAt: number;
  durationMs: number;
  /** The name index's entries, and the rows it could not file (a RUC that is no RUC); absent in an index written before the search. */
  names?: { entries: number; pairs?: number; unindexed: number };
}

/** What filling an index gives: its meta but the times, and the last key it wrote. */
export type Filled = Omit<IndexMeta, 'importedAt' | 'durationMs'> & { lastKey: string | undefined };

/** One index on disk, open for lookups, and for searches when it has a name index. */
export interface Version {
  name: string;
  db: RootDatabase<string, string>;
  meta: IndexMeta;
  names: NameIndex | undefined;
}

/** What a search reads: the name index, its streams' sizes and blocks, and the pair index when the import wrote one. */
export interface NameIndex {
  db: NamesDb;
  counts: Uint32Array;
  directory: BlockDirectory;
  pairs: { db: NamesDb; directory: BlockDirectory } | undefined;
}

export function namesOf(db: RootDatabase<string, string>): NameIndex | undefined {
  try {
    const names = openNames(db);
    const counts = readCounts(names);
    return counts ? { db: names, counts, directory: new BlockDirectory(names), pairs: pairsOf(db) } : undefined;
  } catch {
    // An index written before the search, opened read-only: it has no name index to open.
    return undefined;
  }
}

function pairsOf(db: RootDatabase<string, string>): NameIndex['pairs'] {
  try {
    const pairs = openPairs(db);
    return hasPairs(pairs) ? { db: pairs, directory: new BlockDirectory(pairs) } : undefined;
  } catch {
    // An index written before the pair index, opened read-only.
    return undefined;
  }
}

const META_KEY = '~meta';
/** The file naming the index in use; replaced whole (written beside, then renamed), so it never names a partial one. */
const CURRENT = 'current';
const VERSION = /^v-[\w-]+$/;
/** Where an import puts its zips: what a killed one left is removed with the rest. */
export const DOWNLOADS = 'downloads';

/** LMDB is loaded only when an index is opened: with PADRON off, no start pays for its native code (33 ms, 13 MB here). */
export async function openIndex(path: string, readOnly = false): Promise<RootDatabase<string, string>> {
  const { open } = await import('lmdb');
  // Read-only, LMDB takes no lock on a read-only file system: an index on one is read as it is.
  return open<string, string>({ path, encoding: 'string', compression: false, noSync: true, readOnly });
}

/** Whether `dir` may be written (a read-only mount says no, even to root). */
const writable = (dir: string) =>
  access(dir, constants.W_OK).then(
    () => true,
    () => false,
  );

/**
 * The indexes of PADRON_DIR: each import writes a new one beside the one in use, under a name
 * of its own, and `current` is switched to it only once it is complete and checked. A killed
 * import leaves only a directory nobody names, removed at the next start.
 */
export class Versions {
  constructor(readonly dir: string) {}

  /** The index `current` names, when it is complete; every other directory here is removed. */
  async openCurrent(): Promise<Version | undefined> {
    await mkdir(this.dir, { recursive: true });
    const readOnly = !(await writable(this.dir));
    const name = (await readFile(join(this.dir, CURRENT), 'utf8').catch(() => '')).trim();
    let version: Version | undefined;
    if (VERSION.test(name)) {
      const db = await openIndex(join(this.dir, name), readOnly);
      const meta = readMeta(db);
      if (meta) version = { name, db, meta, names: namesOf(db) };
      else await db.close();
    }
    if (!readOnly) await this.removeAllBut(version?.name);
    return version;
  }

  /**
   * Writes a new index with `fill` (into its directory, `path`), checks it, runs `beforeSwitch` on it (the comparison with the one in use), and makes
   * it the one in use; a failure leaves the one in use as it was.
   */
  async write(
    fill: (db: RootDatabase<string, string>, scratch: string, path: string) => Promise<Filled>,
    startedAt: number,
    signal?: AbortSignal,
    beforeSwitch?: (path: string, meta: IndexMeta) => Promise<unknown>,
  ): Promise<Version> {
    const name = `v-${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}`;
    const path = join(this.dir, name);
    await this.mayWrite();
    const db = await openIndex(path);
    // The import's sorted runs: a directory of the versions' kind, so that what a killed import left is removed at the next start.
    const scratch = `${path}-sort`;
    try {
      const { lastKey, ...filled } = await fill(db, scratch, path);
      const meta: IndexMeta = { ...filled, importedAt: Date.now(), durationMs: Math.round(performance.now() - startedAt) };
      await db.put(META_KEY, JSON.stringify(meta));
      await db.flushed;
      // Checked: the last row written and the meta read back.
      if (meta.rows === 0 || lastKey === undefined || db.get(lastKey) === undefined || readMeta(db)?.rows !== meta.rows) {
        throw new Error('the new index is incomplete');
      }
      await syncFiles(path);
      await beforeSwitch?.(path, meta);
      // Stopped meanwhile (the gateway is stopping): nothing is switched.
      signal?.throwIfAborted();
      await writeFile(join(this.dir, `${CURRENT}.${name}`), name);
      await rename(join(this.dir, `${CURRENT}.${name}`), join(this.dir, CURRENT));
      return { name, db, meta, names: namesOf(db) };
    } catch (error) {
      await db.close().catch(() => undefined);
      await rm(path, { recursive: true, force: true });
      throw error;
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  /** Throws, saying why, when no new index can be written here: before anything is downloaded. */
  async mayWrite(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    if (!(await writable(this.dir))) throw new Error(`${this.dir} is read-only: the index on it is read, and no new one can be written`);
  }

  /** Removes every index but `keep` (and files a killed import left). */
  async removeAllBut(keep: string | undefined): Promise<void> {
    for (const entry of await readdir(this.dir).catch(() => [] as string[])) {
      if (entry === keep || entry === CURRENT) continue;
      if (VERSION.test(entry) || entry.startsWith(`${CURRENT}.`) || entry === DOWNLOADS)
        await rm(join(this.dir, entry), { recursive: true, force: true });
    }
  }
}

function readMeta(db: RootDatabase<string, string>): IndexMeta | undefined {
  try {
    const text = db.get(META_KEY);
    const meta = text === undefined ? undefined : (JSON.parse(text) as IndexMeta);
    return meta && Number.isFinite(meta.dateMs) && Number.isInteger(meta.rows) ? meta : undefined;
  } catch {
    return undefined;
  }
}

/** The index's files on disk before `current` names it, so that a crash of the machine cannot leave it named and partial. */
async function syncFiles(path: string): Promise<void> {
  for (const file of await readdir(path)) {
    const handle = await openFile(join(path, file), 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
}
