import { LRUCache } from 'lru-cache';

/**
 * Where lookup answers are kept: a string per key with a time to live. Every method
 * resolves; a store that cannot answer says "miss" (get) or does nothing (set), so that
 * an outage of the store costs a call to the upstream, never an error.
 */
export interface CacheStore {
  readonly kind: 'memory' | 'redis';
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
  /** Whether the store can serve now (for readiness checks). */
  healthy(): boolean;
  close(): Promise<void>;
}

export interface MemoryStoreOptions {
  /** @default 10000 */
  maxEntries?: number;
  /** Bytes of keys and values together, counted as UTF-16 (2 bytes a character). @default 52428800 */
  maxBytes?: number;
}

/** The embedded default: an LRU bounded by entries and by bytes, per process. */
export class MemoryStore implements CacheStore {
  readonly kind = 'memory';
  readonly #lru: LRUCache<string, string>;

  constructor(options: MemoryStoreOptions = {}) {
    this.#lru = new LRUCache<string, string>({
      max: options.maxEntries ?? 10_000,
      maxSize: options.maxBytes ?? 50 * 1024 * 1024,
      sizeCalculation: (value, key) => 2 * (value.length + key.length),
      // Expired entries are dropped when read, and crowded out by the LRU otherwise:
      // no timer per entry.
      ttlAutopurge: false,
    });
  }

  async get(key: string): Promise<string | undefined> {
    return this.#lru.get(key);
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    this.#lru.set(key, value, { ttl: ttlMs });
  }

  healthy(): boolean {
    return true;
  }

  /** Entries held now, for tests and metrics. */
  get size(): number {
    return this.#lru.size;
  }

  async close(): Promise<void> {
    this.#lru.clear();
  }
}
