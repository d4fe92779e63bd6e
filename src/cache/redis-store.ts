import { Redis } from 'ioredis';
import type { CacheStore } from './store.js';

export interface RedisStoreOptions {
  url: string;
  /** Longest wait for one GET or SET before it counts as a miss. @default 250 */
  commandTimeoutMs?: number;
  /** Told once when the store goes away and once when it is back. */
  onStateChange?: (state: 'up' | 'down', error?: Error) => void;
}

/**
 * Redis shared by every instance of the gateway (ioredis). While Redis is away, commands
 * fail at once (no offline queue) and count as misses; ioredis keeps reconnecting with a
 * backoff, so the cache comes back by itself.
 */
export class RedisStore implements CacheStore {
  readonly kind = 'redis';
  readonly #redis: Redis;
  #state: 'unknown' | 'up' | 'down' = 'unknown';
  #closing = false;

  constructor(options: RedisStoreOptions) {
    this.#redis = new Redis(options.url, {
      // A lookup must never wait on a Redis that is not there: fail fast, go upstream.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? 250,
      connectTimeout: 2000,
      // Reconnect forever, at most every 2 s.
      retryStrategy: (times) => Math.min(times * 100, 2000),
      lazyConnect: false,
    });
    // Without an 'error' listener ioredis would crash the process; with it, one log line per change.
    this.#redis.on('ready', () => {
      if (this.#state === 'up') return;
      this.#state = 'up';
      options.onStateChange?.('up');
    });
    const down = (error?: Error) => {
      if (this.#state === 'down' || this.#closing) return;
      this.#state = 'down';
      options.onStateChange?.('down', error);
    };
    this.#redis.on('error', down);
    this.#redis.on('close', () => down());
  }

  async get(key: string): Promise<string | undefined> {
    try {
      return (await this.#redis.get(key)) ?? undefined;
    } catch {
      return undefined;
    }
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    try {
      await this.#redis.set(key, value, 'PX', Math.max(1, Math.round(ttlMs)));
    } catch {
      // A lost write costs a later upstream call, nothing more.
    }
  }

  healthy(): boolean {
    return this.#redis.status === 'ready';
  }

  async close(): Promise<void> {
    this.#closing = true;
    this.#redis.disconnect();
  }
}
