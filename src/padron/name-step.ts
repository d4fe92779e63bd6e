import { join } from 'node:path';
import { NamesWriter, openNames, openPairs, PAIR_ENTRIES } from './name-index.js';
import { entriesOf } from './names.js';
import { keptHead } from './record.js';
import { EntrySorter } from './sort.js';
import type { ImportTarget, RegisterStep, StepRun } from './steps.js';

/**
 * The register's first step: the name index and the pair index (./names.ts, ./name-index.ts) that
 * `buscarContribuyentes` reads. Each row files its entries in two sorts on disk; once every row is
 * written, each sort is merged into its blocks. Nothing is kept across imports.
 */
export const nameIndexStep: RegisterStep = {
  name: 'names',
  begin: (target) => new NameIndexRun(target),
};

class NameIndexRun implements StepRun {
  readonly #entries: EntrySorter;
  readonly #pairs: EntrySorter;
  /** Rows whose RUC the index cannot file (none of SUNAT's). */
  #unindexed = 0;

  constructor(readonly target: ImportTarget) {
    this.#entries = new EntrySorter(join(target.scratch, 'entries'));
    this.#pairs = new EntrySorter(join(target.scratch, 'pairs'));
  }

  row(ruc: string, kept: string): void {
    const { nombre, estado } = keptHead(kept);
    if (!entriesOf(ruc, nombre, estado, this.#entries, this.#pairs)) this.#unindexed++;
  }

  async finish() {
    const { db, signal } = this.target;
    const names = new NamesWriter(db, openNames(db));
    await this.#entries.sorted(
      (hi, lo) => names.add(hi, lo),
      signal,
      () => names.flush(),
    );
    names.finish();
    const pairs = new NamesWriter(db, openPairs(db), PAIR_ENTRIES);
    await this.#pairs.sorted(
      (hi, lo) => pairs.add(hi, lo),
      signal,
      () => pairs.flush(),
    );
    pairs.finish();
    return { names: { entries: names.entries, pairs: pairs.entries, unindexed: this.#unindexed } };
  }
}
