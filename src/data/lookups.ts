import { createHash, createHmac, randomBytes } from 'node:crypto';
import { KEY_PREFIX, type Lease, type SharedLookupStore } from './store.js';
import { paidFor } from './budget.js';
import type { UpstreamClient } from '../upstream/client.js';
import {
  REFUSED_WITHOUT_CALL,
  UpstreamError,
  UpstreamHttpError,
  UpstreamUnavailableError,
  upstreamErrorData,
  upstreamErrorFrom,
  type UpstreamErrorData,
} from '../upstream/errors.js';
import type { Refusals } from '../upstream/refusals.js';
import type { RucRecord } from '../upstream/schemas.js';
import { LOOKUPS, type LookupOp, type RecordOf } from '../upstream/lookups.js';
import type { CacheResult, LookupCaller, LookupsOptions, Received } from './lookup-types.js';

export type { CacheResult, LookupCaller, LookupsOptions, Received } from './lookup-types.js';
export type { LookupOp } from '../upstream/lookups.js';

export { KEY_PREFIX } from './store.js';

/**
 * How long a token the upstream rejected (401) is remembered, by its key in the store, so that
 * the same token a moment later costs at most one call on any instance. Short: a token
 * the upstream starts accepting again is held back no longer than this, and an accepted token is
 * never affected (docs/hardening.md).
 */
export const REJECTED_TOKEN_MS = 10_000;

/**
 * What a store holds and hands over: a record, fresh until `freshUntil` (epoch ms) and kept
 * longer for when the upstream is down, or a failure (a kept 404, or one for the callers that waited).
 */
type Entry<T> = { record: T; freshUntil: number } | { failure: UpstreamErrorData };


/**
 * Lookups with the caller's quota in mind: answers kept per operation, key and token, and
 * concurrent identical lookups sharing one upstream call, in this process or across instances,
 * as far as the store reaches. A token's answers are only
 * ever served to that token (free and paid plans see different things). Only found records
 * and DOCUMENT_NOT_FOUND are kept; a failure reaches only the callers that waited on its call.
 * Batch validations never come through here.
 */
export class CachedLookups {
  readonly #client: UpstreamClient;
  readonly #store: SharedLookupStore | undefined;
  readonly #options: LookupsOptions;
  readonly #secret: string | undefined;

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

  /** One lookup (a row of src/upstream/lookups.ts) of one checked key: the register's when it holds it, else through the cache. */
  lookup<Op extends LookupOp>(op: Op, key: string, ctx: LookupCaller): Promise<Received<RecordOf<Op>>>;
  lookup(op: LookupOp, key: string, ctx: LookupCaller): Promise<Received> {
    const row = LOOKUPS[op];
    // A row the register answers is looked up by RUC, and its record is the register's.
    const local = row.register ? this.fromRegister(key, op, ctx) : undefined;
    if (local) return Promise.resolve(local);
    const call = (c: LookupCaller): Promise<Received> => this.#client.lookup(op, key, c);
    const budget = ctx.budget;
    const fetch = budget ? () => paidFor(budget, row.price, ctx, call) : () => call(ctx);
    // No cache and nobody tracing: straight to the upstream (nothing to count as 'off').
    if (!this.#store && !ctx.onLookupStart) return fetch();
    return this.#observed(op, key, ctx, fetch, row.ttl(key, this.#options.ttlMs));
  }

  /**
   * The record of `ruc` in SUNAT's register kept by the gateway, which answers before the cache,
   * but for a caller who asked for fresh data; counted as a local answer of `op`.
   */
  fromRegister(ruc: string, op: LookupOp, ctx: LookupCaller): Received<RucRecord> | undefined {
    const local = ctx.noCache ? undefined : this.#options.register?.ruc(ruc);
    if (local) {
      ctx.onLocal?.();
      this.#options.onResult?.(op, 'local');
    }
    return local;
  }

  async #observed<T extends Received>(op: LookupOp, key: string, ctx: LookupCaller, fetch: () => Promise<T>, ttlMs: number): Promise<T> {
    const finish = ctx.onLookupStart?.(op);
    let result: CacheResult = 'off';
    try {
      const value = await this.#find(op, key, ctx, fetch, ttlMs, (r) => (result = r));
      finish?.(result, false);
      return value;
    } catch (error) {
      finish?.(result, true);
      throw error;
    } finally {
      this.#options.onResult?.(op, result);
    }
  }

