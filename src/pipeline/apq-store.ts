import { LRUCache } from 'lru-cache';
import { DEFAULTS, type Config } from '../config.js';
import type { RedisLink } from '../data/redis.js';

/** Where automatic persisted queries are kept, by hash: the interface @graphql-yoga/plugin-apq asks for. */
export interface ApqStore {
  get(hash: string): Promise<string | null | undefined> | string | null | undefined;
  set(hash: string, query: string): Promise<unknown> | unknown;
}

/** How many documents, and how many bytes of them, a store keeps: anyone, token or not, can register one. */
export interface ApqBounds {
  /** @default APQ_MAX_ENTRIES' default */
  maxEntries: number;
  /** UTF-8 bytes of the documents together. @default APQ_MAX_BYTES' default */
  maxBytes: number;
}

const DEFAULT_BOUNDS: ApqBounds = DEFAULTS.persistedQueries;

/** This process's store, an LRU bounded in entries and bytes. */
export function memoryApqStore(bounds: ApqBounds = DEFAULT_BOUNDS): ApqStore {
  const cache = new LRUCache<string, string>({
    max: bounds.maxEntries,
    maxSize: bounds.maxBytes,
    sizeCalculation: (query) => Math.max(1, Buffer.byteLength(query)),
  });
  return { get: (hash) => cache.get(hash), set: (hash, query) => void cache.set(hash, query) };
}

/** Keys in one hash slot (a Redis Cluster needs that of the keys one script touches), apart from the lookups'. */
const PREFIX = 'gw2:{apq}:';
const DOCS = `${PREFIX}docs`;
const EXPIRY = `${PREFIX}expiry`;
const BYTES = `${PREFIX}bytes`;

/**
 * Keeps a document within the bounds, in one step: drops the expired ones, then the oldest
 * until the new one fits, then stores it with its expiry. Documents live in one hash, their
 * expiries in a sorted set, their total size in a counter, so the whole is bounded however
 * many are sent. Returns 0 when the document alone is over the bytes bound.
 */
const SET = `local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local hash, query, ttl, maxEntries, maxBytes = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local bytes = tonumber(redis.call('get', KEYS[3]) or '0')
local function drop(h)
  bytes = bytes - redis.call('hstrlen', KEYS[1], h)
  redis.call('hdel', KEYS[1], h)
  redis.call('zrem', KEYS[2], h)
end
for _, h in ipairs(redis.call('zrangebyscore', KEYS[2], '-inf', now)) do drop(h) end
local size = string.len(query)
if size > maxBytes then redis.call('set', KEYS[3], bytes) return 0 end
if redis.call('hexists', KEYS[1], hash) == 1 then drop(hash) end
local count = redis.call('zcard', KEYS[2])
while count > 0 and (count >= maxEntries or bytes + size > maxBytes) do
  drop(redis.call('zrange', KEYS[2], 0, 0)[1])
  count = count - 1
end
redis.call('hset', KEYS[1], hash, query)
redis.call('zadd', KEYS[2], now + ttl, hash)
redis.call('set', KEYS[3], bytes + size)
return 1`;

/** The document, while it has not expired. */
const GET = `local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expires = redis.call('zscore', KEYS[2], ARGV[1])
if not expires or tonumber(expires) <= now then return false end
return redis.call('hget', KEYS[1], ARGV[1])`;

/** How long a document is kept after it was registered. */
const APQ_TTL_MS = 24 * 3600_000;

/**
 * Shared by every instance through Redis, bounded there as in memory, each entry for a day. A
 * Redis that is down or full answers "not found", so the client sends the document again: it
 * never fails a request.
 */
export function redisApqStore(link: Pick<RedisLink, 'send' | 'problem'>, bounds: ApqBounds, ttlMs = APQ_TTL_MS): ApqStore {
  const failed = (error: Error) => {
    link.problem('apq', error);
    return null;
  };
  return {
    get: (hash) => (link.send((redis) => redis.eval(GET, 2, DOCS, EXPIRY, hash)) as Promise<string | null>).catch(failed),
    set: (hash, query) =>
      link.send((redis) => redis.eval(SET, 3, DOCS, EXPIRY, BYTES, hash, query, ttlMs, bounds.maxEntries, bounds.maxBytes)).catch(failed),
  };
}

/** Where registered persisted queries are kept: Redis when there is one (bounded apart from the lookups), else memory. */
export function createApqStore(config: Config, link: RedisLink | undefined): ApqStore {
  return link ? redisApqStore(link, config.persistedQueries) : memoryApqStore(config.persistedQueries);
}
