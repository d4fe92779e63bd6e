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
 * Fresh loaders for one request (their caches hold the caller's answers), each made on first use. The REST API has no batch
 * lookup: a batch is one call per key, at most `concurrency` of this request's in flight across all loaders.
 */
export function createLoaders(lookups: CachedLookups, call: LookupCaller, concurrency: number): RequestLoaders {
  const loaders = new Map<LookupOp, DataLoader<string, Received>>();
  const run = semaphore(concurrency);
  function of<Op extends LookupOp>(op: Op): DataLoader<string, Received<RecordOf<Op>>>;
  function of(op: LookupOp): DataLoader<string, Received> {
    let loader = loaders.get(op);
    if (loader) return loader;
    // Async: a lookup that throws rejects, failing its key alone.
    const fetchOne = async (key: string): Promise<Received> => lookups.lookup(op, key, call);
    loader = new DataLoader<string, Received>((keys) => Promise.all(keys.map((key) => run(fetchOne, key))));
    loaders.set(op, loader);
    return loader;
  }
  return { of, fromRegister: (ruc, op) => lookups.fromRegister(ruc, op, call) };
}

/**
 * At most `limit` in flight, the rest waiting in order; a failure is that key's Error, failing no batch-mate. Not p-limit,
 * whose queue and async-context binding were a measured cost (docs/performance.md).
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
    return fn(key).then(
      (value) => (release(), value),
      (reason: unknown) => (release(), reason instanceof Error ? reason : new Error(String(reason))),
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
