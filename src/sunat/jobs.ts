import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { ComprobanteBody } from '../upstream/schemas.js';
import { SunatCredentialsRejected, SunatError, SunatRefused, SunatUnavailable } from './errors.js';
import { JobKeys } from './job-keys.js';
import { FINISHED, JobStore, type Job, type JobReceipt, type ReceiptError, type Resumen } from './job-store.js';
import { keyOf, type SunatResult } from './receipts.js';
import type { SunatCredentials } from './tokens.js';
import type { SunatValidation } from './validation.js';

export interface JobSettings {
  /** Receipts a job (VALIDACION_MASIVA_MAX). */
  max: number;
  /** Unfinished jobs a caller (VALIDACION_MASIVA_POR_LLAMANTE). */
  perCaller: number;
  /** Days a finished job is kept (VALIDACION_MASIVA_DIAS). */
  keptDays: number;
  /** Where jobs live (VALIDACION_DIR). */
  dir: string;
  /** CACHE_KEY_SECRET: the credentials' key is derived from it; without it, a random key beside the jobs. */
  keySecret?: string | undefined;
}

/** A caller already has its most unfinished jobs. */
export class TooManyJobs extends Error {
  constructor(readonly max: number) {
    super(`at most ${max} unfinished jobs a caller`);
  }
}

/** Jobs validating at once on one instance; the others wait their turn, oldest first. */
const RUNNING_AT_ONCE = 8;
/** A subscriber is told at most this often. */
const TOLD_EVERY_MS = 1000;
/** Finished jobs past their days are looked for this often. */
const SWEEP_EVERY_MS = 3_600_000;
/** Positions read at once for a page of the CSV. */
const ROWS_AT_ONCE = 1000;

const EMPTY: Resumen = { aceptados: 0, anulados: 0, autorizados: 0, noAutorizados: 0, noExisten: 0, conError: 0 };
const BY_STATE: Readonly<Record<string, keyof Resumen>> = {
  '0': 'noExisten',
  '1': 'aceptados',
  '2': 'anulados',
  '3': 'autorizados',
  '4': 'noAutorizados',
};

/** One position of a job: its receipt as asked and its answer, if it has one yet. */
export interface JobRow {
  position: number;
  receipt: JobReceipt;
}

/**
 * Background validations through SUNAT's free API: a job answers at once, then its distinct
 * receipts are asked at SUNAT's pace for its clientId, each answer written as it comes, so a
 * restarted instance goes on where it stopped. The call's credentials are kept sealed until the
 * job ends. Knows nothing of GraphQL or HTTP.
 */
