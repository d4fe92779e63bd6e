import DataLoader from 'dataloader';
import pLimit from 'p-limit';
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
  const limit = pLimit(concurrency);
  const loaderOf = <V>(fetchOne: (key: string) => Promise<V>) =>
    new DataLoader<string, V>(async (keys) => {
      // allSettled: one key's failure must not fail its batch-mates.
      const settled = await Promise.allSettled(keys.map((key) => limit(() => fetchOne(key))));
      return settled.map((s) => (s.status === 'fulfilled' ? s.value : toError(s.reason)));
    });
  return {
    ruc: loaderOf((ruc) => lookups.ruc(ruc, call)),
    rucSunat: loaderOf((ruc) => lookups.rucSunat(ruc, call)),
    licencia: loaderOf((num) => lookups.licencia(num, call)),
  };
}

function toError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
