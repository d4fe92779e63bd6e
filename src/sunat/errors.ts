/** Why SUNAT's API did not answer a receipt: each the gateway maps to its code (src/errors.ts). */
export class SunatError extends Error {}

/** SUNAT's token service refused the credentials (400, 401, 403): nothing is asked with them. */
export class SunatCredentialsRejected extends SunatError {
  constructor(readonly sunatMessage: string | undefined) {
    super(`SUNAT refused the API credentials${sunatMessage ? `: ${sunatMessage}` : ''}`);
  }
}

/** SUNAT answered about one receipt that it cannot validate it (`success: false`): its words, kept. */
export class SunatRefused extends SunatError {
  constructor(readonly sunatMessage: string) {
    super(`SUNAT refused the receipt: ${sunatMessage}`);
  }
}

/** SUNAT could not answer (5xx, 429, a time-out, the network), after the retries. */
export class SunatUnavailable extends SunatError {
  constructor(
    readonly reason: string,
    /** A 429's or 503's Retry-After, in ms. */
    readonly retryAfterMs?: number,
  ) {
    super(`SUNAT is unavailable: ${reason}`);
  }
}
