import { LRUCache } from 'lru-cache';
import type { Found, RedisCache } from './redis-cache.js';
import type { Config } from '../config.js';

/** Keys of this entry format: a new format takes a new prefix. The rest of a key is one Cluster hash tag, its lock's slot too. */
export const KEY_PREFIX = 'gw4:';

/** What a lead hands to those waiting, kept `ttlMs` (0: handed over only); undefined when it gave the call up. */
export type Handover = { entry: string; ttlMs: number } | undefined;

/** Bytes are counted as UTF-16 (2 a character); without `coalesce` (COALESCE=off) every miss makes its own call. */
export type LookupStoreOptions = Pick<Config['cache'], 'maxEntries' | 'maxBytes' | 'coalesce'> & { shared?: RedisCache | undefined };

/**
 * Where lookups meet: an LRU of answers and a map of this process's calls in flight, in front of Redis when instances share
 * one. Its own answers are read there only while Redis is in trouble (so one instance's refresh is what all see).
 */
export class LookupStore {
  readonly kind: 'memory' | 'redis';
  readonly #lru: LRUCache<string, string>;
  readonly #flights = new Map<string, Promise<Found | undefined>>();
  readonly #coalesce: boolean;
  readonly #shared: RedisCache | undefined;

  constructor({ maxEntries, maxBytes, coalesce, shared }: LookupStoreOptions) {
    this.#coalesce = coalesce;
    this.#shared = shared;
    this.kind = shared ? 'redis' : 'memory';
    this.#lru = new LRUCache<string, string>({
      max: maxEntries,
      maxSize: maxBytes,
      sizeCalculation: (value, key) => 2 * (value.length + key.length),
      // Expired entries are dropped when read, and crowded out by the LRU otherwise: no timer per entry.
      ttlAutopurge: false,
    });
  }

  /** The answer kept (when `read`) or that of the call in flight on any instance; else `lead` makes the call (undefined). */
  async once(key: string, read: boolean, lead: () => Promise<Handover>): Promise<Found | undefined> {
    // A caller that must not read the cache never joins one that may have.
    const flightKey = read ? key : `${key}#fresh`;
    for (;;) {
      const local = read && (!this.#shared || this.#shared.link.inTrouble()) ? this.#lru.get(key) : undefined;
      if (local !== undefined) return { entry: local, how: 'hit' };
      const flight = this.#coalesce ? this.#flights.get(flightKey) : undefined;
      if (flight) {
        const found = await flight;
        // As the lead found it: a kept answer (a hit, which may be past its time to live) or a call's.
        if (found) return found;
        continue;
      }
      let led = false;
      const flying = this.#fly(key, read, () => ((led = true), lead()));
      if (this.#coalesce) {
        this.#flights.set(flightKey, flying);
        void flying.finally(() => this.#flights.get(flightKey) === flying && this.#flights.delete(flightKey)).catch(() => undefined);
      }
      const found = await flying;
      return led ? undefined : found;
    }
  }

  async peek(key: string): Promise<string | undefined> {
    const entry = this.#lru.get(key);
    if (entry !== undefined || !this.#shared || this.#shared.link.inTrouble()) return entry;
    return this.#shared.get(key);
  }

  keep(key: string, entry: string, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.#lru.set(key, entry, { ttl: ttlMs });
    this.#shared?.set(key, entry, ttlMs);
  }

  healthy(): boolean {
    return this.#shared?.link.healthy() ?? true;
  }

  /** Never rejects: its promise is what this process's other callers wait on. */
  async #fly(key: string, read: boolean, lead: () => Promise<Handover>): Promise<Found | undefined> {
    const claim = this.#shared ? await this.#shared.claim(key, read) : {};
    if ('entry' in claim) return claim;
    if (claim.failed && read) {
      const local = this.#lru.get(key);
      if (local !== undefined) return { entry: local, how: 'hit' };
    }
    const handover = await lead().catch(() => undefined);
    if (handover && handover.ttlMs > 0) this.#lru.set(key, handover.entry, { ttl: handover.ttlMs });
    this.#shared?.finish(key, claim, handover);
    return handover && { entry: handover.entry, how: 'flight' };
  }
}
