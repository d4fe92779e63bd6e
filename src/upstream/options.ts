import type { BreakerOptions, BreakerState } from './breaker.js';
import type { UpstreamCallInfo } from './origin.js';
import type { Refusals } from './refusals.js';
import type { OperationSpend } from './spend.js';

/** Largest answer body an upstream call reads: a record is a few KB, so 1 MiB only stops a runaway answer. */
export const MAX_RESPONSE_BYTES = 1024 * 1024;

export interface UpstreamClientOptions {
  /** Base URL; may carry a path prefix, as the legacy `https://apiperu.dev/api` does. */
  baseUrl: string;
  /** Where lookups go when the primary is unavailable (never after a 4xx). @default undefined */
  fallbackUrl?: string | undefined;
  /** Time-out of one lookup call. @default the configuration's default (src/config.ts) */
  timeoutMs?: number;
  /** Time-out of one batch validation call. @default the configuration's default (src/config.ts) */
  batchTimeoutMs?: number;
  /** Retries of a lookup whose failure is retryable. @default the configuration's default (src/config.ts) */
  retries?: number;
  /** One deadline over a lookup's attempts and backoffs. @default the configuration's default (src/config.ts) */
  deadlineMs?: number;
  /** Each origin's breaker (see BreakerOptions). @default the configuration's default (src/config.ts) */
  breaker?: BreakerOptions;
  /** Keep-alive connections per origin, opened as demand needs them. @default the configuration's default (src/config.ts) */
  connections?: number;
  /** Largest answer body read. @default MAX_RESPONSE_BYTES */
  maxResponseBytes?: number;
  /** The longest `Retry-After` of a throttling 429 honoured. @default the configuration's default (src/config.ts) */
  retryAfterMaxMs?: number;
  /** Every call that reached the network, for logs and metrics. */
  onCall?: (call: UpstreamCallInfo) => void;
  /** Breaker state changes, per origin. */
  onBreakerChange?: (change: { origin: 'primary' | 'fallback'; url: string; state: BreakerState }) => void;
}

/** Per-call context: the caller's token (never stored) and an observer of this request's calls. */
export interface UpstreamCaller {
  token: string | undefined;
  /** Stands for the caller (a hash of the token) when callers take turns for the upstream's connections. */
  caller?: string | undefined;
  /**
   * Stands for the token the calls carry, when it is not the caller's own (one plan for every signed-in caller): the upstream
   * throttles a token. @default caller
   */
  throttledAs?: string | undefined;
  /** `aborted` once the caller has left (an AbortSignal will do): a call not yet sent is then not sent. */
  signal?: { readonly aborted: boolean } | undefined;
  /** This request's refusals: a call already refused (a rejected token, say) is not sent again. */
  refusals?: Refusals | undefined;
  /** What the operation may still spend (MAX_OPERATION_COST): a call it cannot cover is not sent. */
  spend?: OperationSpend | undefined;
  /** Told of every call that reached the network, once it is over. */
  observe?: ((call: UpstreamCallInfo) => void) | undefined;
  /** Told as a call starts (for tracing); what it returns is told when the call is over. */
  onCallStart?:
    | ((call: { path: string; origin: 'primary' | 'fallback'; attempt: number }) => ((info: UpstreamCallInfo) => void) | undefined)
    | undefined;
}
