import { LRUCache } from 'lru-cache';
import { Agent, request, type Dispatcher } from 'undici';
import { bulkhead, DelegateBackoff, handleWhen, retry, type BulkheadPolicy, type RetryPolicy } from 'cockatiel';
import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { Semaphore, TimeoutError } from 'redis-semaphore';
import { SunatUnavailable } from './errors.js';

/** How the gateway calls SUNAT: its hosts, and the pace SUNAT's users keep (docs/sunat.md). */
export interface SunatCallOptions {
  /** SUNAT's API host: `https://api.sunat.gob.pe`, or the sandbox's URL. */
  apiUrl: string;
  /** SUNAT's token host: `https://api-seguridad.sunat.gob.pe`, or the sandbox's URL. */
  authUrl: string;
  /** Calls in flight per clientId. @default 5 */
  concurrency?: number;
  /** One call. @default 10000 */
  timeoutMs?: number;
  /** The first wait after a 5xx, 429 or time-out; then doubling, at most 30 s. @default 1000 */
  retryBaseMs?: number | undefined;
  /** The longest Retry-After honoured. @default 60000 */
  retryAfterMaxMs?: number | undefined;
  /** A fleet's Redis (REDIS_URL): the pace per clientId is then the fleet's, not this instance's. */
  redis?: Redis | Cluster | undefined;
  /** Told of every attempt's outcome (for /metrics). */
  onAttempt?: ((call: 'token' | 'receipt', outcome: 'answered' | 'throttled' | 'unavailable') => void) | undefined;
}

/** An answer SUNAT gave: its status and its body, read as JSON when it is JSON. */
export interface SunatAnswer {
  status: number;
  body: unknown;
  retryAfterMs: number | undefined;
}

/** A call is tried at most this many times, within this long (contract). */
const MAX_ATTEMPTS = 5;
const MAX_SPAN_MS = 120_000;
const MAX_WAIT_MS = 30_000;
/** The clientIds whose pace is kept. */
const MAX_CLIENTS = 10_000;
/** A fleet place outlives its call by this much before it is taken back (its holder died). */
const LEASE_MARGIN_MS = 5_000;
/** How long a call waits for Redis still connecting before it keeps this instance's pace alone. */
const CONNECTING_MS = 2_000;
/** How often a call waiting for a fleet place looks again. */
const FLEET_RETRY_MS = 25;
/** A body past this is no answer of SUNAT's. */
const MAX_BODY = 1024 * 1024;

/**
 * One clientId's calls to SUNAT: at most `concurrency` in flight (a bulkhead, its queue unbounded:
 * the callers' own limits bound it), each retried on a 5xx, a 429 or a time-out with growing waits.
 * Any other answer, a 4xx included, is the caller's to read.
 */
export class SunatCalls {
  readonly #agent: Dispatcher;
  /** A pace per clientId; made-up clientIds are many, so only the most recent are kept (an idle one holds nothing). */
  readonly #paces = new LRUCache<string, BulkheadPolicy>({ max: MAX_CLIENTS });
  readonly #retry: RetryPolicy;
  readonly #options: Required<Omit<SunatCallOptions, 'redis' | 'onAttempt'>>;
  readonly #onAttempt: SunatCallOptions['onAttempt'];
  readonly #redis: Redis | Cluster | undefined;

