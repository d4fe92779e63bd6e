/**
 * What each REST call costs in plan queries (the spec's price list): the one statement of it.
 * The upstream client counts what it spent from it, the sandbox bills from it, and the schema
 * declares each field's `@cost` from it, which the cost limit reads.
 */
export const PLAN_COST = {
  '/ruc': 1,
  '/ruc-sunat': 1,
  '/licencia-conducir': 2,
  /** The batch validations cost this per receipt sent. */
  receipt: 1,
} as const;

/** Most receipts one batch validation call takes (the spec's "Enviar máximo 100 comprobantes por consulta"). */
export const RECEIPTS_PER_CALL = 100;
