import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Database, Key, RootDatabase } from 'lmdb';
import { counted, ended, FINISHED, type Job, type JobReceipt, type JobStore } from './job-store.js';

/** Receipts written by one transaction. */
const WRITTEN_AT_ONCE = 2000;
/** The file beside the jobs holding their random key, when no CACHE_KEY_SECRET is shared. */
const KEY_FILE = 'clave';

interface Opened {
  root: RootDatabase;
  jobs: Database<Job, Key[]>;
  receipts: Database<JobReceipt, Key[]>;
  positions: Database<Buffer, string>;
}

/**
 * One instance's background validations, in LMDB under VALIDACION_DIR: each job read by its
 * owner with its id; its distinct receipts and answers apart, so that one answer is one small
 * write, and a restarted instance finds every answer it wrote.
 */
export class LocalJobStore implements JobStore {
  #opened: Promise<Opened> | undefined;

  constructor(readonly dir: string) {}

  /** LMDB is opened on first use: a gateway that never runs a job never loads it. */
  #open(): Promise<Opened> {
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

  async create(job: Job, receipts: readonly JobReceipt[], positions: Uint32Array): Promise<void> {
    const { root, jobs, receipts: db, positions: where } = await this.#open();
    // The receipts in several transactions (a month's would hold the event loop), the job last: none is seen half-written.
    for (let from = 0; from < receipts.length; from += WRITTEN_AT_ONCE)
      await root.transaction(() => {
        for (let i = from; i < Math.min(receipts.length, from + WRITTEN_AT_ONCE); i++) void db.put([job.id, 'r', i], receipts[i]!);
      });
    await root.transaction(() => {
      where.put(job.id, Buffer.from(positions.buffer, positions.byteOffset, positions.byteLength));
      jobs.put([job.owner, job.id], job);
    });
  }

  async get(owner: string, id: string): Promise<Job | undefined> {
    const { jobs } = await this.#open();
    return jobs.get([owner, id]);
  }

  async list(owner: string): Promise<Job[]> {
    const { jobs } = await this.#open();
    return [...jobs.getRange({ start: [owner, '\uffff'], end: [owner, ''], reverse: true }).map((e) => e.value)];
  }

  begin(owner: string, id: string): Promise<Job | undefined> {
    return this.#change(owner, id, (j) => (j.estado === 'EN_COLA' ? { ...j, estado: 'EN_CURSO' } : undefined));
  }

  end(owner: string, id: string, estado: 'TERMINADA' | 'CANCELADA' | 'FALLIDA', motivo?: string): Promise<Job | undefined> {
    return this.#change(owner, id, (j) => (FINISHED.has(j.estado) ? undefined : ended(j, estado, motivo)));
  }

  async #change(owner: string, id: string, change: (job: Job) => Job | undefined): Promise<Job | undefined> {
    const { root, jobs } = await this.#open();
    return root.transaction(() => {
      const job = jobs.get([owner, id]);
      const next = job && change(job);
      if (next) jobs.put([owner, id], next);
      return next ?? job;
    });
  }

  async receipts(id: string, from: number, to: number): Promise<JobReceipt[]> {
    const { receipts } = await this.#open();
    return [...receipts.getRange({ start: [id, 'r', from], end: [id, 'r', to] }).map((e) => e.value)];
  }

  async positions(id: string, from: number, count: number): Promise<Uint32Array> {
    const { positions } = await this.#open();
    const held = positions.get(id);
    if (!held) return new Uint32Array(0);
    // Copied out of LMDB's buffer, which a later read reuses.
    const bytes = Uint8Array.from(held.subarray(from * 4, (from + count) * 4));
    return new Uint32Array(bytes.buffer, 0, bytes.length / 4);
  }

  async answer(owner: string, id: string, index: number, receipt: JobReceipt): Promise<Job | undefined> {
    const { root, jobs, receipts } = await this.#open();
    return root.transaction(() => {
      const job = jobs.get([owner, id]);
      // An answer is counted once, whoever wrote it first.
      if (!job || FINISHED.has(job.estado) || receipts.get([id, 'r', index])?.answer) return job;
      receipts.put([id, 'r', index], receipt);
      const next = counted(job, receipt);
      jobs.put([owner, id], next);
      return next;
    });
  }

  async unfinished(): Promise<Job[]> {
    const { jobs } = await this.#open();
    const all = [...jobs.getRange().map((e) => e.value)].filter((j) => !FINISHED.has(j.estado));
    return all.sort((a, b) => (a.creadaEn < b.creadaEn ? -1 : 1));
  }

  async sweep(before: string): Promise<void> {
    const { root, jobs, receipts, positions } = await this.#open();
    const old = [...jobs.getRange().map((e) => e.value)].filter((j) => j.terminadaEn !== null && j.terminadaEn < before);
    for (const job of old)
      await root.transaction(() => {
        for (const { key } of receipts.getRange({ start: [job.id], end: [job.id, '\uffff'] })) receipts.remove(key);
        positions.remove(job.id);
        jobs.remove([job.owner, job.id]);
      });
  }

  async rootKey(): Promise<Buffer> {
    const path = join(this.dir, KEY_FILE);
    await mkdir(this.dir, { recursive: true });
    try {
      await writeFile(path, randomBytes(32), { flag: 'wx', mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    return readFile(path);
  }

  async close(): Promise<void> {
    if (!this.#opened) return;
    const { root } = await this.#opened;
    await root.close();
  }
}
