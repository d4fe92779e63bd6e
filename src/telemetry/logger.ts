import { constants, fstatSync, openSync } from 'node:fs';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from '../config.js';

/**
 * Paths the logger itself censors. The gateway never hands it headers, variables or
 * bodies; this is the second line, for whatever a future log call might pass.
 */
export const REDACT_PATHS = [
  'authorization',
  'token',
  '*.authorization',
  '*.token',
  'headers.authorization',
  '*.headers.authorization',
  'credencialesSol',
  '*.credencialesSol',
  'clave',
  '*.clave',
  'clave_usuario',
  '*.clave_usuario',
  'variables.credencialesSol',
  '*.variables.credencialesSol',
];

/** Lines a stalled reader may leave waiting in memory; past this, new lines are dropped (counted). */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** Errors that mean the output is gone for good: the reader left (a closed pipe), or the descriptor is. */
const GONE = new Set(['EPIPE', 'EBADF', 'ECONNRESET', 'EINVAL']);

/**
 * Standard output through an asynchronous pino destination: one line per operation must not
 * block on a write(2). Lines are gathered into small chunks per write and flushed at least
 * every 200 ms. The chunks stay small because sonic-boom measures the growing chunk's byte
 * length on every line, copying it each time (docs/performance.md).
 *
 * The log never stops the gateway: once the reader is gone (`npm start | head`), lines are
 * dropped; while it stalls or the disk is full, at most 4 MiB wait and the rest are dropped;
 * every dropped line is counted (`gateway_log_lines_dropped_total`). `flush` at exit waits a
 * bounded time, so a stuck reader cannot hold a stop.
 */
export class LogOutput {
  readonly #sonic: ReturnType<typeof pino.destination>;
  #gone = false;
  #stopping = false;
  #dropped = 0;
  /** Where each line handed over and not yet written ends, in bytes handed over: those left when the output goes are dropped too. */
  #unwritten: number[] = [];
  #firstUnwritten = 0;
  #handed = 0;
  #written = 0;

  constructor(fd = 1) {
    this.#sonic = pino.destination({
      dest: nonBlocking(fd),
      sync: false,
      minLength: 512,
      maxWrite: 1024,
      periodicFlush: 200,
      maxLength: MAX_BUFFERED_BYTES,
      // A full pipe is tried again later while serving, never while stopping.
      retryEAGAIN: () => !this.#stopping,
    });
    // A line over the bound is dropped as it is handed over: it is the last one counted in.
    this.#sonic.on('drop', (line: string) => {
      this.#dropped++;
      this.#unwritten.pop();
      this.#handed -= Buffer.byteLength(line);
    });
    this.#sonic.on('write', (bytes: number) => this.#confirm(bytes));
    this.#sonic.on('error', (error: NodeJS.ErrnoException) => {
      if (!error.code || !GONE.has(error.code) || this.#gone) return;
      this.#gone = true;
      this.#dropped += this.#unwritten.length - this.#firstUnwritten;
      this.#unwritten = [];
      this.#firstUnwritten = 0;
    });
  }

  /** pino's destination interface: one line. */
  write(line: string): void {
    if (this.#gone || this.#stopping) {
      this.#dropped++;
      return;
    }
    this.#handed += Buffer.byteLength(line);
    this.#unwritten.push(this.#handed);
    this.#sonic.write(line);
  }

  /** `bytes` more reached the output: the lines they end are written. */
  #confirm(bytes: number): void {
    this.#written += bytes;
    while (this.#firstUnwritten < this.#unwritten.length && this.#unwritten[this.#firstUnwritten]! <= this.#written) this.#firstUnwritten++;
    if (this.#firstUnwritten === this.#unwritten.length || this.#firstUnwritten > 4096) {
      this.#unwritten.splice(0, this.#firstUnwritten);
      this.#firstUnwritten = 0;
    }
  }

  /** Lines dropped so far: the output gone, stalled or full. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Writes out what is buffered, waiting at most `withinMs`, and ends: right before `process.exit()`. */
  flush(withinMs = 1000): Promise<void> {
    if (this.#stopping) return Promise.resolve();
    this.#stopping = true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(), withinMs);
      const done = () => {
        clearTimeout(timer);
        // Destroyed, so that pino's own exit hook does not flushSync() into a stalled or failing output.
        try {
          this.#sonic.destroy();
        } catch {
          // Already closed.
        }
        resolve();
      };
      if (this.#gone) return done();
      this.#sonic.once('close', done);
      this.#sonic.once('error', done);
      this.#sonic.end();
    });
  }
}

/**
 * A pipe of its own to write to, that never blocks: node leaves a pipe on fd 1 blocking, so a
 * reader that stops reading would hold a write in libuv's thread pool, and the process's exit
 * waits for that thread for good. The same pipe opened again through /proc answers EAGAIN
 * instead (retried while serving, given up on while stopping). Files and terminals stay as they are.
 */
function nonBlocking(fd: number): number {
  try {
    if (!fstatSync(fd).isFIFO()) return fd;
    return openSync(`/proc/self/fd/${fd}`, constants.O_WRONLY | constants.O_NONBLOCK);
  } catch {
    return fd;
  }
}

/** A pipe's reader gone must not crash the process through the streams node made for fd 1 and 2. */
export function ignoreStandardStreamErrors(): void {
  process.stdout.on('error', () => {});
  process.stderr.on('error', () => {});
}

/** The process's logger, writing to `destination` (main passes a `LogOutput`). */
export function createLogger(config: Pick<Config, 'logLevel'>, destination: DestinationStream): Logger {
  return pino({ level: config.logLevel, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination);
}
