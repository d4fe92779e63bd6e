import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { RootDatabase } from 'lmdb';
import type { Logger } from 'pino';
import { ChangeStore } from './change-store.js';
import type { Recorded } from './changes.js';
import { ChangesStep } from './changes-step.js';
import { fetchZips, type ImportProgress } from './fetch.js';
import { fillIndex, removeZips } from './import.js';
import { DirLock } from './lock.js';
import { nameIndexStep } from './name-step.js';
import { padronRecord, type PadronRecord } from './record.js';
import { RegisterUnavailableError, search, PadronRefused, type SearchAnswer, type SearchFilter, type SearchPage } from './search.js';
import { SearchThreads, type SearchAsked } from './search-threads.js';
import { sourceUrls } from './sources.js';
import type { RegisterStep, StepRun } from './steps.js';
import { DOWNLOADS, Versions, type IndexMeta, type Version } from './versions.js';

export interface RegisterOptions {
  /** SUNAT's addresses, or a mirror's base URL (the sandbox's included). */
  source: 'sunat' | URL;
  dir: string;
  maxAgeMs: number;
  refreshMs: number;
  logger: Logger;
  /** How often an import under way logs how far it has come. @default PROGRESS_EVERY_MS */
  progressEveryMs?: number;
  /** How often a gateway finding PADRON_DIR held by another tries again. @default LOCK_RETRY_MS */
  lockRetryMs?: number;
  /** Threads that run searches (./search-threads.ts); 0 or absent: on the event loop. */
  searchThreads?: number;
  /** Days of changes kept (./changes.ts). @default 90 */
  changesDays?: number;
  /** Told of the change store once opened (nothing recorded), then of what each import recorded. */
  onChanges?: (store: ChangeStore, recorded?: Recorded) => void;
}

/** The last import's outcome, as /health and the metrics say it. */
export interface ImportOutcome {
  result: 'imported' | 'unchanged' | 'failed';
  at: string;
  durationMs: number;
  rows?: number;
  skipped?: Record<string, number>;
  error?: string;
}

/** A failed import is tried again after this, or after PADRON_REFRESH_MS when that is sooner. */
const RETRY_AFTER_FAILURE_MS = 10 * 60_000;
/** How often an import under way logs how far it has come (a full register takes about a minute). */
const PROGRESS_EVERY_MS = 5_000;
/** An import still under way after this (a mirror sending a byte a minute, say) is given up, so that the next one can run. */
const IMPORT_DEADLINE_MS = 30 * 60_000;
/** A gateway finding PADRON_DIR held by another tries again this often: it takes the directory over once the other stops. */
const LOCK_RETRY_MS = 60_000;
/** Searches sent again at most this often to a newer index when the one they went to was replaced meanwhile. */
const MAX_TRIES = 5;

/**
 * SUNAT's register kept by the gateway (PADRON): the index in use, answering lookups by RUC
 * synchronously from disk, and its refresh in the background on schedule. An import builds a
 * new index beside the one in use and switches to it only once complete (./versions.ts); lookups
 * go on meanwhile from the one in use, or from the service while there is none.
 */
/** The source offered a register older than the one in use (a mirror that ignores If-Modified-Since, say). */
class OlderRegister extends Error {
  constructor(
    readonly offeredMs: number,
    inUseMs: number,
  ) {
    super(
      `the source sent a register older than the one in use (${new Date(offeredMs).toISOString()} < ` +
        `${new Date(inUseMs).toISOString()}): not imported; the register never goes back`,
    );
  }
}

export class Register {
  readonly #options: RegisterOptions;
  readonly #versions: Versions;
  #current: Version | undefined;
  #importing: Promise<void> | undefined;
  /** How far the import under way has come; undefined once it has ended, before its last line is logged. */
  #progress: ImportProgress | undefined;
  #last: ImportOutcome | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  /** This gateway's hold on PADRON_DIR; undefined while another gateway holds it (`#lockedBy` says which). */
  #lock: DirLock | undefined;
  #lockedBy: string | undefined;
  /** Stops the import under way when the register closes. */
  readonly #stop = new AbortController();
  /** Set when a read of the index in use failed (a disk gone bad, say): it answers nothing until an import replaces it. */
  #failing = false;
  readonly #threads: SearchThreads | undefined;
  readonly #changes: ChangesStep;
  /** What each import derives, in order (./steps.ts): a new step is its file and a line here. */
  readonly #steps: RegisterStep[];

