import type { Budget } from './budget.js';
import type { SharedLookupStore } from './store.js';
import type { UpstreamCaller } from '../upstream/client.js';
import type { RucRecord } from '../upstream/schemas.js';
import type { LookupOp, Ttls } from '../upstream/lookups.js';

/** What the lookups are given and hand out: their options, a caller's context, and a record as received. */


export interface LookupsOptions {
  /** Where lookups meet (kept answers, calls in flight); undefined: every lookup calls. */
  store: SharedLookupStore | undefined;
  /** Keep answers (CACHE=on); false still lets lookups share a call in flight (COALESCE). */
  keep: boolean;
  /** The times to live a lookup's row picks its record's from. */
  ttlMs: Ttls;
  /** Time to live of a DOCUMENT_NOT_FOUND answer. */
  notFoundTtlMs: number;
  /** How long past its time to live a found record is kept, for when the upstream is down (0: not at all). */
  staleIfErrorMs: number;
  /**
   * Secret for the HMAC of the token in cache keys. Without one, a random secret for this
   * process (fine for one process), or plain SHA-256 when `sharedKeys` is set, so that
   * processes sharing a store agree on keys.
   */
  keySecret?: string | undefined;
  sharedKeys?: boolean;
  /** Every lookup's cache result, for metrics. */
  onResult?: (op: LookupOp, result: CacheResult) => void;
  /** SUNAT's register kept by the gateway (PADRON), which answers a RUC it holds before the cache. */
  register?: { ruc(ruc: string): RucRecord | undefined } | undefined;
}

/**
 * hit: from the cache; flight: joined another request's call; miss: called upstream; stale: the
 * last good record while the upstream is down; off: no cache; local: from SUNAT's register kept by the gateway.
 */
export type CacheResult = 'hit' | 'flight' | 'miss' | 'stale' | 'off' | 'local';

/** Per-call context of a lookup: the upstream's, plus what the cache needs. */
export interface LookupCaller extends UpstreamCaller {
  /** The token as it appears in cache keys (see `tokenKey`); never the token itself. */
  tokenKey: string | undefined;
  /** `Cache-Control: no-cache`: do not read the cache; fetch, and store the fresh answer. */
  noCache?: boolean;
  /** Told when an answer came from the cache or from another request's call in flight. */
  onShared?: (how: 'cache' | 'flight') => void;
  /** The signed-in subject's budget, which pays for each call before it is sent (sign-in mode). */
  budget?: Budget | undefined;
  /** Told when the answer is the last good record, the upstream being down. */
  onStale?: (() => void) | undefined;
  /** Told when the answer came from SUNAT's register kept by the gateway, at no cost. */
  onLocal?: (() => void) | undefined;
  /** Told as a lookup starts (for tracing); what it returns is told its cache result and whether it failed. */
  onLookupStart?: (op: LookupOp) => ((result: CacheResult, failed: boolean) => void) | undefined;
}

/**
 * A record as the lookups hand it out: with the time the gateway received it from the upstream
 * (epoch milliseconds: the schema writes it as ISO 8601 only where a field asks for it), which
 * travels with it through every store, and `stale` when it is the last good record answered
 * because the upstream is down; `fuente: 'PADRON'` when SUNAT's register kept by the gateway
 * answered instead (then the time is the register's date).
 */
export type Received<T extends object = object> = T & { receivedAt: number; stale?: boolean; fuente?: 'PADRON' };
