import { pino, type Logger } from 'pino';
import type { Config } from './config.js';

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

/**
 * The process's logger. Without a destination it writes to stdout through an
 * asynchronous pino destination: one line per operation must not block on a write(2).
 * Call `flushLogsSync(logger)` before exiting (main does): lines wait in a buffer.
 */
export function createLogger(config: Pick<Config, 'logLevel'>, destination?: NodeJS.WritableStream): Logger {
  const options = { level: config.logLevel, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  // Lines are gathered up to 4 KiB per write(2), and flushed at least every 200 ms: one write
  // per line was a few percent of an operation's CPU under load.
  const stdout = () =>
    pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 200 } as Parameters<typeof pino.destination>[0]);
  return pino(options, (destination as Parameters<typeof pino>[1]) ?? stdout());
}

/** Writes out what the logger holds, synchronously: for right before `process.exit()`. */
export function flushLogsSync(logger: Logger): void {
  const stream = (logger as unknown as Record<symbol, { flushSync?: () => void }>)[pino.symbols.streamSym];
  try {
    stream?.flushSync?.();
  } catch {
    // Not open yet, or already closed: nothing more can be written.
  }
}