  constructor(options: RegisterOptions) {
    this.#options = options;
    this.#versions = new Versions(options.dir);
    this.#threads = options.searchThreads ? new SearchThreads(options.searchThreads) : undefined;
    const { dir, logger, changesDays: days, onChanges } = options;
    // Only a register that answers is compared with: a stale or failing one's rows are no day before.
    const inUse = () =>
      this.#failing || !this.#current ? undefined : { path: join(dir, this.#current.name), dateMs: this.#current.meta.dateMs };
    this.#changes = new ChangesStep({ dir, logger, days, inUse, onChanges });
    this.#steps = [nameIndexStep, this.#changes];
  }

  /** What changed between registers (./changes.ts); undefined until this gateway holds PADRON_DIR. */
  get changes(): ChangeStore | undefined {
    return this.#changes.store;
  }

  /** Opens the index on disk, if any, and schedules imports; resolves at once, without waiting for any import. */
  async start(): Promise<void> {
    if (!(await this.#takeDir())) {
      this.#timer = setTimeout(() => void this.start(), this.#options.lockRetryMs ?? LOCK_RETRY_MS);
      this.#timer.unref();
      return;
    }
    try {
      // A read-only PADRON_DIR (no lock taken) keeps nothing of the steps': no changes can be recorded there.
      if (this.#lock) for (const step of this.#steps) await step.open?.();
      const current = await this.#versions.openCurrent();
      if (this.#closed) return void (await current?.db.close());
      this.#current = current;
      if (current?.names) this.#threads?.warm();
      if (current) this.#options.logger.info({ padron: this.state() }, 'padron: index on disk reused');
    } catch (error) {
      this.#options.logger.warn({ err: error }, 'padron: the index on disk could not be opened');
    }
    // An index written before the search has no name index: imported again at once.
    const importedAt = this.#current?.names ? this.#current.meta.importedAt : 0;
    this.#schedule(Math.max(0, importedAt + this.#options.refreshMs - Date.now()));
  }

  /** Takes PADRON_DIR for this gateway alone; false, said once, while another gateway holds it. A read-only one needs no lock. */
  async #takeDir(): Promise<boolean> {
    if (this.#closed) return false;
    const taken = await mkdir(this.#options.dir, { recursive: true })
      .then(() => DirLock.take(this.#options.dir))
      .catch((error: NodeJS.ErrnoException) => (error.code === 'EROFS' || error.code === 'EACCES' ? undefined : Promise.reject(error)));
    if (taken && 'heldBy' in taken) {
      if (this.#lockedBy === undefined) {
        const { dir } = this.#options;
        this.#options.logger.error(
          `padron: ${dir} is used by the gateway with ${taken.heldBy}; this one keeps no register until it stops. Give each instance a PADRON_DIR of its own`,
        );
      }
      this.#lockedBy = taken.heldBy;
      return false;
    }
    if (this.#closed) taken?.release();
    this.#lock = taken;
    this.#lockedBy = undefined;
    return !this.#closed;
  }

  /** The record of `ruc`, when the register in use holds it and is younger than PADRON_MAX_AGE_MS. */
  ruc(ruc: string): PadronRecord | undefined {
    const version = this.#usable();
    try {
      const kept = version?.db.get(ruc);
      return kept === undefined ? undefined : padronRecord(ruc, kept, version!.meta.dateMs, this.#unnamed);
    } catch (error) {
      // A failing index answers nothing (the service does), is not said ready, and is imported again at once.
      if (!this.#failing) {
        this.#failing = true;
        this.#options.logger.warn(
          { err: error },
          'padron: a read of the index failed; the service answers until a fresh import replaces it',
        );
        if (!this.#closed) void this.refresh();
      }
      return undefined;
    }
  }

  /** A page of `buscarContribuyentes`, from the register in use; refused when there is none that answers, or it has no name index yet. */
  async search(texto: string, filter: SearchFilter, first: number, after: string | undefined): Promise<SearchAnswer> {
    let version = this.#usable();
    if (!version?.names) {
      const why = !version ? this.state().state : 'importing its name index';
      throw new RegisterUnavailableError(why);
    }
    const asked = { texto, filter, first, after };
    let page: SearchPage | undefined;
    // The index was replaced, and removed, while the search went to its thread: again on the one in use, until it holds.
    for (let tries = 1; !page; tries++) {
      try {
        page = await this.#page(version, asked);
      } catch (error) {
        const now = this.#usable();
        if (error instanceof PadronRefused || !now?.names || now === version || tries === MAX_TRIES) throw error;
        version = now;
      }
    }
    const records = page.found.map((f) => padronRecord(f.ruc, f.kept, version.meta.dateMs, this.#unnamed));
    return { records, cursors: page.found.map((f) => f.cursor), hasNextPage: page.hasNextPage, endCursor: page.endCursor };
  }

  /** A page of `version`'s search, on a thread when there are threads. */
  #page(version: Version, asked: Pick<SearchAsked, 'texto' | 'filter' | 'first' | 'after'>): Promise<SearchPage> | SearchPage {
    if (this.#threads) return this.#threads.run({ dir: this.#options.dir, name: version.name, ...asked });
    return search({ version: version.name, db: version.db, names: version.names! }, asked.texto, asked.filter, asked.first, asked.after);
  }

  /** Whether the register in use answers `ruc` (for pricing: a RUC it holds costs nothing). */
  holds(ruc: string): boolean {
    try {
      // Asked of every RUC of a list before it runs: whether the key exists, its record not decoded.
      return this.#usable()?.db.doesExist(ruc) ?? false;
    } catch {
      return false;
    }
  }

  /** Whether the register in use may answer: it exists, and is young enough but not from the future. */
  #usable(): Version | undefined {
    const version = this.#failing ? undefined : this.#current;
    const age = version && Date.now() - version.meta.dateMs;
    // A minute's grace for the clock stepping back; an index dated later than that was never believed.
    return age !== undefined && age >= -60_000 && age <= this.#options.maxAgeMs ? version : undefined;
  }

  #unnamed = (code: string) => this.#options.logger.warn({ ubigeo: code }, 'padron: a location code the table does not name');

  /** Imports now unless an import is under way (then waits for that one). */
  refresh(): Promise<void> {
    return (this.#importing ??= this.#import().finally(() => (this.#importing = undefined)));
  }

  async #import(): Promise<void> {
    const started = performance.now();
    const at = new Date().toISOString();
    const downloads = join(this.#options.dir, DOWNLOADS);
    const { logger } = this.#options;
    const signal = AbortSignal.any([this.#stop.signal, AbortSignal.timeout(IMPORT_DEADLINE_MS)]);
    const progress: ImportProgress = (this.#progress = { phase: 'fetching', bytesFetched: 0, linesRead: 0 });
    logger.info({ padron: this.state() }, 'padron: import started');
    const ticking = setInterval(
      () => logger.info({ padron: this.state() }, 'padron: importing'),
      this.#options.progressEveryMs ?? PROGRESS_EVERY_MS,
    );
    ticking.unref();
    const ended = () => {
      clearInterval(ticking);
      this.#progress = undefined;
    };
    let runs: StepRun[] = [];
    try {
      // An index dated past now (written before dates were checked), or failing, asks for everything: a 304 would pin it.
      const since = this.#current && !this.#failing && this.#current.meta.dateMs <= Date.now() ? this.#current.meta.dateMs : undefined;
      if (!this.#lock && !(await this.#takeDir()))
        throw new Error(`${this.#options.dir} is used by the gateway with ${this.#lockedBy ?? 'none: closed'}`);
      await this.#versions.mayWrite();
      const fetched = await fetchZips(sourceUrls(this.#options.source), downloads, since, signal, progress);
      if (!fetched) {
        this.#last = { result: 'unchanged', at, durationMs: Math.round(performance.now() - started) };
        ended();
        logger.info({ padron: this.state() }, 'padron: unchanged since the register in use');
        return;
      }
      // A mirror that ignores If-Modified-Since may send an older register: the one in use is never replaced by it.
      const inUse = this.#current && !this.#failing ? this.#current.meta.dateMs : undefined;
      if (inUse !== undefined && fetched.lastModified !== undefined && fetched.lastModified < inUse)
        throw new OlderRegister(fetched.lastModified, inUse);
      // Only a register that answers holds a new one to its size: a stale one must not block its own replacement.
      const rowsInUse = this.#usable()?.meta.rows ?? 0;
      const fill = (db: RootDatabase<string, string>, scratch: string, path: string) => {
        runs = this.#steps.map((step) => step.begin({ db, path, scratch, signal }));
        return fillIndex(db, fetched, scratch, { signal, rowsInUse, progress, steps: runs });
      };
      const beforeSwitch = async (_path: string, meta: IndexMeta) => {
        // Dated by its zip when the mirror sent no Last-Modified: older is found only once read.
        if (inUse !== undefined && meta.dateMs < inUse) throw new OlderRegister(meta.dateMs, inUse);
        for (const run of runs) await run.beforeSwitch?.(meta);
      };
      const version = await this.#versions.write(fill, started, signal, beforeSwitch);
      const old = this.#current;
      const { rows, skipped, durationMs } = version.meta;
      // The register and what /health says of it change together.
      this.#current = version;
      this.#failing = false;
      this.#last = { result: 'imported', at, durationMs, rows, skipped };
      // Lookups read synchronously: none is in flight on the old index once it is no longer current.
      await old?.db.close();
      await this.#versions.removeAllBut(version.name);
      ended();
      logger.info({ padron: this.state() }, 'padron: imported');
      for (const run of runs) run.afterSwitch?.();
      this.#threads?.release();
      this.#threads?.warm();
    } catch (error) {
      if (error instanceof OlderRegister) {
        this.#last = { result: 'unchanged', at, durationMs: Math.round(performance.now() - started) };
        ended();
        logger.warn({ padron: this.state(), offered: new Date(error.offeredMs).toISOString() }, `padron: ${error.message}`);
        return;
      }
      const message = error instanceof Error ? error.message : String(error);
      this.#last = { result: 'failed', at, durationMs: Math.round(performance.now() - started), error: message };
      ended();
      const next = this.#current ? 'the register in use stays' : 'there is no register yet, so the service answers';
      logger.warn({ padron: this.state() }, `padron: import failed; ${next}`);
    } finally {
      ended();
      for (const run of runs) run.end?.();
      await removeZips(downloads).catch(() => undefined);
    }
  }

  #schedule(inMs: number): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      void this.refresh().then(() =>
        this.#schedule(
          this.#last?.result === 'failed' ? Math.min(RETRY_AFTER_FAILURE_MS, this.#options.refreshMs) : this.#options.refreshMs,
        ),
      );
    }, inMs);
    this.#timer.unref();
  }

  /** What /health, the metrics and the log say of the register. */
  state() {
    const meta = this.#current?.meta;
    return {
      state: this.#lockedBy !== undefined ? 'locked' : !meta ? 'empty' : this.#failing ? 'failing' : this.#usable() ? 'ready' : 'stale',
      importing: this.#progress !== undefined,
      ...(this.#progress ? { progress: { ...this.#progress } } : {}),
      rows: meta?.rows ?? 0,
      date: meta ? new Date(meta.dateMs).toISOString() : null,
      ageMs: meta ? Date.now() - meta.dateMs : null,
      lastImport: this.#last ?? null,
      ...(this.#lockedBy !== undefined ? { lockedBy: this.#lockedBy } : {}),
    };
  }

  /** Stops the schedule and any import under way (which then switches nothing), and closes the index. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#stop.abort();
    await this.#importing?.catch(() => undefined);
    const current = this.#current;
    this.#current = undefined;
    await this.#threads?.close();
    await current?.db.close().catch(() => undefined);
    for (const step of this.#steps) await step.close?.().catch(() => undefined);
    this.#lock?.release();
  }
}
