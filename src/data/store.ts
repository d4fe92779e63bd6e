import { DEFAULTS } from '../config.js';
import { LRUCache } from 'lru-cache';

/**
 * Keys of this entry format (lookups, rejected tokens, budgets); a new format takes a new prefix,
 * so no version reads another's. The rest of a key is one Redis Cluster hash tag, so that its
 * lock is in the same slot.
 */
export const KEY_PREFIX = 'gw4:';

/**
 * What a lookup is told when it asks for a key:
 * - `hit`: here is the answer (kept from before, or handed over by the call it waited for);
 * - `wait`: another caller's call for the same key is in flight; `next` settles with its
 *   answer, or with the lead if that caller gives up or is gone;
 * - `lead`: nobody has it: make the call, then settle the lease.
 */
export type Claim = { kind: 'hit'; entry: string } | { kind: 'wait'; next: Promise<Claim> } | { kind: 'lead'; lease: Lease };

/** The duty of the caller that makes the call: hand its outcome over, or give the call up. */
export interface Lease {
  /** Hands `entry` to every waiter and keeps it for `ttlMs` (0: hand it over, keep nothing). */
  settle(entry: string, ttlMs: number): void;
  /** No outcome to share: the next waiter, if any, takes the lead. */
  abandon(): void;
}

export interface ClaimOptions {
  /** Read a kept answer (false for `Cache-Control: no-cache`, or with the cache off). */
  read: boolean;
}

/**
 * Where lookups meet: kept answers and calls in flight, so that one lookup is paid for once.
 * Implemented for one process (MemoryStore) and for instances sharing Redis (RedisStore,
 * behind each process's LocalFirstStore). Every method
 * resolves: a store that cannot answer says `lead`, so an outage costs a call, never an error.
 */
export interface SharedLookupStore {
  readonly kind: 'memory' | 'redis';
  claim(key: string, options: ClaimOptions): Promise<Claim>;
  /** A kept entry, read without joining or leading anything (undefined when none, or when the store cannot answer). */
  peek(key: string): Promise<string | undefined>;
  /** Keeps `entry` for `ttlMs`, outside any call in flight; a lost write costs nothing but a later call. */
  keep(key: string, entry: string, ttlMs: number): void;
  /** Whether the store can serve now (for readiness checks). */
  healthy(): boolean;
  close(): Promise<void>;
}

export interface MemoryStoreOptions {
  /** @default CACHE_MAX_ENTRIES' default */
  maxEntries?: number;
  /** Bytes of keys and values together, counted as UTF-16 (2 bytes a character). @default CACHE_MAX_BYTES' default */
  maxBytes?: number;
  /** Join calls in flight (COALESCE); off, every miss leads its own call. @default true */
  coalesce?: boolean;
}

/** Callers waiting on one call in flight, in arrival order. */
type Flight = ((claim: Claim) => void)[];

/** One process's store: an LRU bounded by entries and by bytes, and the calls in flight. */
export class MemoryStore implements SharedLookupStore {
  readonly kind = 'memory';
  readonly #lru: LRUCache<string, string>;
  readonly #flights = new Map<string, Flight>();
  readonly #coalesce: boolean;

  constructor(options: MemoryStoreOptions = {}) {
    this.#coalesce = options.coalesce ?? true;
    this.#lru = new LRUCache<string, string>({
      max: options.maxEntries ?? DEFAULTS.cache.maxEntries,
      maxSize: options.maxBytes ?? DEFAULTS.cache.maxBytes,
      sizeCalculation: (value, key) => 2 * (value.length + key.length),
      // Expired entries are dropped when read, and crowded out by the LRU otherwise: no timer per entry.
      ttlAutopurge: false,
    });
  }

  claim(key: string, options: ClaimOptions): Promise<Claim> {
    return Promise.resolve(this.claimNow(key, options));
  }

  peek(key: string): Promise<string | undefined> {
    return Promise.resolve(this.#lru.get(key));
  }

  keep(key: string, entry: string, ttlMs: number): void {
    if (ttlMs > 0) this.#lru.set(key, entry, { ttl: ttlMs });
  }

  /** The claim, answered at once (LocalFirstStore's calls in flight take it so). */
  claimNow(key: string, options: ClaimOptions): Claim {
    if (options.read) {
      const entry = this.#lru.get(key);
      if (entry !== undefined) return { kind: 'hit', entry };
    }
    if (!this.#coalesce) return { kind: 'lead', lease: this.#lease(key, undefined) };
    const flight = this.#flights.get(key);
    if (flight) return { kind: 'wait', next: new Promise<Claim>((resolve) => flight.push(resolve)) };
    const started: Flight = [];
    this.#flights.set(key, started);
    return { kind: 'lead', lease: this.#lease(key, started) };
  }

  #lease(key: string, flight: Flight | undefined): Lease {
    let done = false;
    return {
      settle: (entry, ttlMs) => {
        if (done) return;
        done = true;
        if (ttlMs > 0) this.#lru.set(key, entry, { ttl: ttlMs });
        if (!flight) return;
        this.#flights.delete(key);
        for (const waiter of flight) waiter({ kind: 'hit', entry });
      },
      abandon: () => {
        if (done) return;
        done = true;
        if (!flight) return;
        const next = flight.shift();
        if (next) next({ kind: 'lead', lease: this.#lease(key, flight) });
        else this.#flights.delete(key);
      },
    };
  }

  healthy(): boolean {
    return true;
  }

  /** Entries kept now, for tests and metrics. */
  get size(): number {
    return this.#lru.size;
  }

  async close(): Promise<void> {
    this.#lru.clear();
  }
}
