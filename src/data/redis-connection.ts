import { Cluster, Redis, type RedisOptions } from 'ioredis';

/** Where the shared stores live: one Redis, or a Redis Cluster reached through any of its nodes. */
export interface RedisTarget {
  url: string;
  /** `url` is one node of a Redis Cluster: the others are found from it. @default false */
  cluster?: boolean;
}

export type RedisConnection = Redis | Cluster;

/**
 * The one way the stores connect: a lookup must never wait on a Redis that is not there, so
 * commands fail at once while it is away (no offline queue, no retry) and time out after
 * `commandTimeoutMs`; the connection itself comes back by itself, at most every 2 s.
 */
export function connectRedis(target: RedisTarget, commandTimeoutMs: number): RedisConnection {
  const options: RedisOptions = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: commandTimeoutMs,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(times * 100, 2000),
  };
  if (!target.cluster) return new Redis(target.url, options);
  const { hostname, port, username, password, protocol } = new URL(target.url);
  const tls = protocol === 'rediss:';
  return new Cluster([{ host: hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(port || 6379) }], {
    redisOptions: {
      ...options,
      ...(username ? { username: decodeURIComponent(username) } : {}),
      ...(password ? { password: decodeURIComponent(password) } : {}),
      ...(tls ? { tls: {} } : {}),
    },
    // Over TLS the certificate names the host, not its address: connect by name (ioredis's advice for managed clusters).
    ...(tls ? { dnsLookup: (address: string, done: (error: null, address: string) => void) => done(null, address) } : {}),
    enableOfflineQueue: false,
    // When no node of the list answers, try again, at most every 2 s.
    clusterRetryStrategy: (times) => Math.min(times * 100, 2000),
    // After a failover, the new slot owners are learnt within 2 s even without a MOVED.
    slotsRefreshInterval: 2000,
    // Redis Cluster answers MOVED/ASK while slots move; follow them, a few times at most.
    maxRedirections: 4,
  });
}
