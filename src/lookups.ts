import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { CacheStore } from './cache/store.js';
import type { CallContext, UpstreamClient } from './upstream/client.js';
import { UpstreamHttpError } from './upstream/errors.js';
import type { LicenciaRecord, RucRecord, RucSunatRecord } from './upstream/schemas.js';

export type LookupOp = 'ruc' | 'rucSunat' | 'licencia';

export interface LookupsOptions {
  /** Where answers are kept; undefined turns the cache and cross-request sharing off. */
  store: CacheStore | undefined;
  /** Time to live of a found record, per operation. */
  ttlMs: Record<LookupOp, number>;
  /** Time to live of a DOCUMENT_NOT_FOUND answer. */
  notFoundTtlMs: number;
  /**
   * Secret for the HMAC of the token in cache keys. Without one, a random secret for this
   * process (fine for the embedded store), or plain SHA-256 when `sharedKeys` is set, so that
   * instances sharing Redis agree on keys.
   */
  keySecret?: string | undefined;
  sharedKeys?: boolean;
  /** Every lookup's cache result, for metrics. */
  onResult?: (op: LookupOp, result: CacheResult) => void;
}

/** hit: from the cache; flight: joined another request's call; miss: called upstream; off: no cache. */
export type CacheResult = 'hit' | 'flight' | 'miss' | 'off';

/** Per-call context of a lookup: the upstream's, plus what the cache needs. */
export interface LookupContext extends CallContext {
  /** The token as it appears in cache keys (see `tokenKey`); never the token itself. */
  tokenKey: string | undefined;
  /** `Cache-Control: no-cache`: do not read the cache; fetch, and store the fresh answer. */
  noCache?: boolean;
  /** Told when an answer came from the cache or from another request's call in flight. */
  onShared?: (how: 'cache' | 'flight') => void;
  /** Told as a lookup starts (for tracing); what it returns is told its cache result and whether it failed. */
  onLookupStart?: (op: LookupOp) => ((result: CacheResult, failed: boolean) => void) | undefined;
}

type Cached<T> = { record: T } | { notFound: { status: number; code?: string | undefined; message?: string | undefined } };

/**
 * Lookups with the caller's quota in mind: answers cached per operation, key and token, and
 * concurrent identical lookups from different requests sharing one upstream call. A token's
 * answers are only ever served to that token (free and paid plans see different things).
 * Only found records and DOCUMENT_NOT_FOUND are kept; nothing else (no retryable failure, no
 * 401, 403 or 429), and batch validations never come through here.
 */
export class Lookups {
  readonly #client: UpstreamClient;
  readonly #store: CacheStore | undefined;
  readonly #options: LookupsOptions;
  readonly #secret: string | undefined;
  readonly #flights = new Map<string, Promise<unknown>>();

  constructor(client: UpstreamClient, options: LookupsOptions) {
    this.#client = client;
    this.#store = options.store;
    this.#options = options;
    this.#secret = options.keySecret ?? (options.sharedKeys ? undefined : randomBytes(32).toString('hex'));
  }

  /** What stands for the token in cache keys: HMAC-SHA-256 with the server secret (or SHA-256). */
  tokenKey(token: string | undefined): string | undefined {
    if (!token || !this.#store) return undefined;
    return (this.#secret ? createHmac('sha256', this.#secret) : createHash('sha256')).update(token).digest('base64url');
  }

  ruc(ruc: string, ctx: LookupContext): Promise<RucRecord> {
    return this.#lookup('ruc', ruc, ctx, () => this.#client.ruc(ruc, ctx));
  }

  rucSunat(ruc: string, ctx: LookupContext): Promise<RucSunatRecord> {
    return this.#lookup('rucSunat', ruc, ctx, () => this.#client.rucSunat(ruc, ctx));
  }

  licencia(numLicencia: string, ctx: LookupContext): Promise<LicenciaRecord> {
    return this.#lookup('licencia', numLicencia, ctx, () => this.#client.licencia(numLicencia, ctx));
  }

  #lookup<T>(op: LookupOp, key: string, ctx: LookupContext, fetch: () => Promise<T>): Promise<T> {
    // No cache and nobody tracing: straight to the upstream (nothing to count as 'off').
    if (!this.#store && !ctx.onLookupStart) return fetch();
    return this.#observed(op, key, ctx, fetch);
  }

  async #observed<T>(op: LookupOp, key: string, ctx: LookupContext, fetch: () => Promise<T>): Promise<T> {
    const finish = ctx.onLookupStart?.(op);
    let result: CacheResult = 'off';
    try {
      const value = await this.#find(op, key, ctx, fetch, (r) => (result = r));
      finish?.(result, false);
      return value;
    } catch (error) {
      finish?.(result, true);
      throw error;
    } finally {
      this.#options.onResult?.(op, result);
    }
  }

  async #find<T>(op: LookupOp, key: string, ctx: LookupContext, fetch: () => Promise<T>, outcome: (r: CacheResult) => void): Promise<T> {
    const store = this.#store;
    // No token (the client refuses it without a call) or no cache: nothing to share.
    if (!store || !ctx.tokenKey) return fetch();
    const cacheKey = `gw1:${op}:${ctx.tokenKey}:${key}`;

    if (!ctx.noCache) {
      const cached = parse<T>(await store.get(cacheKey));
      if (cached) {
        outcome('hit');
        ctx.onShared?.('cache');
        if ('record' in cached) return cached.record;
        throw new UpstreamHttpError({
          path: op,
          status: cached.notFound.status,
          upstreamCode: cached.notFound.code,
          upstreamMessage: cached.notFound.message,
        });
      }
    }

    const inFlight = this.#flights.get(cacheKey) as Promise<T> | undefined;
    if (inFlight) {
      outcome('flight');
      ctx.onShared?.('flight');
      return inFlight;
    }
    outcome('miss');
    // The first caller's request makes (and pays for) the call; a failure reaches only the
    // callers that joined this flight, and the next lookup starts a new one.
    const flight = (async () => {
      try {
        const record = await fetch();
        await store.set(cacheKey, JSON.stringify({ record } satisfies Cached<T>), this.#options.ttlMs[op]);
        return record;
      } catch (error) {
        if (error instanceof UpstreamHttpError && error.status === 404 && error.upstreamCode === 'document_not_found') {
          const notFound = { status: 404, code: error.upstreamCode, message: error.upstreamMessage };
          await store.set(cacheKey, JSON.stringify({ notFound } satisfies Cached<T>), this.#options.notFoundTtlMs);
        }
        throw error;
      } finally {
        this.#flights.delete(cacheKey);
      }
    })();
    this.#flights.set(cacheKey, flight);
    return flight;
  }
}

/** A stored answer, or undefined for a miss or anything unreadable (counted as a miss). */
function parse<T>(text: string | undefined): Cached<T> | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as Cached<T>;
    return typeof value === 'object' && value !== null && ('record' in value || 'notFound' in value) ? value : undefined;
  } catch {
    return undefined;
  }
}
