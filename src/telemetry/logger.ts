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

/**
 * Standard output through an asynchronous pino destination: one line per operation must not
 * block on a write(2). Lines are gathered into small chunks per write and flushed at least
 * every 200 ms; call its `flushSync()` right before `process.exit()`. The chunks stay small
 * because sonic-boom measures the growing chunk's byte length on every line, copying it each
 * time (docs/performance.md).
 */
export function stdoutDestination() {
  return pino.destination({ dest: 1, sync: false, minLength: 512, maxWrite: 1024, periodicFlush: 200 });
}

/** The process's logger, writing to `destination` (main passes `stdoutDestination()`). */
export function createLogger(config: Pick<Config, 'logLevel'>, destination: DestinationStream): Logger {
  return pino({ level: config.logLevel, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination);
}
