import { join } from 'node:path';
import type { Logger } from 'pino';
import { ChangeStore } from './change-store.js';
import { recordChanges, type Recorded } from './changes.js';
import { SNAPSHOT, SnapshotWriter } from './snapshot.js';
import type { ImportTarget, RegisterStep, StepRun } from './steps.js';
import type { IndexMeta } from './versions.js';

export interface ChangesStepOptions {
  dir: string;
  logger: Logger;
  /** Days of changes kept. @default CHANGES_DAYS */
  days?: number | undefined;
  /** The register in use when an import begins, to compare the new one with; undefined when there is none that answers. */
  inUse(): { path: string; dateMs: number } | undefined;
  /** Told of the store once opened (nothing recorded), then of what each import recorded, once the new register is in use. */
  onChanges?: ((store: ChangeStore, recorded?: Recorded) => void) | undefined;
}

/**
 * The register's second step: what changed (./changes.ts). Each import writes its rows' snapshot
 * beside its index; before the switch, the snapshot is compared with the register in use's and
 * the changes kept in the store (under PADRON_DIR/changes, opened once the gateway holds it);
 * after the switch, they are told (the webhooks).
 */
export class ChangesStep implements RegisterStep {
  readonly name = 'changes';
  /** Undefined until this gateway holds PADRON_DIR (a read-only one keeps none). */
  store: ChangeStore | undefined;

  constructor(readonly options: ChangesStepOptions) {}

  async open(): Promise<void> {
    this.store ??= await ChangeStore.openOrSay(this.options.dir, this.options.logger);
    if (this.store) this.options.onChanges?.(this.store);
  }

  begin(target: ImportTarget): StepRun {
    return new ChangesRun(this, target, this.options.inUse());
  }

  async close(): Promise<void> {
    await this.store?.close();
  }
}

class ChangesRun implements StepRun {
  readonly #snapshot: SnapshotWriter;
  #open = true;
  #recorded: Recorded | undefined;

  constructor(
    readonly step: ChangesStep,
    readonly target: ImportTarget,
    readonly inUse: { path: string; dateMs: number } | undefined,
  ) {
    this.#snapshot = new SnapshotWriter(join(target.path, SNAPSHOT));
  }

  row(ruc: string, kept: string): void {
    this.#snapshot.add(ruc, kept);
  }

  async finish(): Promise<void> {
    this.end();
  }

  async beforeSwitch({ dateMs }: IndexMeta): Promise<void> {
    const { days, logger } = this.step.options;
    this.#recorded = await recordChanges(this.step.store, this.inUse, { path: this.target.path, dateMs }, days, logger, this.target.signal);
  }

  afterSwitch(): void {
    const { store, options } = this.step;
    if (this.#recorded && store) options.onChanges?.(store, this.#recorded);
  }

  end(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#snapshot.close();
  }
}
