import type { CircuitBreakerPolicy } from 'cockatiel';
import type { Origin } from './origin.js';
import type { Reader } from './reader.js';

/** Where a call goes: an origin and its breaker. */
export interface Route {
  name: 'primary' | 'fallback';
  origin: Origin;
  breaker: CircuitBreakerPolicy;
}

/** One REST call: where, what, how to read the answer, and its plan cost. */
export interface RestCall<T> {
  path: string;
  body: unknown;
  read: Reader<T>;
  cost: number;
  /** Values the body carries that no answer, log line or trace may show (SOL credentials). */
  secrets?: readonly string[] | undefined;
  /** A lookup's check that the record is the document asked for. */
  isOther?: (record: T) => boolean;
}
