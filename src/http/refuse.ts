import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorAnswer, type Worded } from '../errors.js';

/** Bytes and time a refused upload is still read for, so that its client sees the answer instead of a reset. */
const DRAIN_BYTES = 16 * 1024 * 1024;
const DRAIN_MS = 5000;
/** A request refused before any GraphQL work, with the typed body every refusal has (errors.ts writes it). */
export function refuse(res: ServerResponse, refused: Worded, headers: Record<string, string> = {}) {
  const answer = errorAnswer(refused, headers);
  res.writeHead(refused.status ?? 400, answer.headers);
  res.end(answer.body);
}

/**
 * Refuses an upload part-way. The answer goes out at once, but the connection stays open while
 * the rest of the body is read and thrown away (up to DRAIN_BYTES and DRAIN_MS): closing it
 * under a client still writing would show that client a reset (EPIPE) instead of the answer.
 */
export function refuseUpload(req: IncomingMessage, res: ServerResponse, refused: Worded) {
  if (res.headersSent) return;
  const answer = errorAnswer(refused, { connection: 'close' });
  res.writeHead(refused.status ?? 400, answer.headers);
  res.write(answer.body);
  let drained = 0;
  const finish = () => {
    clearTimeout(timer);
    req.off('data', onData);
    res.end();
  };
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_BYTES) finish();
  };
  const timer = setTimeout(finish, DRAIN_MS);
  if (req.complete) return finish();
  req.on('data', onData);
  req.once('end', finish);
  req.once('close', finish);
  req.resume();
}
