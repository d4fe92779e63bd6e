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

/** A REST path that looks up one document. */
export type LookupPath = '/ruc' | '/ruc-sunat' | '/licencia-conducir';
