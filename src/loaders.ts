import DataLoader from 'dataloader';
import type { LookupContext, Lookups } from './lookups.js';
import type { LicenciaRecord, RucRecord, RucSunatRecord } from './upstream/schemas.js';

export interface Loaders {
  /** POST /ruc by RUC. */
  ruc: DataLoader<string, RucRecord>;
  /** POST /ruc-sunat by RUC; serves both `contribuyenteDetalle` and `Contribuyente.detalle`. */
  rucSunat: DataLoader<string, RucSunatRecord>;
  /** POST /licencia-conducir by licence number. */
  licencia: DataLoader<string, LicenciaRecord>;
}

/**
 * Fresh loaders for one request: their caches hold the caller's answers, so they
 * must never outlive the request or serve another token. Keys arrive validated and trimmed.
 * `call` carries the token, its cache key, `no-cache`, and this request's observers.
 * Below the loaders, `Lookups` shares answers across requests (cache and calls in flight).
 *
 * The REST API has no batch lookup, so a batch becomes one call per key; `concurrency`
 * bounds how many of this request's calls are in flight at once, across all three loaders.
 */
export function createLoaders(lookups: Lookups, call: LookupContext, concurrency: number): Loaders {
  const run = semaphore(concurrency);
  const loaderOf = <V>(fetchOne: (key: string) => Promise<V>) =>
    new DataLoader<string, V>((keys) => Promise.all(keys.map((key) => run(() => fetchOne(key)))));
  let ruc: Loaders['ruc'] | undefined;
  let rucSunat: Loaders['rucSunat'] | undefined;
  let licencia: Loaders['licencia'] | undefined;
  return {
    get ruc() {
      return (ruc ??= loaderOf((key) => lookups.ruc(key, call)));
    },
    get rucSunat() {
      return (rucSunat ??= loaderOf((key) => lookups.rucSunat(key, call)));
    },
    get licencia() {
      return (licencia ??= loaderOf((key) => lookups.licencia(key, call)));
    },
  };
}

/**
 * At most `limit` of the functions it runs in flight at once; the rest wait in order, and a
 * finishing one hands its slot straight to the first waiting, so the bound is never passed.
 * What it returns never rejects: a failure comes back as that key's Error, so that it does
 * not fail its batch-mates (DataLoader hands each key its own value or Error).
 * Written here rather than with p-limit: a p-limit per request was about 1 % of a whole
 * operation's CPU under load (its queue and async-context binding), and this is all we need;
 * the uncontended path adds one promise reaction and no async frame.
 */
function semaphore(limit: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else active--;
  };
  const start = <T>(fn: () => Promise<T>): Promise<T | Error> => {
    let promise: Promise<T>;
    try {
      promise = fn();
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
  return <T>(fn: () => Promise<T>): Promise<T | Error> => {
    if (active < limit) {
      active++;
      return start(fn);
    }
    return new Promise<T | Error>((resolve) => waiting.push(() => void start(fn).then(resolve)));
  };
}

function toError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
