import DataLoader from 'dataloader';
import type { LookupCaller, CachedLookups, Received } from './lookups.js';
import type { LookupOp, RecordOf } from '../upstream/lookups.js';
import type { RucRecord } from '../upstream/schemas.js';

export interface RequestLoaders {
  /** The loader of one lookup (a row of src/upstream/lookups.ts), by its checked key: `of('dni')` serves every way a person is reached. */
  of<Op extends LookupOp>(op: Op): DataLoader<string, Received<RecordOf<Op>>>;
  /** A RUC's record from SUNAT's register kept by the gateway, standing in for `op`'s lookup (a person by the RUC their DNI gives). */
  fromRegister(ruc: string, op: LookupOp): Received<RucRecord> | undefined;
}

/**
 * Fresh loaders for one request: their caches hold the caller's answers, so they
 * must never outlive the request or serve another token. Keys arrive validated and trimmed.
 * `call` carries the token, its cache key, `no-cache`, and this request's observers.
 * Below the loaders, `CachedLookups` shares answers across requests (cache and calls in flight).
 *
 * The REST API has no batch lookup, so a batch becomes one call per key; `concurrency`
 * bounds how many of this request's calls are in flight at once, across all the loaders.
 */
export function createLoaders(lookups: CachedLookups, call: LookupCaller, concurrency: number): RequestLoaders {
  return new LazyLoaders(lookups, call, semaphore(concurrency));
}

/** Each loader made on first use. */
class LazyLoaders implements RequestLoaders {
  readonly #loaders = new Map<LookupOp, DataLoader<string, Received>>();

  constructor(
    private readonly lookups: CachedLookups,
    private readonly call: LookupCaller,
    private readonly run: ReturnType<typeof semaphore>,
  ) {}

  of<Op extends LookupOp>(op: Op): DataLoader<string, Received<RecordOf<Op>>>;
  of(op: LookupOp): DataLoader<string, Received> {
    let loader = this.#loaders.get(op);
    if (loader) return loader;
    const { lookups, call, run } = this;
    const fetchOne = (key: string): Promise<Received> => lookups.lookup(op, key, call);
    loader = new DataLoader<string, Received>((keys) => Promise.all(keys.map((key) => run(fetchOne, key))));
    this.#loaders.set(op, loader);
    return loader;
  }

  fromRegister(ruc: string, op: LookupOp): Received<RucRecord> | undefined {
    return this.lookups.fromRegister(ruc, op, this.call);
  }
}

/**
 * At most `limit` of the functions it runs in flight at once; the rest wait in order, and a
 * finishing one hands its slot straight to the first waiting, so the bound is never passed.
 * What it returns never rejects: a failure comes back as that key's Error, so that it does
 * not fail its batch-mates (DataLoader hands each key its own value or Error).
 * Written here rather than with p-limit, whose queue and async-context binding per request
 * were a measured cost (docs/performance.md); the uncontended path adds one promise reaction.
 */
function semaphore(limit: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else active--;
  };
  const start = <T>(fn: (key: string) => Promise<T>, key: string): Promise<T | Error> => {
    let promise: Promise<T>;
    try {
      promise = fn(key);
    } catch (error) {
      promise = Promise.reject(error);
    }
    return promise.then(
      (value) => {
        release();
        return value;
      },
      (reason: unknown) => {
        release();
        return toError(reason);
      },
    );
  };
  // The key is handed over rather than closed over: no closure per key.
  return <T>(fn: (key: string) => Promise<T>, key: string): Promise<T | Error> => {
    if (active < limit) {
      active++;
      return start(fn, key);
    }
    return new Promise<T | Error>((resolve) => waiting.push(() => void start(fn, key).then(resolve)));
  };
}

function toError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
