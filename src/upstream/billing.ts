import { REST } from './paths.js';
import { isSuccessStatus, UpstreamHttpError, UpstreamUnavailableError } from './errors.js';

/**
 * What each REST call costs in plan queries (the spec's price list): the one statement of it.
 * The upstream client counts what it spent from it, and the schema declares each field's `@cost`
 * from it, which the cost limit reads. The sandbox keeps the spec's prices apart
 * (src/sandbox/prices.ts), so that a test can catch this list being wrong.
 */
export const PLAN_COST = {
  [REST.ruc]: 1,
  [REST.rucSunat]: 1,
  [REST.licencia]: 2,
  /** Not published per operation: public clients count 1 query per call (upstream-notes, "More operations"). */
  [REST.dni]: 1,
  [REST.representantes]: 1,
  /** One client notes that it "consumes one more query": one per call, as the others. */
  [REST.establecimientos]: 1,
  [REST.tipoDeCambio]: 1,
  /** The batch validations cost this per receipt sent. */
  receipt: 1,
} as const;

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
