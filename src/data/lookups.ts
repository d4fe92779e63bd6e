import { createHmac, hash } from 'node:crypto';
import { KEY_PREFIX, type Handover, type LookupStore } from './cache.js';
import type { Budget } from './budgets.js';
import type { UpstreamCaller, UpstreamClient } from '../upstream/client.js';
import {
  REFUSED_WITHOUT_CALL,
  UpstreamError,
  UpstreamHttpError,
  UpstreamUnavailableError,
  upstreamErrorData,
  upstreamErrorFrom,
  type UpstreamErrorData,
} from '../upstream/errors.js';
import type { RucRecord } from '../upstream/schemas.js';
import { LOOKUPS, type LookupOp, type RecordOf } from '../upstream/lookups.js';
import type { Config } from '../config.js';

export interface LookupsOptions {
  store: LookupStore | undefined;
  /** `enabled` keeps answers (CACHE=on); off, lookups still share a call in flight (COALESCE). */
  cache: Pick<Config['cache'], 'enabled' | 'ttlMs' | 'notFoundTtlMs' | 'staleIfErrorMs'>;
  /** Secret of the HMAC of the token in cache keys; without one, plain SHA-256 (instances sharing Redis must agree). */
  keySecret: string | undefined;
  onResult?: (op: LookupOp, result: CacheResult) => void;
  /** SUNAT's register (PADRON), which answers a RUC it holds before the cache. */
  register?: { ruc(ruc: string): RucRecord | undefined } | undefined;
}

/** flight: joined another request's call; stale: the last good record, the upstream being down; local: SUNAT's register. */
export type CacheResult = 'hit' | 'flight' | 'miss' | 'stale' | 'off' | 'local';

/** Per-call context of a lookup: the upstream's, plus what the cache needs. */
export interface LookupCaller extends UpstreamCaller {
  /** What stands for the token in cache keys (see `tokenKey`); never the token itself. */
  tokenKey: string | undefined;
  /** `Cache-Control: no-cache`: do not read the cache; fetch, and store the fresh answer. */
  noCache?: boolean;
  budget?: Budget | undefined;
  onResult?: ((result: CacheResult) => void) | undefined;
  /** Told as a lookup starts (for tracing); what it returns is told its cache result and whether it failed. */
  onLookupStart?: (op: LookupOp) => ((result: CacheResult, failed: boolean) => void) | undefined;
}

/** A record with the time the gateway received it (epoch ms; the register's date for `fuente: 'PADRON'`), `stale` when answered so. */
export type Received<T extends object = object> = T & { receivedAt: number; stale?: boolean; fuente?: 'PADRON' };

/** How long a token the upstream rejected (401) is remembered on every instance (docs/hardening.md). */
export const REJECTED_TOKEN_MS = 10_000;

/** What the store holds: a record, fresh until `freshUntil` and kept longer for stale-if-error, or a failure. */
type Entry<T> = { record: T; freshUntil: number } | { failure: UpstreamErrorData };

/**
 * Lookups with the caller's quota in mind: the register first, then answers kept per lookup, key and token (plans see
 * different things), one call shared as far as the store reaches; a failure but DOCUMENT_NOT_FOUND only reaches its waiters.
 */
export class CachedLookups {
  constructor(
    private readonly client: UpstreamClient,
    private readonly options: LookupsOptions,
  ) {}

  /** What stands for the token in cache keys: HMAC-SHA-256 with CACHE_KEY_SECRET, else SHA-256 in one call, far cheaper (docs/performance.md). */
  tokenKey(token: string | undefined): string | undefined {
    if (!token || !this.options.store) return undefined;
    const secret = this.options.keySecret;
    return secret ? createHmac('sha256', secret).update(token).digest('base64url') : hash('sha256', token, 'base64url');
  }

  /** One lookup (a row of src/upstream/lookups.ts) of one checked key. */
  lookup<Op extends LookupOp>(op: Op, key: string, ctx: LookupCaller): Promise<Received<RecordOf<Op>>>;
  lookup(op: LookupOp, key: string, ctx: LookupCaller): Promise<Received> {
    const row = LOOKUPS[op];
    // A row the register answers is looked up by RUC, and its record is the register's.
    const local = row.register ? this.fromRegister(key, op, ctx) : undefined;
    if (local) return Promise.resolve(local);
    const call = (c: LookupCaller): Promise<Received> => this.client.lookup(op, key, c);
    const { budget } = ctx;
    const fetch = budget ? () => budget.pay(row.price, ctx, call) : () => call(ctx);
    // No store and nobody tracing: straight to the upstream (nothing to count as 'off').
    if (!this.options.store && !ctx.onLookupStart) return fetch();
    return new Lookup(this.options, op, key, ctx, fetch).run(row.ttl(key, this.options.cache.ttlMs));
  }

  /** The register's record of `ruc`, which answers before the cache but for a caller who asked for fresh data. */
  fromRegister(ruc: string, op: LookupOp, ctx: LookupCaller): Received<RucRecord> | undefined {
    const local = ctx.noCache ? undefined : this.options.register?.ruc(ruc);
    if (local) told(this.options, ctx, op, 'local');
    return local;
  }
}

function told(options: LookupsOptions, ctx: LookupCaller, op: LookupOp, result: CacheResult): void {
  ctx.onResult?.(result);
  options.onResult?.(op, result);
}

