/**
 * Each caller's calls in flight, against a share of the upstream pool: no caller can take all
 * of it. A caller is in the map only while it has calls in flight.
 */
export class CallerShares {
  readonly #inFlight = new Map<string, number>();

  constructor(readonly share: number) {}

  /** Counts one more call of `caller`, or says no when it already has its share in flight. */
  enter(caller: string): boolean {
    const calls = this.#inFlight.get(caller) ?? 0;
    if (calls >= this.share) return false;
    this.#inFlight.set(caller, calls + 1);
    return true;
  }

  leave(caller: string): void {
    const calls = (this.#inFlight.get(caller) ?? 1) - 1;
    if (calls > 0) this.#inFlight.set(caller, calls);
    else this.#inFlight.delete(caller);
  }
}
