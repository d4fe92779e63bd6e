import { randomBytes } from 'node:crypto';
import type { ComprobanteBody } from '../upstream/schemas.js';
import { SunatCredentialsRejected, SunatError, SunatRefused, SunatUnavailable } from './errors.js';
import { JobKeys } from './job-keys.js';
import { FINISHED, NO_RESUMEN, type Job, type JobReceipt, type JobStore, type ReceiptError } from './job-store.js';
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
  /** CACHE_KEY_SECRET: the jobs' keys are derived from it; without it, from a random key kept with the jobs. */
  keySecret?: string | undefined;
}

/** A fleet's queue (BullMQ): each part of a job is handed to one instance, and to another if that one dies. */
export interface JobQueue {
  /** Queues the parts of a new job, PART receipts each. */
  enqueue(job: Job): Promise<void>;
  close(): Promise<void>;
}

/** A caller already has its most unfinished jobs. */
export class TooManyJobs extends Error {
  constructor(readonly max: number) {
    super(`at most ${max} unfinished jobs a caller`);
  }
}

/** Distinct receipts one part of a job holds, as a fleet's queue hands them out. */
export const PART = 100;
/** Jobs validating at once on one instance without a queue; the others wait their turn, oldest first. */
const RUNNING_AT_ONCE = 8;
/** A subscriber is told at most this often; a part under way looks for a cancel as often. */
const TOLD_EVERY_MS = 1000;
/** Finished jobs past their days are looked for this often. */
const SWEEP_EVERY_MS = 3_600_000;
/** Positions read at once for the CSV. */
const ROWS_AT_ONCE = 1000;

/** One position of a job: its receipt as asked and its answer, if it has one yet. */
export interface JobRow {
  position: number;
  receipt: JobReceipt;
}

/**
 * Background validations through SUNAT's free API: a job answers at once, then its distinct
 * receipts are asked at SUNAT's pace for its clientId, each answer written as it comes, so work
 * taken up again (a restart, another instance) asks only what has no answer. The call's
 * credentials are kept sealed until the job ends. Knows nothing of GraphQL or HTTP.
 */
