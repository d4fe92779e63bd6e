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

export function createLogger(config: Pick<Config, 'logLevel'>, destination?: NodeJS.WritableStream): Logger {
  return pino({ level: config.logLevel, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination as Parameters<typeof pino>[1]);
}
