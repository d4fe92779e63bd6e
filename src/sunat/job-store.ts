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

/** Where background validations live: LMDB under VALIDACION_DIR for one instance, Redis for a fleet. */
export interface JobStore {
  /** A new job, its distinct receipts and each position's receipt, written at once. */
  create(job: Job, receipts: readonly JobReceipt[], positions: Uint32Array): Promise<void>;
  get(owner: string, id: string): Promise<Job | undefined>;
  /** The owner's jobs, newest first. */
  list(owner: string): Promise<Job[]>;
  /** A queued job under way; the job as it is after (unchanged when it was not queued). */
  begin(owner: string, id: string): Promise<Job | undefined>;
  /** An unfinished job ended (when, how, its credentials dropped); a finished one is left. The job as it is after. */
  end(owner: string, id: string, estado: 'TERMINADA' | 'CANCELADA' | 'FALLIDA', motivo?: string): Promise<Job | undefined>;
  /** The distinct receipts from `from` (inclusive) to `to` (exclusive), with their answers. */
  receipts(id: string, from: number, to: number): Promise<JobReceipt[]>;
  /** Which distinct receipt each of `count` positions from `from` is. */
  positions(id: string, from: number, count: number): Promise<Uint32Array>;
  /** One receipt's answer and the job's counts together, counted once whoever writes it first; the job as it is after. */
  answer(owner: string, id: string, index: number, receipt: JobReceipt): Promise<Job | undefined>;
  /** Every job not finished, oldest first: what an instance takes up at start. */
  unfinished(): Promise<Job[]>;
  /** Removes the jobs finished before `before` (ISO 8601). */
  sweep(before: string): Promise<void>;
  /** A random key kept with the jobs, made once: the root of their keys when no CACHE_KEY_SECRET is shared. */
  rootKey(): Promise<Buffer>;
  close(): Promise<void>;
}

/** Where an answer counts in `resumen`: a state outside 0–4, or no state, is `conError`. */
export function categoryOf(answer: NonNullable<JobReceipt['answer']>): keyof Resumen {
  return 'receipt' in answer ? (BY_STATE[answer.receipt.comprobante_estado_codigo ?? ''] ?? 'conError') : 'conError';
}

const BY_STATE: Readonly<Record<string, keyof Resumen>> = {
  '0': 'noExisten',
  '1': 'aceptados',
  '2': 'anulados',
  '3': 'autorizados',
  '4': 'noAutorizados',
};

/** The counts of nothing answered yet. */
export const NO_RESUMEN: Resumen = { aceptados: 0, anulados: 0, autorizados: 0, noAutorizados: 0, noExisten: 0, conError: 0 };

/** A job ended: when, how, and without its credentials. */
export function ended(job: Job, estado: 'TERMINADA' | 'CANCELADA' | 'FALLIDA', motivo: string | null = null): Job {
  return { ...job, estado, terminadaEn: new Date().toISOString(), motivo, sealed: null };
}

/** The job with one more receipt answered, at each of its positions. */
export function counted(job: Job, receipt: JobReceipt): Job {
  const category = categoryOf(receipt.answer!);
  return {
    ...job,
    validados: job.validados + receipt.weight,
    resumen: { ...job.resumen, [category]: job.resumen[category] + receipt.weight },
  };
}
