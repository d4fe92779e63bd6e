import type { RootDatabase } from 'lmdb';
import type { IndexMeta } from './versions.js';

/**
 * What each import of the register derives from its rows, as a list of steps (the name index, the
 * changes; later, SUNAT's other files): each sees every row as it is written, in RUC order, then
 * writes its part before the new index is switched to. A new step is a file and a line in the
 * Register's list (docs/architecture.md).
 */
export interface RegisterStep {
  readonly name: string;
  /** Once the gateway holds PADRON_DIR: what the step keeps across imports (a store), opened. */
  open?(): Promise<void>;
  /** One import's run of the step, over the new index. */
  begin(target: ImportTarget): StepRun;
  /** The gateway stopping: what `open` opened, closed. */
  close?(): Promise<void>;
}

/** The new index an import writes, as a step sees it. */
export interface ImportTarget {
  db: RootDatabase<string, string>;
  /** The new index's directory. */
  path: string;
  /** Where the step may sort on disk: removed once the import ends. */
  scratch: string;
  signal?: AbortSignal | undefined;
}

/** One import's run of a step, in the order of its calls. */
export interface StepRun {
  /** Each row as it is written, in RUC order: its RUC and what the index keeps of it (./record.ts reads it). */
  row(ruc: string, kept: string): void;
  /** Every row written and the register found to be one: the step writes what it derived; what it returns goes in the index's meta. */
  finish(): Promise<Partial<IndexMeta> | void>;
  /** The new index complete and checked, the one in use still in use. */
  beforeSwitch?(meta: IndexMeta): Promise<void>;
  /** The new index in use. */
  afterSwitch?(): void;
  /** However the import ended: nothing of the run left open. */
  end?(): void;
}