  constructor(options: SunatCallOptions) {
    this.#options = {
      apiUrl: options.apiUrl,
      authUrl: options.authUrl,
      concurrency: options.concurrency ?? 5,
      timeoutMs: options.timeoutMs ?? 10_000,
      retryBaseMs: options.retryBaseMs ?? 1000,
      retryAfterMaxMs: options.retryAfterMaxMs ?? 60_000,
    };
    this.#redis = options.redis;
    this.#onAttempt = options.onAttempt;
    const { timeoutMs, retryBaseMs, retryAfterMaxMs } = this.#options;
    this.#agent = new Agent({ headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connectTimeout: timeoutMs });
    this.#retry = retry(
      handleWhen((error) => error instanceof SunatUnavailable),
      {
        maxAttempts: MAX_ATTEMPTS - 1,
        backoff: new DelegateBackoff((context) => {
          const grown = Math.min(MAX_WAIT_MS, retryBaseMs * 2 ** (context.attempt - 1));
          const error = 'error' in context.result ? context.result.error : undefined;
          const asked = error instanceof SunatUnavailable ? Math.min(error.retryAfterMs ?? 0, retryAfterMaxMs) : 0;
          return Math.max(grown, asked);
        }),
      },
    );
  }

  /**
   * One call for `clientId`: paced with the others of that clientId, retried while SUNAT cannot answer. `init.signal`
   * aborted (a job cancelled): a call still waiting for its place is never made, and one under way is dropped.
   */
  async call(
    clientId: string,
    host: 'api' | 'auth',
    path: string,
    init: { headers: Record<string, string>; body: string; signal?: AbortSignal | undefined },
  ): Promise<SunatAnswer> {
    let pace = this.#paces.get(clientId);
    if (!pace) this.#paces.set(clientId, (pace = bulkhead(this.#options.concurrency, Number.MAX_SAFE_INTEGER)));
    const started = Date.now();
    const base = host === 'api' ? this.#options.apiUrl : this.#options.authUrl;
    const { signal } = init;
    return this.#retry.execute(({ attempt }) => {
      if (attempt > 0 && Date.now() - started > MAX_SPAN_MS) throw new SunatUnavailable('tried for two minutes');
      // The signal is read once the place is ours, not handed to the bulkhead: cockatiel's queue stalls when a
      // waiting call it takes out was aborted (it does not take the next one).
      return pace.execute(() =>
        this.#fleetPaced(clientId, () => this.#told(host === 'api' ? 'receipt' : 'token', this.#once(new URL(path, base), init)), signal),
      );
    }, signal);
  }

  /**
   * With a fleet's Redis, one of the fleet's `concurrency` places of this clientId is held for the call (a semaphore
   * with a lease, so a killed instance's places come back). Redis away: this instance's own pace alone, said by nobody.
   */
  async #fleetPaced<T>(clientId: string, work: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    signal?.throwIfAborted();
    if (!this.#redis) return work();
    // Still connecting (a gateway's first calls): waited for a little, or the first calls would all skip the fleet's pace.
    if (this.#redis.status === 'connecting' || this.#redis.status === 'wait' || this.#redis.status === 'connect')
      await readyWithin(this.#redis, CONNECTING_MS);
    const { concurrency, timeoutMs } = this.#options;
    const place = new Semaphore(this.#redis, `{sunat}:pace:${createHash('sha256').update(clientId).digest('hex')}`, concurrency, {
      lockTimeout: timeoutMs + LEASE_MARGIN_MS,
      acquireTimeout: MAX_SPAN_MS,
      retryInterval: FLEET_RETRY_MS,
      onLockLost: () => undefined,
    });
    try {
      await place.acquire();
      signal?.throwIfAborted();
    } catch (error) {
      if (signal?.aborted) {
        await place.release().catch(() => undefined);
        throw signal.reason;
      }
      if (error instanceof TimeoutError) throw new SunatUnavailable("waited two minutes for a place in the fleet's pace");
      return work();
    }
    try {
      return await work();
    } finally {
      await place.release().catch(() => undefined);
    }
  }

  /** An attempt, its outcome told. */
  async #told(call: 'token' | 'receipt', attempt: Promise<SunatAnswer>): Promise<SunatAnswer> {
    try {
      const answer = await attempt;
      this.#onAttempt?.(call, 'answered');
      return answer;
    } catch (error) {
      if (error instanceof SunatUnavailable) this.#onAttempt?.(call, error.reason === 'HTTP 429' ? 'throttled' : 'unavailable');
      throw error;
    }
  }

  async #once(url: URL, init: { headers: Record<string, string>; body: string; signal?: AbortSignal | undefined }): Promise<SunatAnswer> {
    let answer: Dispatcher.ResponseData;
    try {
      const { headers, body, signal } = init;
      answer = await request(url, { method: 'POST', headers, body, signal, dispatcher: this.#agent });
    } catch (error) {
      // Dropped on purpose: no outage of SUNAT's, and nothing to try again.
      if (init.signal?.aborted) throw init.signal.reason;
      throw new SunatUnavailable(error instanceof Error ? error.message : String(error));
    }
    const { statusCode: status, headers, body } = answer;
    const retryAfterMs = retryAfterOf(headers['retry-after']);
    if (status === 429 || status >= 500) {
      await body.dump().catch(() => undefined);
      throw new SunatUnavailable(`HTTP ${status}`, retryAfterMs);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        if ((size += chunk.length) > MAX_BODY) throw new Error('too large');
      }
    } catch (error) {
      body.destroy();
      throw new SunatUnavailable(`the answer was cut short: ${error instanceof Error ? error.message : String(error)}`);
    }
    const text = Buffer.concat(chunks, size).toString('utf8');
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: kept as text, for the caller to read as a refusal or an unreadable answer.
    }
    return { status, body: parsed, retryAfterMs };
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}

/** Resolves when `redis` is ready, or after `ms` (then the call goes on this instance's pace alone). */
function readyWithin(redis: Redis | Cluster, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    redis.once('ready', done);
  });
}

/** A Retry-After in ms: seconds or an HTTP date. */
function retryAfterOf(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
