import DataLoader from 'dataloader';
import type { LookupCaller, CachedLookups, Received } from './lookups.js';
import type {
  DniRecord,
  EstablecimientosRecord,
  LicenciaRecord,
  RepresentantesRecord,
  RucRecord,
  RucSunatRecord,
  TipoDeCambioRecord,
} from '../upstream/schemas.js';

export interface RequestLoaders {
  /** POST /ruc by RUC. */
  ruc: DataLoader<string, Received<RucRecord>>;
  /** POST /ruc-sunat by RUC; serves both `contribuyenteDetalle` and `Contribuyente.detalle`. */
  rucSunat: DataLoader<string, Received<RucSunatRecord>>;
  /** POST /licencia-conducir by licence number. */
  licencia: DataLoader<string, Received<LicenciaRecord>>;
  /** POST /dni by DNI; serves `persona`, a licence's holder and a RUC 10's person alike. */
  dni: DataLoader<string, Received<DniRecord>>;
  /** POST /ruc-representantes and /ruc-establecimientos-anexos by RUC. */
  representantes: DataLoader<string, Received<RepresentantesRecord>>;
  establecimientos: DataLoader<string, Received<EstablecimientosRecord>>;
  /** POST /tipo-de-cambio by date (YYYY-MM-DD). */
  tipoDeCambio: DataLoader<string, Received<TipoDeCambioRecord>>;
  /** A RUC's record from SUNAT's register kept by the gateway, standing in for `op`'s lookup (a person by the RUC their DNI gives). */
  fromRegister(ruc: string, op: 'dni'): Received<RucRecord> | undefined;
}

/**
 * Fresh loaders for one request: their caches hold the caller's answers, so they
 * must never outlive the request or serve another token. Keys arrive validated and trimmed.
 * `call` carries the token, its cache key, `no-cache`, and this request's observers.
 * Below the loaders, `CachedLookups` shares answers across requests (cache and calls in flight).
 *
 * The REST API has no batch lookup, so a batch becomes one call per key; `concurrency`
 * bounds how many of this request's calls are in flight at once, across all three loaders.
 */
export function createLoaders(lookups: CachedLookups, call: LookupCaller, concurrency: number): RequestLoaders {
  return new LazyLoaders(lookups, call, semaphore(concurrency));
}

/**
 * Each loader made on first use. A class, not an object literal with getters: V8 builds such
 * a literal's accessors and hidden class anew each time, and with the literal the request's
 * objects were promoted to the old generation (docs/performance.md).
 */
class LazyLoaders implements RequestLoaders {
  #ruc: RequestLoaders['ruc'] | undefined;
  #rucSunat: RequestLoaders['rucSunat'] | undefined;
  #licencia: RequestLoaders['licencia'] | undefined;
  #dni: RequestLoaders['dni'] | undefined;
  #representantes: RequestLoaders['representantes'] | undefined;
  #establecimientos: RequestLoaders['establecimientos'] | undefined;
  #tipoDeCambio: RequestLoaders['tipoDeCambio'] | undefined;

  constructor(
    private readonly lookups: CachedLookups,
    private readonly call: LookupCaller,
    private readonly run: ReturnType<typeof semaphore>,
  ) {}

  get ruc(): RequestLoaders['ruc'] {
    return (this.#ruc ??= this.#loaderOf((key) => this.lookups.ruc(key, this.call)));
  }

  get rucSunat(): RequestLoaders['rucSunat'] {
    return (this.#rucSunat ??= this.#loaderOf((key) => this.lookups.rucSunat(key, this.call)));
  }

  get licencia(): RequestLoaders['licencia'] {
    return (this.#licencia ??= this.#loaderOf((key) => this.lookups.licencia(key, this.call)));
  }

  get dni(): RequestLoaders['dni'] {
    return (this.#dni ??= this.#loaderOf((key) => this.lookups.dni(key, this.call)));
  }

  get representantes(): RequestLoaders['representantes'] {
    return (this.#representantes ??= this.#loaderOf((key) => this.lookups.representantes(key, this.call)));
  }

  get establecimientos(): RequestLoaders['establecimientos'] {
    return (this.#establecimientos ??= this.#loaderOf((key) => this.lookups.establecimientos(key, this.call)));
  }

  get tipoDeCambio(): RequestLoaders['tipoDeCambio'] {
    return (this.#tipoDeCambio ??= this.#loaderOf((key) => this.lookups.tipoDeCambio(key, this.call)));
  }

  fromRegister(ruc: string, op: 'dni'): Received<RucRecord> | undefined {
    return this.lookups.fromRegister(ruc, op, this.call);
  }

  #loaderOf<V>(fetchOne: (key: string) => Promise<V>): DataLoader<string, V> {
    const run = this.run;
    return new DataLoader<string, V>((keys) => Promise.all(keys.map((key) => run(fetchOne, key))));
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
