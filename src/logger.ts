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
 * Call `logger.flush()` before exiting (main does).
 */
export function createLogger(config: Pick<Config, 'logLevel'>, destination?: NodeJS.WritableStream): Logger {
  const options = { level: config.logLevel, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  return pino(options, (destination as Parameters<typeof pino>[1]) ?? pino.destination({ dest: 1, sync: false }));
}
