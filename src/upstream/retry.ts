import { setTimeout as sleep } from 'node:timers/promises';
import { isOriginFailure } from './breaker.js';
import type { UpstreamUnavailableError } from './errors.js';

/**
 * Worth another try, at no risk of paying twice: the origin is unwell, and the call certainly
 * went unprocessed (never sent, or the upstream's own "may be repeated"). A time-out or a reset
 * after sending may have been billed where it arrived: asking again is the caller's choice.
 */
export const isRetryable = (error: unknown) => isOriginFailure(error) && (error as UpstreamUnavailableError).unprocessed;

export interface RetryOptions {
  /** Retries after the first attempt. */
  retries: number;
  /** When all attempts and backoffs must be over, in `performance.now()` time. */
  deadlineAt: number;
  isRetryable: (error: unknown) => boolean;
  /** First backoff ceiling; doubles per retry. @default 100 */
  baseDelayMs?: number;
  /** @default 2000 */
  maxDelayMs?: number;
}

/**
 * After a first attempt failed with `firstError`, runs `attempt(2)`, `attempt(3)`, ... until
 * one succeeds, fails for good, or the retries or the time run out (the caller bounds each
 * attempt's own call by what is left of `deadlineAt`). The caller makes the first attempt
 * itself, so that a lookup that succeeds at once (nearly all) pays for none of this.
 * Backoff is exponential with full jitter (a random delay between 0 and the ceiling), so
 * that many gateways retrying one failure do not come back in step.
 *
 * Written here rather than with cockatiel's retry policy because cockatiel's backoff knows
 * nothing of a deadline: it would wait out a delay that ends past it, overshooting by up to
 * `maxDelayMs`. Here the deadline is a number, so it costs no timer of its own.
 */
export async function withRetries<T>(options: RetryOptions, firstError: unknown, attempt: (n: number) => Promise<T>): Promise<T> {
  const base = options.baseDelayMs ?? 100;
  const max = options.maxDelayMs ?? 2000;
  let error = firstError;
  for (let n = 1; ; n++) {
    const left = options.deadlineAt - performance.now();
    if (n > options.retries || !options.isRetryable(error) || left <= 0) throw error;
    const delay = Math.random() * Math.min(max, base * 2 ** (n - 1));
    // A backoff that would end past the deadline is not worth waiting for.
    if (delay >= left) throw error;
    await sleep(delay);
    try {
      return await attempt(n + 1);
    } catch (next) {
      error = next;
    }
  }
}