export class ValidationJobs {
  #keys: Promise<JobKeys> | undefined;
  /** The queue of a fleet; undefined: this instance runs its own jobs, whole. */
  queue: JobQueue | undefined;
  /** The jobs this instance is validating alone (without a queue). */
  readonly #running = new Set<string>();
  /** Each part under way, stopped at a close. */
  readonly #parts = new Set<AbortController>();
  #sweeper: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(
    readonly settings: JobSettings,
    readonly store: JobStore,
    readonly validation: SunatValidation,
    readonly log: { warn(o: object, m: string): void } = { warn: () => undefined },
  ) {}

  #keysNow(): Promise<JobKeys> {
    return (this.#keys ??= (async () => JobKeys.of(this.settings.keySecret ?? (await this.store.rootKey())))());
  }

  /** Takes up the jobs a previous run left (without a queue: the queue holds a fleet's), and sweeps old ones, from now on. */
  start(hasJobs: boolean): void {
    if (hasJobs) {
      if (!this.queue) void this.#wake();
      void this.#sweep();
    }
    this.#sweeper = setInterval(() => void this.#sweep(), SWEEP_EVERY_MS).unref();
  }

  /** The owner a caller is: a signed-in subject, or a bearer token (never kept itself). */
  async ownerOf(caller: { subject?: string | undefined; token?: string | undefined }): Promise<string> {
    if (caller.subject) return `s.${caller.subject}`;
    if (!caller.token) throw new Error('a job belongs to a subject or a token');
    return (await this.#keysNow()).ownerOfToken(caller.token);
  }

  /**
   * A new job of `receipts` (checked), validated with `credentials` (the call's, sealed, or the gateway's own: `own`):
   * their token is asked first, so credentials SUNAT refuses queue nothing.
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
      resumen: { ...NO_RESUMEN },
      creadaEn: new Date().toISOString(),
      terminadaEn: null,
      motivo: null,
      rucEmpresa: credentials.rucEmpresa,
      clientId: credentials.clientId,
      sealed: own ? null : (await this.#keysNow()).seal(id, credentials.clientSecret),
    };
    await this.store.create(job, distinct, positions);
    if (this.queue) await this.queue.enqueue(job);
    else void this.#wake();
    return job;
  }

  get(owner: string, id: string): Promise<Job | undefined> {
    return this.store.get(owner, id);
  }

  list(owner: string): Promise<Job[]> {
    return this.store.list(owner);
  }

  /** Stops a job that has not finished; its credentials are dropped, and whoever runs it stops within a second. */
  cancel(owner: string, id: string): Promise<Job | undefined> {
    return this.store.end(owner, id, 'CANCELADA');
  }

  /** Positions `from`… (at most `count`), in input order, with their receipts and answers. */
  async rows(job: Job, from: number, count: number): Promise<JobRow[]> {
    const positions = await this.store.positions(job.id, from, count);
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

  /**
   * Validates the distinct receipts `from`…`to` of a job that have no answer yet, `concurrency` × 2 at once (each
   * place SUNAT frees is taken at once), until they are done or the job ends. Ends the job once every receipt has
   * its answer, or when SUNAT refuses its credentials. What a fleet's queue runs for each part.
   */
  async runPart(owner: string, id: string, from: number, to: number): Promise<void> {
    const job = await this.store.begin(owner, id);
    if (!job || FINISHED.has(job.estado)) return;
    const credentials = await this.#credentialsOf(job);
    if (!credentials) {
      await this.store.end(owner, id, 'FALLIDA', 'las credenciales del gateway ya no están configuradas');
      return;
    }
    const receipts = await this.store.receipts(id, from, Math.min(to, job.distinct));
    const pending = receipts.flatMap((r, i) => (r.answer ? [] : [from + i]));
    let next = 0;
    // Told to stop (a cancel here or on another instance, refused credentials, a close): what waits for SUNAT is dropped.
    const stopping = new AbortController();
    const stop = () => stopping.abort();
    this.#parts.add(stopping);
    const looking = setInterval(
      () =>
        void this.store.get(owner, id).then(
          (j) => (!j || FINISHED.has(j.estado)) && stop(),
          () => undefined,
        ),
      TOLD_EVERY_MS,
    ).unref();
    const worker = async () => {
      while (!stopping.signal.aborted && next < pending.length) {
        const index = pending[next++]!;
        const receipt = receipts[index - from]!;
        let result: SunatResult;
        try {
          [result] = (await this.validation.validate(credentials, [receipt.asked], stopping.signal)) as [SunatResult];
        } catch (error) {
          if (stopping.signal.aborted) return;
          throw error;
        }
        if (stopping.signal.aborted) return;
        if ('error' in result && result.error instanceof SunatCredentialsRejected) {
          stop();
          await this.store.end(owner, id, 'FALLIDA', `SUNAT rechazó las credenciales: ${result.error.sunatMessage ?? 'sin detalle'}`);
          return;
        }
        const after = await this.store.answer(owner, id, index, { ...receipt, answer: stored(result) });
        if (after && after.validados >= after.total) await this.store.end(owner, id, 'TERMINADA');
      }
    };
    try {
      await Promise.all(Array.from({ length: this.validation.settings.concurrency * 2 }, worker));
    } finally {
      clearInterval(looking);
      this.#parts.delete(stopping);
    }
    // Every answer written before (a part taken up again after its last answer): the job still ends.
    const now = stopping.signal.aborted ? undefined : await this.store.get(owner, id);
    if (now && !FINISHED.has(now.estado) && now.validados >= now.total) await this.store.end(owner, id, 'TERMINADA');
  }

  /** Starts the unfinished jobs this instance is not running, RUNNING_AT_ONCE at most (without a queue). */
  async #wake(): Promise<void> {
    if (this.#closed) return;
    try {
      for (const job of await this.store.unfinished()) {
        if (this.#running.size >= RUNNING_AT_ONCE) break;
        if (this.#running.has(job.id)) continue;
        this.#running.add(job.id);
        void this.runPart(job.owner, job.id, 0, job.distinct)
          .catch(async (error: unknown) => {
            // A stop closes the store under a job: it is taken up at the next start, not failed.
            if (this.#closed) return;
            this.log.warn({ err: error, job: job.id }, 'validaciones: a job failed');
            await this.store.end(job.owner, job.id, 'FALLIDA', 'falla interna').catch(() => undefined);
          })
          .finally(() => {
            this.#running.delete(job.id);
            void this.#wake();
          });
      }
    } catch (error) {
      this.log.warn({ err: error }, 'validaciones: the jobs could not be read');
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
      await this.store.sweep(new Date(Date.now() - this.settings.keptDays * 86_400_000).toISOString());
    } catch (error) {
      this.log.warn({ err: error }, 'validaciones: old jobs could not be removed');
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const part of this.#parts) part.abort();
    clearInterval(this.#sweeper);
    await this.queue?.close();
    await this.store.close();
  }
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

/** The SunatError a kept error was: the schema words it as any other. */
export function errorFrom(kept: ReceiptError): SunatError {
  if (kept.kind === 'refused') return new SunatRefused(kept.why);
  if (kept.kind === 'rejected') return new SunatCredentialsRejected(kept.why);
  return new SunatUnavailable(kept.why);
}
