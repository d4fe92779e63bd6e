import type { ServerResponse } from 'node:http';

/**
 * Whether the client of a request has left before its answer was written: read when an
 * upstream call is about to be sent, so that a call nobody waits for is not made. A probe of
 * the response rather than an AbortController and a 'close' listener per request: the same
 * answer, with nothing to set up on the way in.
 */
export class ClientGone {
  constructor(private readonly res: ServerResponse) {}

  get aborted(): boolean {
    return this.res.destroyed && !this.res.writableFinished;
  }

  /** Ends the answer where it is, for a client that stopped reading it: those waiting on it are told it left. */
  cut(): void {
    this.res.destroy();
  }

  /** Calls `listener` once the client has left (at once if it already has); for the few who must be woken, not probe. */
  onGone(listener: () => void): void {
    if (this.aborted) return listener();
    this.res.once('close', () => this.aborted && listener());
  }
}