export class ValidationJobs {
  readonly store: JobStore;
  #keys: Promise<JobKeys> | undefined;
  /** The jobs this instance is validating, and whether each was told to stop. */
  readonly #running = new Map<string, { stop: boolean }>();
  #sweeper: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(
    readonly settings: JobSettings,
    readonly validation: SunatValidation,
    readonly log: { warn(o: object, m: string): void } = { warn: () => undefined },
  ) {
    this.store = new JobStore(settings.dir);
  }

  #keysNow(): Promise<JobKeys> {
    return (this.#keys ??= JobKeys.of(this.settings.keySecret, this.settings.dir));
  }

  /** Takes up the jobs a previous run left, and sweeps old ones, from now on. */
  start(): void {
    // Nothing was ever created here: nothing to take up, and no store to open.
    if (existsSync(this.settings.dir)) {
      void this.#wake();
      void this.#sweep();
    }
    this.#sweeper = setInterval(() => existsSync(this.settings.dir) && void this.#sweep(), SWEEP_EVERY_MS).unref();
  }

  /** The owner a caller is: a signed-in subject, or a bearer token (never kept itself). */
  async ownerOf(caller: { subject?: string | undefined; token?: string | undefined }): Promise<string> {
    if (caller.subject) return `s.${caller.subject}`;
    if (!caller.token) throw new Error('a job belongs to a subject or a token');
    return (await this.#keysNow()).ownerOfToken(caller.token);
  }

  /**
   * A new job of `receipts` (checked), validated with `credentials` (the call's, sealed, or the gateway's own): its
   * token is asked first, so credentials SUNAT refuses queue nothing.
   */
  async create(owner: string, receipts: readonly ComprobanteBody[], credentials: SunatCredentials, own: boolean): Promise<Job> {
    await this.validation.token(credentials);
    const unfinished = (await this.store.list(owner)).filter((j) => !FINISHED.has(j.estado)).length;
    if (unfinished >= this.settings.perCaller) throw new TooManyJobs(this.settings.perCaller);
    const id = `${Date.now().toString(36).padStart(9, '0')}${randomBytes(6).toString('hex')}`;
    const index = new Map<string, number>();
    const distinct: JobReceipt[] = [];
    const positions = new Uint32Array(receipts.length);
    receipts.forEach((asked, p) => {
      const key = keyOf(asked);
      let at = index.get(key);
      if (at === undefined) index.set(key, (at = distinct.push({ asked, weight: 0 }) - 1));
      distinct[at]!.weight++;
      positions[p] = at;
    });
    const job: Job = {
      id,
      owner,
      estado: 'EN_COLA',
      total: receipts.length,
      distinct: distinct.length,
      validados: 0,
      resumen: { ...EMPTY },
      creadaEn: new Date().toISOString(),
      terminadaEn: null,
      motivo: null,
      rucEmpresa: credentials.rucEmpresa,
      clientId: credentials.clientId,
      sealed: own ? null : (await this.#keysNow()).seal(id, credentials.clientSecret),
    };
    await this.store.create(job, distinct, positions);
    void this.#wake();
    return job;
  }

  get(owner: string, id: string): Promise<Job | undefined> {
    return this.store.get(owner, id);
  }

  list(owner: string): Promise<Job[]> {
    return this.store.list(owner);
  }

  /** Stops a job that has not finished; its credentials are dropped. A finished one is left as it is. */
  async cancel(owner: string, id: string): Promise<Job | undefined> {
    const job = await this.store.update(owner, id, (j) => (FINISHED.has(j.estado) ? undefined : ended(j, 'CANCELADA')));
    const running = this.#running.get(id);
    if (running) running.stop = true;
    return job;
  }

  /** Positions `from`… (at most `count`), in input order, with their receipts and answers. */
  async rows(job: Job, from: number, count: number): Promise<JobRow[]> {
    const positions = (await this.store.positions(job.id)).subarray(from, from + count);
    const wanted = [...new Set(positions)].sort((a, b) => a - b);
    const held = new Map<number, JobReceipt>();
    // Distinct receipts read in runs: a page's are mostly neighbours.
    for (let i = 0; i < wanted.length;) {
      let j = i;
      while (j + 1 < wanted.length && wanted[j + 1]! - wanted[j]! < 64) j++;
      const run = await this.store.receipts(job.id, wanted[i]!, wanted[j]! + 1);
      run.forEach((r, k) => held.set(wanted[i]! + k, r));
      i = j + 1;
    }
    return [...positions].map((d, k) => ({ position: from + k, receipt: held.get(d)! }));
  }

  /** Every position in input order, read ROWS_AT_ONCE at a time: what the CSV streams. */
  async *allRows(job: Job): AsyncGenerator<JobRow> {
    for (let from = 0; from < job.total; from += ROWS_AT_ONCE) yield* await this.rows(job, from, ROWS_AT_ONCE);
  }

  /** The job now, then at most once a second while it changes, and its end; undefined when it is not the owner's. */
  async watch(owner: string, id: string): Promise<AsyncGenerator<Job> | undefined> {
    const first = await this.store.get(owner, id);
    if (!first) return undefined;
    const store = this.store;
    // A subscriber who leaves is let go at the next tick, within TOLD_EVERY_MS.
    return (async function* () {
      let last = first;
      yield first;
      while (!FINISHED.has(last.estado)) {
        await new Promise((r) => setTimeout(r, TOLD_EVERY_MS).unref());
        const now = await store.get(owner, id);
        if (!now) return;
        if (now.validados !== last.validados || now.estado !== last.estado) yield now;
        last = now;
      }
    })();
  }

  /** Starts the unfinished jobs this instance is not running, RUNNING_AT_ONCE at most. */
  async #wake(): Promise<void> {
    if (this.#closed) return;
    try {
      for (const job of await this.store.unfinished()) {
        if (this.#running.size >= RUNNING_AT_ONCE) break;
        if (!this.#running.has(job.id)) void this.#run(job);
      }
    } catch (error) {
      this.log.warn({ err: error }, 'validaciones: the jobs could not be read');
    }
  }

  async #run(queued: Job): Promise<void> {
    const state = { stop: false };
    this.#running.set(queued.id, state);
    const { owner, id } = queued;
    try {
      const credentials = await this.#credentialsOf(queued);
      if (!credentials) {
        await this.store.update(owner, id, (j) => ended(j, 'FALLIDA', 'las credenciales del gateway ya no están configuradas'));
        return;
      }
      const job = await this.store.update(owner, id, (j) => (j.estado === 'EN_COLA' ? { ...j, estado: 'EN_CURSO' } : undefined));
      if (!job || FINISHED.has(job.estado)) return;
      const receipts = await this.store.receipts(id, 0, job.distinct);
      const pending = receipts.flatMap((r, i) => (r.answer ? [] : [i]));
      let next = 0;
      let failed: string | undefined;
      const worker = async () => {
        while (!state.stop && !this.#closed && next < pending.length) {
          const index = pending[next++]!;
          const receipt = receipts[index]!;
          const [result] = await this.validation.validate(credentials, [receipt.asked]);
          if (state.stop || this.#closed) return;
          if ('error' in result! && result.error instanceof SunatCredentialsRejected) {
            failed = `SUNAT rechazó las credenciales: ${result.error.sunatMessage ?? 'sin detalle'}`;
            state.stop = true;
            return;
          }
          const answered = { ...receipt, answer: stored(result!) };
          await this.store.answer(owner, id, index, answered, (j) => counted(j, answered));
        }
      };
      // Twice the pace's calls: each slot SUNAT frees is taken at once.
      await Promise.all(Array.from({ length: this.validation.settings.concurrency * 2 }, worker));
      if (this.#closed) return;
      await this.store.update(owner, id, (j) =>
        FINISHED.has(j.estado) ? undefined : failed ? ended(j, 'FALLIDA', failed) : state.stop ? undefined : ended(j, 'TERMINADA'),
      );
    } catch (error) {
      this.log.warn({ err: error, job: id }, 'validaciones: a job failed');
      await this.store
        .update(owner, id, (j) => (FINISHED.has(j.estado) ? undefined : ended(j, 'FALLIDA', 'falla interna')))
        .catch(() => undefined);
    } finally {
      this.#running.delete(id);
      void this.#wake();
    }
  }

  async #credentialsOf(job: Job): Promise<SunatCredentials | undefined> {
    if (job.sealed) {
      const clientSecret = (await this.#keysNow()).open(job.id, job.sealed);
      return { rucEmpresa: job.rucEmpresa, clientId: job.clientId, clientSecret };
    }
    const own = this.validation.settings.credentials;
    return own && own.clientId === job.clientId ? own : undefined;
  }

  async #sweep(): Promise<void> {
    try {
      const before = new Date(Date.now() - this.settings.keptDays * 86_400_000).toISOString();
      for (const job of await this.store.finishedBefore(before)) await this.store.remove(job.owner, job.id);
    } catch (error) {
      this.log.warn({ err: error }, 'validaciones: old jobs could not be removed');
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweeper);
    await this.store.close();
  }
}

/** A job ended: when, how, and without its credentials. */
function ended(job: Job, estado: 'TERMINADA' | 'CANCELADA' | 'FALLIDA', motivo: string | null = null): Job {
  return { ...job, estado, terminadaEn: new Date().toISOString(), motivo, sealed: null };
}

/** SUNAT's answer as kept: the receipt, or why it has none. */
function stored(result: SunatResult): JobReceipt['answer'] {
  if ('receipt' in result) return { receipt: result.receipt };
  return { error: errorOf(result.error) };
}

function errorOf(error: SunatError): ReceiptError {
  if (error instanceof SunatRefused) return { kind: 'refused', why: error.sunatMessage };
  if (error instanceof SunatCredentialsRejected) return { kind: 'rejected', why: error.sunatMessage ?? 'sin detalle' };
  return { kind: 'unavailable', why: error instanceof SunatUnavailable ? error.reason : error.message };
}

/** The job's counts with one more receipt answered, at each of its positions. */
function counted(job: Job, receipt: JobReceipt): Job {
  const answer = receipt.answer!;
  const category = 'receipt' in answer ? (BY_STATE[answer.receipt.comprobante_estado_codigo ?? ''] ?? 'conError') : 'conError';
  return {
    ...job,
    validados: job.validados + receipt.weight,
    resumen: { ...job.resumen, [category]: job.resumen[category] + receipt.weight },
  };
}

/** The SunatError a kept error was: the schema words it as any other. */
export function errorFrom(kept: ReceiptError): SunatError {
  if (kept.kind === 'refused') return new SunatRefused(kept.why);
  if (kept.kind === 'rejected') return new SunatCredentialsRejected(kept.why);
  return new SunatUnavailable(kept.why);
}
