import { CircuitState, SamplingBreaker, circuitBreaker, handleWhen, type CircuitBreakerPolicy } from 'cockatiel';
import { REFUSED_WITHOUT_CALL, UpstreamUnavailableError } from './errors.js';
import { positive } from './origin.js';

export type BreakerState = 'closed' | 'open' | 'half-open';

/**
 * An origin's breaker: it opens when more than `failurePercent` of the origin's calls in the
 * last `windowMs` failed, once there were at least `minCalls` of them, and lets one probe
 * through after `cooldownMs`.
 */
export interface BreakerOptions {
  failurePercent: number;
  minCalls: number;
  windowMs: number;
  cooldownMs: number;
}

const STATE_NAMES: Record<CircuitState, BreakerState> = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half-open',
  [CircuitState.Isolated]: 'open',
};

/** The origin answered badly or not at all (not merely refused here without a call): counts toward the breaker. */
export const isOriginFailure = (error: unknown) => error instanceof UpstreamUnavailableError && !REFUSED_WITHOUT_CALL.has(error.reason);

export function stateName(state: CircuitState): BreakerState {
  return STATE_NAMES[state];
}

/**
 * cockatiel's failure-rate breaker over a sliding window with a minimum volume, as Hystrix has
 * it: a few failing lookups of one caller never refuse every other caller. Only failures that
 * say the origin is unwell count; a 4xx is the caller's, not the origin's.
 */
export function createBreaker(options: BreakerOptions, onChange: (state: BreakerState) => void): CircuitBreakerPolicy {
  const { failurePercent, minCalls, windowMs, cooldownMs } = options;
  if (!(failurePercent > 0 && failurePercent < 100)) {
    throw new TypeError(`breaker.failurePercent must be between 0 and 100, got ${failurePercent}`);
  }
  positive(minCalls, 'breaker.minCalls');
  positive(windowMs, 'breaker.windowMs');
  positive(cooldownMs, 'breaker.cooldownMs');
  const sampling = new SamplingBreaker({ threshold: failurePercent / 100, duration: windowMs, minimumRps: (minCalls * 1000) / windowMs });
  const breaker = circuitBreaker(handleWhen(isOriginFailure), { halfOpenAfter: cooldownMs, breaker: sampling });
  breaker.onStateChange((state) => onChange(STATE_NAMES[state]));
  return breaker;
}