/** One lookup through the store, and where its answer came from. */
class Lookup<T extends Received> {
  result: CacheResult = 'off';
  /** This caller's own call, when it led one. */
  #led: { record: T } | { error: unknown } | undefined;

  constructor(
    private readonly options: LookupsOptions,
    private readonly op: LookupOp,
    private readonly key: string,
    private readonly ctx: LookupCaller,
    private readonly fetch: () => Promise<T>,
  ) {}

  /** The answer, its cache result told to the request, the metrics and the trace. */
  async run(ttlMs: number): Promise<T> {
    const finish = this.ctx.onLookupStart?.(this.op);
    let failed = true;
    try {
      const [{ store }, { tokenKey }] = [this.options, this.ctx];
      // No token (the client refuses it without a call): nothing to share.
      const value = await (store && tokenKey ? this.#find(store, tokenKey, ttlMs) : this.fetch());
      failed = false;
      return value;
    } finally {
      finish?.(this.result, failed);
      told(this.options, this.ctx, this.op, this.result);
    }
  }

  async #find(store: LookupStore, tokenKey: string, ttlMs: number): Promise<T> {
    const storeKey = `${KEY_PREFIX}{${this.op}:${tokenKey}:${this.key}}`;
    let read = this.options.cache.enabled && !this.ctx.noCache;
    for (;;) {
      const found = await store.once(storeKey, read, () => this.#call(store, tokenKey, ttlMs));
      if (this.#led) {
        this.result = 'miss';
        return 'record' in this.#led ? this.#led.record : this.#staleOr(store, storeKey, this.#led.error);
      }
      const entry = found && entryOf<T>(found.entry);
      // An entry this version cannot read (another version's, say) counts as a miss.
      if (!found || !entry) return this.fetch();
      // A record kept past its time to live only for when the upstream is down: refreshed first.
      if ('record' in entry && found.how === 'hit' && entry.freshUntil <= Date.now()) {
        read = false;
        continue;
      }
      this.result = found.how;
      if ('record' in entry) return entry.record;
      const failure = upstreamErrorFrom(entry.failure);
      // Another request's call was refused the token: this request sends no further call with it either.
      this.ctx.refusals?.note(failure);
      return this.#staleOr(store, storeKey, failure);
    }
  }

  /** This caller's call, paid by its request, and what it hands to those waiting. */
  async #call(store: LookupStore, tokenKey: string, ttlMs: number): Promise<Handover> {
    const { enabled: keep, notFoundTtlMs, staleIfErrorMs } = this.options.cache;
    try {
      await this.#recall(store, tokenKey);
      const record = await this.fetch();
      this.#led = { record };
      // Kept past its time to live (stale-if-error), for when refreshing it finds the upstream down.
      const entry: Entry<T> = { record, freshUntil: Date.now() + ttlMs };
      return { entry: JSON.stringify(entry), ttlMs: keep ? ttlMs + staleIfErrorMs : 0 };
    } catch (error) {
      this.#led = { error };
      if (!(error instanceof UpstreamError)) return undefined;
      const failure = JSON.stringify({ failure: upstreamErrorData(error) } satisfies Entry<T>);
      if (error instanceof UpstreamHttpError && error.reason === 'unauthenticated' && !error.withoutCall) {
        store.keep(rejectedKey(tokenKey), failure, REJECTED_TOKEN_MS);
      }
      // This caller's own refusal (it left, or is over its share): the next waiter makes the call.
      if (error instanceof UpstreamUnavailableError && REFUSED_WITHOUT_CALL.has(error.reason)) return undefined;
      // Nothing found is an answer like a record (and billed like one): kept.
      const notFound = error instanceof UpstreamHttpError && error.reason === 'document_not_found';
      return { entry: failure, ttlMs: notFound && keep ? notFoundTtlMs : 0 };
    }
  }

  /** stale-if-error (RFC 5861): while the upstream is unavailable, the token's last good record, marked `stale`. */
  async #staleOr(store: LookupStore, storeKey: string, error: unknown): Promise<T> {
    const { enabled, staleIfErrorMs } = this.options.cache;
    if (!(error instanceof UpstreamUnavailableError) || error.reason === 'client_gone' || !enabled || staleIfErrorMs <= 0) throw error;
    const text = await store.peek(storeKey);
    const entry = text === undefined ? undefined : entryOf<T>(text);
    if (!entry || !('record' in entry)) throw error;
    this.result = 'stale';
    entry.record.stale = true;
    return entry.record;
  }

  /** Once per request, before its first call: whether another request lately had this token rejected. */
  async #recall(store: LookupStore, tokenKey: string): Promise<void> {
    const { refusals } = this.ctx;
    if (!refusals) return;
    await (refusals.recalled ??= store.peek(rejectedKey(tokenKey)).then((text) => {
      const entry = text === undefined ? undefined : entryOf(text);
      if (entry && 'failure' in entry) refusals.note(upstreamErrorFrom(entry.failure));
    }));
  }
}

const rejectedKey = (tokenKey: string) => `${KEY_PREFIX}{rejected:${tokenKey}}`;

function entryOf<T>(text: string): Entry<T> | undefined {
  try {
    const value = JSON.parse(text) as Entry<T>;
    return typeof value === 'object' && value !== null && ('record' in value || 'failure' in value) ? value : undefined;
  } catch {
    return undefined;
  }
}
