import type { CircuitBreakerPolicy } from 'cockatiel';
import type { Origin } from './origin.js';
import type { Reader } from './reader.js';
import { LOOKUPS, type Lookup, type LookupOp, type RecordOf } from './lookups.js';

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

/** A lookup's call for one key, from its row. */
export function lookupCall<Op extends LookupOp>(op: Op, key: string): RestCall<RecordOf<Op>> {
  const row: Lookup<RecordOf<Op>> = LOOKUPS[op];
  const isOther = row.isOther;
  return {
    path: row.path,
    body: row.body(key),
    read: row.read(key),
    cost: row.price,
    // Assigned, not spread in: a spread inside the literal takes V8's slow path, on every call.
    isOther: isOther && ((record: RecordOf<Op>) => isOther(record, key)),
  };
}
