import type { IncomingMessage } from 'node:http';

const SIGNAL = Symbol('gateway.clientGone');
type WithSignal = IncomingMessage & { [SIGNAL]?: AbortSignal };

/** Ties to a request the signal its HTTP server aborts when the client leaves before its answer. */
export function setClientGone(req: IncomingMessage, signal: AbortSignal): void {
  (req as WithSignal)[SIGNAL] = signal;
}

/** The request's client-gone signal, when its server set one: upstream calls not yet sent are then not sent. */
export function clientGone(req: IncomingMessage | undefined): AbortSignal | undefined {
  return req ? (req as WithSignal)[SIGNAL] : undefined;
}
