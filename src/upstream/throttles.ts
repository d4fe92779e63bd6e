import { LRUCache } from 'lru-cache';
import { UpstreamHttpError } from './errors.js';

/** A throttled caller: until when (performance.now() time), and the refusal that said so. */
interface Throttle {
  until: number;
  refusal: UpstreamHttpError;
}

/**
 * The callers (tokens, by their hash) the upstream throttles now, as this process saw it: a 429
 * that is not about the plan's quota, with its `Retry-After`. A throttled caller's new calls
 * wait it out without a call where that fits their deadline, or are refused at once.
 */
export class Throttles {
  readonly #byCaller = new LRUCache<string, Throttle>({ max: 10_000, ttlAutopurge: false });

  /** Takes note of a refusal; anything but throttling is ignored. */
  note(caller: string, error: unknown): void {
    if (!(error instanceof UpstreamHttpError) || error.reason !== 'rate_limited') return;
    // Every throttling 429 carries the wait honoured (src/upstream/messages.ts bounds it).
    const ms = error.retryAfterMs ?? 0;
    if (ms <= 0) return;
    this.#byCaller.set(caller, { until: performance.now() + ms, refusal: error }, { ttl: ms });
  }

  /**
   * For a call of `caller` to `path` that must be over by `deadlineAt`: nothing when it is not
   * throttled, how long to wait, or the refusal to answer at once (with the seconds left) when
   * the wait and at least a second for the call do not fit.
   */
  before(caller: string, path: string, deadlineAt: number): { waitMs: number } | { refusal: UpstreamHttpError } | undefined {
    const throttled = this.#byCaller.get(caller);
    if (!throttled) return undefined;
    const now = performance.now();
    const waitMs = throttled.until - now;
    if (waitMs <= 0) return undefined;
    if (waitMs + 1000 > deadlineAt - now) {
      return { refusal: UpstreamHttpError.repeated(throttled.refusal, path, waitMs) };
    }
    return { waitMs };
  }
}
