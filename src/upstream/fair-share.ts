/** One caller's calls: how many are in flight, and those waiting for a place, in order. */
interface Caller {
  inFlight: number;
  waiting: (() => void)[];
}

/**
 * The upstream's connections, shared among callers (tokens) fairly and without waste: a call
 * takes a free place at once, whoever makes it, so one caller alone may use them all; once they
 * are all taken, a place that frees up goes to the waiting caller with the fewest calls in flight
 * (the first of them in turn), so a caller with few calls gets its share at once while another
 * has hundreds queued (max-min fairness, as a fair queue gives it). Nothing is refused here.
 *
 * Written here: p-limit and p-queue keep one queue for all, so one caller's backlog would be
 * ahead of everyone else's calls.
 */
export class FairShare {
  readonly #callers = new Map<string, Caller>();
  /** Callers with calls waiting, in the order their turn comes. */
  readonly #turns: Caller[] = [];
  #inFlight = 0;

  constructor(readonly places: number) {}

  /** Takes a place for one call of `caller` now, or says false: then `wait` for one. */
  enter(caller: string): boolean {
    if (this.#inFlight >= this.places) return false;
    this.#inFlight++;
    const c = this.#callers.get(caller);
    if (c) c.inFlight++;
    else this.#callers.set(caller, { inFlight: 1, waiting: [] });
    return true;
  }

  /** Resolves once a place is given to this call of `caller` (it then holds it: `leave` when done). */
  wait(caller: string): Promise<void> {
    return new Promise((resolve) => {
      let c = this.#callers.get(caller);
      if (!c) this.#callers.set(caller, (c = { inFlight: 0, waiting: [] }));
      if (c.waiting.length === 0) this.#turns.push(c);
      c.waiting.push(resolve);
    });
  }

  /** A call of `caller` is over: its place goes to the caller whose turn it is, if any waits. */
  leave(caller: string): void {
    const c = this.#callers.get(caller);
    if (c) {
      c.inFlight--;
      if (c.inFlight === 0 && c.waiting.length === 0) this.#callers.delete(caller);
    }
    const turns = this.#turns;
    if (turns.length === 0) return void this.#inFlight--;
    // The waiting caller with the fewest calls in flight; the first in turn among equals.
    let at = 0;
    for (let i = 1; i < turns.length && turns[at]!.inFlight > 0; i++) if (turns[i]!.inFlight < turns[at]!.inFlight) at = i;
    const next = turns.splice(at, 1)[0]!;
    // The place passes straight on: the count of calls in flight stays the same.
    next.inFlight++;
    next.waiting.shift()!();
    if (next.waiting.length > 0) turns.push(next);
  }

  /** Calls in flight now, and calls waiting for a place (for tests and metrics). */
  get load(): { inFlight: number; waiting: number } {
    let waiting = 0;
    for (const c of this.#turns) waiting += c.waiting.length;
    return { inFlight: this.#inFlight, waiting };
  }
}
