/**
 * The upstream's prices and batch bound as rest-api.md states them (its table of operations and
 * section 8), written here apart from the client's PLAN_COST on purpose: the sandbox bills as the
 * real service would, so a wrong price in the client shows up as a difference between what the
 * gateway reports and what the sandbox charged (test/e2e/billing.test.ts), instead of being
 * agreed by both sides.
 */
export const SPEC_PRICE: Readonly<Record<string, number>> = {
  '/ruc': 1,
  '/ruc-sunat': 1,
  '/licencia-conducir': 2,
  /** Beyond the spec: 1 query per call, as public clients count it. */
  '/dni': 1,
  '/ruc-representantes': 1,
  '/ruc-establecimientos-anexos': 1,
  '/tipo-de-cambio': 1,
};

/** "1 query per receipt sent", for both batch validations. */
export const SPEC_PRICE_PER_RECEIPT = 1;

/** "Enviar máximo 100 comprobantes por consulta." */
export const SPEC_MAX_RECEIPTS = 100;
