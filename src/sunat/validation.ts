import type { Cluster, Redis } from 'ioredis';
import type { ComprobanteBody } from '../upstream/schemas.js';
import { SunatCalls, type SunatCallOptions } from './calls.js';
import { SunatReceipts, type SunatResult } from './receipts.js';
import { SunatTokens, type SunatCredentials } from './tokens.js';

/** What the gateway knows of SUNAT: its hosts and pace, its own credentials, and whether a receipt SUNAT could not answer may go to the paid service. */
export interface SunatValidationSettings {
  apiUrl: string;
  authUrl: string;
  concurrency: number;
  timeoutMs: number;
  fallback: 'off' | 'servicio';
  credentials: SunatCredentials | undefined;
  /** The first wait of a retry (tests shorten it). @default 1000 */
  retryBaseMs?: number | undefined;
  retryAfterMaxMs?: number | undefined;
  /** A fleet's Redis: SUNAT_API_CONCURRENCY is then the fleet's per clientId. */
  redis?: Redis | Cluster | undefined;
  /** Told of every call's outcome (for /metrics). */
  onAttempt?: SunatCallOptions['onAttempt'];
}

/** SUNAT's free validation as the schema uses it: with a call's credentials or the gateway's own, else none. */
export class SunatValidation {
  readonly #calls: SunatCalls;
  readonly #receipts: SunatReceipts;
  readonly #tokens: SunatTokens;

  constructor(readonly settings: SunatValidationSettings) {
    this.#calls = new SunatCalls(settings);
    this.#tokens = new SunatTokens(this.#calls);
    this.#receipts = new SunatReceipts(this.#calls, this.#tokens);
  }

  /** The credentials a validation uses: the call's, else the gateway's; undefined: the paid service, as without SUNAT. */
  credentialsFor(given: SunatCredentials | undefined): SunatCredentials | undefined {
    return given ?? this.settings.credentials;
  }

  /** A token for `credentials`: SunatCredentialsRejected when SUNAT refuses them, before anything is asked with them. */
  async token(credentials: SunatCredentials): Promise<void> {
    await this.#tokens.get(credentials);
  }

  validate(credentials: SunatCredentials, receipts: readonly ComprobanteBody[], signal?: AbortSignal): Promise<SunatResult[]> {
    return this.#receipts.validate(credentials, receipts, signal);
  }

  close(): Promise<void> {
    return this.#calls.close();
  }
}
