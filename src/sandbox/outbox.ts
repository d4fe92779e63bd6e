import type { ServerResponse } from 'node:http';
import { writeAnswer, type Answer } from './records.js';

/**
 * The sandbox's answers on their way out: each after its delay, or, while `gatherInFlight` is
 * set, held until that many calls were in flight together (10 s at most). `clear` drops them all.
 */
export class Outbox {
  readonly #timers = new Set<NodeJS.Timeout>();
  #gathered: (() => void)[] = [];
  #gatherTimer: NodeJS.Timeout | undefined;

  send(
    res: ServerResponse,
    answer: Answer,
    delayMs: number,
    gather: { until?: number; peak: number },
    onWrite: () => void = () => undefined,
  ): void {
    if (gather.until && gather.peak < gather.until) {
      this.#gathered.push(() => this.send(res, answer, delayMs, { peak: Infinity }, onWrite));
      this.#gatherTimer ??= setTimeout(() => this.#release(), 10_000);
      return;
    }
    if (this.#gathered.length) this.#release();
    if (!delayMs) return void (onWrite(), writeAnswer(res, answer));
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      onWrite();
      if (!res.destroyed) writeAnswer(res, answer);
    }, delayMs);
    this.#timers.add(timer);
  }

  clear(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    clearTimeout(this.#gatherTimer);
    this.#gatherTimer = undefined;
    this.#gathered = [];
  }

  #release(): void {
    clearTimeout(this.#gatherTimer);
    this.#gatherTimer = undefined;
    const gathered = this.#gathered;
    this.#gathered = [];
    for (const go of gathered) go();
  }
}
