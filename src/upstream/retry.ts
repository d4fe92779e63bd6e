import { setTimeout as sleep } from 'node:timers/promises';

export interface RetryOptions {
  /** Retries after the first attempt. */
  retries: number;
  /** Ends all attempts and backoffs together. */
  deadline: AbortSignal;
  isRetryable: (error: unknown) => boolean;
  /** First backoff ceiling; doubles per retry. @default 100 */
  baseDelayMs?: number;
  /** @default 2000 */
  maxDelayMs?: number;
}

/**
 * Runs `attempt` until it succeeds, fails for good, or runs out of retries or time.
 * Backoff is exponential with full jitter (a random delay between 0 and the ceiling), so
 * that many gateways retrying one failure do not come back in step.
 *
 * Written here rather than with cockatiel's retry policy because cockatiel's backoff sleep
 * does not listen to the abort signal: a deadline that fires mid-backoff would still wait
 * out the delay and start no further attempt, overshooting by up to `maxDelayMs`.
 */
export async function withRetries<T>(options: RetryOptions, attempt: (n: number) => Promise<T>): Promise<T> {
  const base = options.baseDelayMs ?? 100;
  const max = options.maxDelayMs ?? 2000;
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      if (n > options.retries || !options.isRetryable(error) || options.deadline.aborted) throw error;
      const delay = Math.random() * Math.min(max, base * 2 ** (n - 1));
      try {
        await sleep(delay, undefined, { signal: options.deadline });
      } catch {
        // The deadline fired while waiting: the last failure is the answer.
        throw error;
      }
    }
  }
}
