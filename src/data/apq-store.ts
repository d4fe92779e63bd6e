import { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';

/** Where automatic persisted queries are kept, by hash: the interface @graphql-yoga/plugin-apq asks for. */
export interface ApqStore {
  get(hash: string): Promise<string | null | undefined> | string | null | undefined;
  set(hash: string, query: string): Promise<unknown> | unknown;
  close?(): Promise<void>;
}

/** Text of the documents kept, in characters: any caller can register one, token or not. */
export const APQ_MAX_CHARS = 4 * 1024 * 1024;

/** This process's store, bounded by the documents' size. */
export function memoryApqStore(maxChars = APQ_MAX_CHARS): ApqStore {
  const cache = new LRUCache<string, string>({ max: 10_000, maxSize: maxChars, sizeCalculation: (query) => Math.max(1, query.length) });
  return { get: (hash) => cache.get(hash), set: (hash, query) => void cache.set(hash, query) };
}

/**
 * Shared by every instance through Redis, each entry for a day. A Redis that is down answers
 * "not found", so the client sends the document again: it never fails a request.
 */
export function redisApqStore(url: string, ttlSeconds = 24 * 3600): ApqStore {
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 2000, commandTimeout: 500 });
  redis.on('error', () => undefined); // the lookup store logs Redis's state; this one only falls back
  const key = (hash: string) => `gw2:apq:${hash}`;
  return {
    get: (hash) => redis.get(key(hash)).catch(() => null),
    set: (hash, query) => redis.set(key(hash), query, 'EX', ttlSeconds).catch(() => undefined),
    close: async () => void (await redis.quit().catch(() => redis.disconnect())),
  };
}
