import { isSuccessStatus, UpstreamHttpError, UpstreamUnavailableError } from './errors.js';
import { LOOKUP_OPS, LOOKUPS } from './lookups.js';
import { REST } from './paths.js';

/** What one receipt costs in a batch validation, per receipt sent (rest-api.md). */
export const RECEIPT_PRICE = 1;

/**
 * What each REST call costs in plan queries (the spec's price list), by path: the lookups'
 * prices from their rows, the batch validations' per receipt. The metrics' help says it; the
 * sandbox keeps the spec's prices apart (src/sandbox/prices.ts), so that a test can catch a
 * row's price being wrong.
 */
export const PLAN_COST: Readonly<Record<string, number>> = {
  ...Object.fromEntries(LOOKUP_OPS.map((op) => [LOOKUPS[op].path, LOOKUPS[op].price])),
  [REST.validacion]: RECEIPT_PRICE,
  [REST.validacionTexto]: RECEIPT_PRICE,
};

/** Most receipts one batch validation call takes (the spec's "Enviar máximo 100 comprobantes por consulta"). */
export const RECEIPTS_PER_CALL = 100;

/**
 * What a call cost, in plan queries, as far as anyone can know: its price when the upstream
 * answered with a record or a 404 (the spec bills those), and also when it may have been billed
 * (sent, then no answer, or a 5xx without the upstream's "not processed"), so that a report never
 * says less than the upstream may charge. Refusals (a 4xx envelope, the upstream's 503) and
 * calls never sent cost nothing.
 */
export function queriesSpent(cost: number, status: number | undefined, error: unknown): number {
  // A plan that ran out, or that does not include the operation, bills nothing, whatever status says so.
  if (error instanceof UpstreamHttpError && (error.reason === 'quota_exceeded' || error.reason === 'forbidden')) return 0;
  if (isSuccessStatus(status) || status === 404) return cost;
  return error instanceof UpstreamUnavailableError && !error.unprocessed ? cost : 0;
}
