import { mkdir } from 'node:fs/promises';
import type { Database, Key, RootDatabase } from 'lmdb';
import type { ComprobanteBody } from '../upstream/schemas.js';
import type { SunatReceipt } from './receipts.js';

export type JobState = 'EN_COLA' | 'EN_CURSO' | 'TERMINADA' | 'CANCELADA' | 'FALLIDA';
export const FINISHED: ReadonlySet<JobState> = new Set(['TERMINADA', 'CANCELADA', 'FALLIDA']);

/** What `resumen` counts, by the positions of the receipts answered. */
export interface Resumen {
  aceptados: number;
  anulados: number;
  autorizados: number;
  noAutorizados: number;
  noExisten: number;
  conError: number;
}

/** A call's credentials, sealed (AES-256-GCM): never kept in clear. */
export interface Sealed {
  iv: string;
  tag: string;
  data: string;
}

/** One background validation: who it belongs to, how far it went, and the sealed credentials until it ends. */
export interface Job {
  id: string;
  owner: string;
  estado: JobState;
  /** Receipts as given (positions), repeated ones included. */
  total: number;
  /** Distinct receipts: each is asked once. */
  distinct: number;
  /** Positions answered so far, whatever the answer. */
  validados: number;
  resumen: Resumen;
  creadaEn: string;
  terminadaEn: string | null;
  /** Why it failed, when it did. */
  motivo: string | null;
  /** The company asking, and its clientId (not secret: SUNAT's pace is kept by it). */
  rucEmpresa: string;
  clientId: string;
  /** The call's credentials, sealed; null once the job ends, or when the gateway's own were used. */
  sealed: Sealed | null;
}

/** Why SUNAT gave a receipt no answer, as the gateway words it later. */
export interface ReceiptError {
  kind: 'refused' | 'unavailable' | 'rejected';
  why: string;
}

/** A distinct receipt of a job: as asked, how many positions it fills, and its answer once it has one. */
export interface JobReceipt {
  asked: ComprobanteBody;
  weight: number;
  answer?: { receipt: SunatReceipt } | { error: ReceiptError };
}

/**
 * Where background validations live: LMDB under VALIDACION_DIR. Each job is read by its owner
 * with its id; its distinct receipts and answers apart, so that one answer is one small write.
 */
export class JobStore {
  #opened:
    | Promise<{
        root: RootDatabase;
        jobs: Database<Job, Key[]>;
        receipts: Database<JobReceipt, Key[]>;
        positions: Database<Buffer, string>;
      }>
    | undefined;

  constructor(readonly dir: string) {}

  /** LMDB is opened on first use: a gateway that never runs a job never loads it. */
  #open() {
    return (this.#opened ??= (async () => {
      await mkdir(this.dir, { recursive: true });
      const { open } = await import('lmdb');
      const root = open({ path: this.dir, compression: false });
      return {
        root,
        jobs: root.openDB<Job, Key[]>({ name: 'jobs' }),
        receipts: root.openDB<JobReceipt, Key[]>({ name: 'receipts' }),
        positions: root.openDB<Buffer, string>({ name: 'positions', encoding: 'binary' }),
      };
    })());
  }

  /** A new job, its distinct receipts and each position's receipt, written at once. */
  async create(job: Job, receipts: readonly JobReceipt[], positions: Uint32Array): Promise<void> {
    const { root, jobs, receipts: db, positions: where } = await this.#open();
    await root.transaction(() => {
      receipts.forEach((r, i) => void db.put([job.id, 'r', i], r));
      where.put(job.id, Buffer.from(positions.buffer, positions.byteOffset, positions.byteLength));
      jobs.put([job.owner, job.id], job);
    });
  }

  async get(owner: string, id: string): Promise<Job | undefined> {
    const { jobs } = await this.#open();
    return jobs.get([owner, id]);
  }

  /** The owner's jobs, newest first. */
  async list(owner: string): Promise<Job[]> {
    const { jobs } = await this.#open();
    return [...jobs.getRange({ start: [owner, '\uffff'], end: [owner, ''], reverse: true }).map((e) => e.value)];
  }

  /** Every job not finished, oldest first: what an instance takes up at start. */
  async unfinished(): Promise<Job[]> {
    const { jobs } = await this.#open();
    const all = [...jobs.getRange().map((e) => e.value)].filter((j) => !FINISHED.has(j.estado));
    return all.sort((a, b) => (a.creadaEn < b.creadaEn ? -1 : 1));
  }

  /** Changes a job in one transaction: `change` gets the stored job and returns the next one, or undefined to leave it. */
  async update(owner: string, id: string, change: (job: Job) => Job | undefined): Promise<Job | undefined> {
    const { root, jobs } = await this.#open();
    return root.transaction(() => {
      const job = jobs.get([owner, id]);
      const next = job && change(job);
      if (next) jobs.put([owner, id], next);
      return next ?? job;
    });
  }

  /** The distinct receipts from `from` (inclusive) to `to` (exclusive). */
  async receipts(id: string, from: number, to: number): Promise<JobReceipt[]> {
    const { receipts } = await this.#open();
    return [...receipts.getRange({ start: [id, 'r', from], end: [id, 'r', to] }).map((e) => e.value)];
  }

  /** Which distinct receipt each position is. */
  async positions(id: string): Promise<Uint32Array> {
    const { positions } = await this.#open();
    const held = positions.get(id);
    if (!held) return new Uint32Array(0);
    // Copied out of LMDB's buffer, which a later read reuses.
    const bytes = Uint8Array.from(held);
    return new Uint32Array(bytes.buffer, 0, bytes.length / 4);
  }

  /** One receipt's answer and the job's counts, together: a job read at any moment adds up. */
  async answer(owner: string, id: string, index: number, receipt: JobReceipt, count: (job: Job) => Job): Promise<Job | undefined> {
    const { root, jobs, receipts } = await this.#open();
    return root.transaction(() => {
      const job = jobs.get([owner, id]);
      // An answer is counted once, whoever wrote it first.
      if (!job || FINISHED.has(job.estado) || receipts.get([id, 'r', index])?.answer) return job;
      receipts.put([id, 'r', index], receipt);
      const next = count(job);
      jobs.put([owner, id], next);
      return next;
    });
  }

  /** Removes a job and its receipts. */
  async remove(owner: string, id: string): Promise<void> {
    const { root, jobs, receipts, positions } = await this.#open();
    await root.transaction(() => {
      for (const { key } of receipts.getRange({ start: [id], end: [id, '\uffff'] })) receipts.remove(key);
      positions.remove(id);
      jobs.remove([owner, id]);
    });
  }

  /** Jobs finished before `before` (ISO 8601). */
  async finishedBefore(before: string): Promise<Job[]> {
    const { jobs } = await this.#open();
    return [...jobs.getRange().map((e) => e.value)].filter((j) => j.terminadaEn !== null && j.terminadaEn < before);
  }

  async close(): Promise<void> {
    if (!this.#opened) return;
    const { root } = await this.#opened;
    await root.close();
  }
}
