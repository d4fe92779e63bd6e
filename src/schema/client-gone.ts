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

  /** Bytes the connection has handed to the kernel so far: they grow while the client reads. */
  get written(): number {
    return this.res.socket?.bytesWritten ?? 0;
  }

  /** Ends the answer where it is, for a client that stopped reading it: those waiting on it are told it closed. */
  cut(): void {
    this.res.destroy();
  }

  /**
   * Calls `listener` once the answer is over, written whole or the client gone (at once if it
   * is already): for the few who must be woken, not probe. Whoever waits to write more into it
   * waits for nothing from then on.
   */
  onClosed(listener: () => void): void {
    if (this.res.closed) return listener();
    this.res.once('close', listener);
  }
}
