import { ERROR_CODES } from '../errors.js';
import { builder } from './builder.js';

/** Printed in the SDL so that client codegen can narrow on `extensions.code`. */
export const ErrorCodeRef = builder.enumType('ErrorCode', {
  description: 'Valores de `extensions.code` en los errores del gateway. Cada error trae también `extensions.retryable` (Boolean).',
  values: Object.fromEntries(Object.entries(ERROR_CODES).map(([code, description]) => [code, { description }])),
});