  async #find<T extends Received>(
    op: LookupOp,
    key: string,
    ctx: LookupCaller,
    fetch: () => Promise<T>,
    ttlMs: number,
    outcome: (r: CacheResult) => void,
  ): Promise<T> {
    const store = this.#store;
    // No token (the client refuses it without a call) or no store: nothing to share.
    if (!store || !ctx.tokenKey) return fetch();
    const storeKey = `${KEY_PREFIX}{${op}:${ctx.tokenKey}:${key}}`;
    let claim = await store.claim(storeKey, { read: this.#options.keep && !ctx.noCache });
    let waited = false;
    for (;;) {
      while (claim.kind === 'wait') {
        waited = true;
        claim = await claim.next;
      }
      if (claim.kind === 'lead') return this.#lead(storeKey, ctx.tokenKey, ctx, claim.lease, fetch, ttlMs, outcome);
      const entry = entryOf<T>(claim.entry);
      // An entry this version cannot read (another version's, say) counts as a miss.
      if (!entry) return fetch();
      // A record kept past its time to live only for when the upstream is down: refreshed first.
      if ('record' in entry && !waited && entry.freshUntil <= Date.now()) {
        claim = await store.claim(storeKey, { read: false });
        continue;
      }
      outcome(waited ? 'flight' : 'hit');
      ctx.onShared?.(waited ? 'flight' : 'cache');
      if ('record' in entry) return entry.record;
      const failure = upstreamErrorFrom(entry.failure);
      // Another request's call was refused the token: this request sends no further call with it either.
      ctx.refusals?.note(failure);
      // The call this one waited on found the upstream down: the last good record, if any.
      return this.#staleOr(failure, storeKey, ctx, outcome);
    }
  }

  /** This caller's request makes (and pays for) the call, and hands the outcome to those waiting. */
  async #lead<T extends Received>(
    storeKey: string,
    tokenKey: string,
    ctx: LookupCaller,
    lease: Lease,
    fetch: () => Promise<T>,
    ttlMs: number,
    outcome: (r: CacheResult) => void,
  ): Promise<T> {
    outcome('miss');
    const store = this.#store!;
    const keep = this.#options.keep;
    let record: T;
    try {
      await this.#recall(store, tokenKey, ctx.refusals);
      record = await fetch();
    } catch (error) {
      if (error instanceof UpstreamHttpError && error.reason === 'unauthenticated' && !error.withoutCall) {
        store.keep(rejectedKey(tokenKey), JSON.stringify({ failure: upstreamErrorData(error) } satisfies Entry<T>), REJECTED_TOKEN_MS);
      }
      if (error instanceof UpstreamUnavailableError && REFUSED_WITHOUT_CALL.has(error.reason)) {
        // This caller's own refusal (it left, or is over its share): the next waiter makes the call.
        lease.abandon();
      } else if (error instanceof UpstreamError) {
        // Nothing found is an answer like a record (and billed like one): kept. Any other failure
        // only reaches the callers that waited on this call.
        const notFound = error instanceof UpstreamHttpError && error.reason === 'document_not_found';
        const failure: Entry<T> = { failure: upstreamErrorData(error) };
        lease.settle(JSON.stringify(failure), notFound && keep ? this.#options.notFoundTtlMs : 0);
      } else {
        lease.abandon();
      }
      return this.#staleOr(error, storeKey, ctx, outcome);
    }
    const entry: Entry<T> = { record, freshUntil: Date.now() + ttlMs };
    // Kept past its time to live (stale-if-error), for when refreshing it finds the upstream down.
    lease.settle(JSON.stringify(entry), keep ? ttlMs + this.#options.staleIfErrorMs : 0);
    return record;
  }

  /**
   * stale-if-error (RFC 5861): when the upstream is unavailable, the same token's last good
   * record, kept past its time to live, is answered instead (marked `stale`); any other failure
   * is the answer.
   */
  async #staleOr<T extends Received>(error: unknown, storeKey: string, ctx: LookupCaller, outcome: (r: CacheResult) => void): Promise<T> {
    if (!(error instanceof UpstreamUnavailableError) || error.reason === 'client_gone' || !this.#options.keep) throw error;
    if (this.#options.staleIfErrorMs <= 0) throw error;
    const text = await this.#store!.peek(storeKey);
    const entry = text === undefined ? undefined : entryOf<T>(text);
    if (!entry || !('record' in entry)) throw error;
    outcome('stale');
    ctx.onStale?.();
    entry.record.stale = true;
    return entry.record;
  }

  /** Once per request, before its first call: whether another request lately had this token rejected. */
  #recall(store: SharedLookupStore, tokenKey: string, refusals: Refusals | undefined): Promise<void> {
    if (!refusals) return Promise.resolve();
    return (refusals.recalled ??= store.peek(rejectedKey(tokenKey)).then((text) => {
      const entry = text === undefined ? undefined : entryOf(text);
      if (entry && 'failure' in entry) refusals.note(upstreamErrorFrom(entry.failure));
    }));
  }
}

const rejectedKey = (tokenKey: string) => `${KEY_PREFIX}{rejected:${tokenKey}}`;

/** A stored entry, or undefined for anything unreadable. */
function entryOf<T>(text: string): Entry<T> | undefined {
  try {
    const value = JSON.parse(text) as Entry<T>;
    return typeof value === 'object' && value !== null && ('record' in value || 'failure' in value) ? value : undefined;
  } catch {
    return undefined;
  }
}
