import { Cluster, Redis, type RedisOptions } from 'ioredis';

/** The steps a Redis command serves, as metrics and logs name them. */
export type StoreOp = 'claim' | 'wait' | 'settle' | 'subscribe' | 'apq' | 'budget';

export interface RedisLinkOptions {
  url: string;
  /** `url` is one node of a Redis Cluster: the others are found from it. @default false */
  cluster?: boolean;
  /** How long after a failed command Redis counts as in trouble. @default 10000 */
  troubleMs?: number;
  /** Told once when Redis goes away and once when it is back. */
  onState?: (state: 'up' | 'down', error?: Error) => void;
  /** Told of every command that failed or timed out (after COMMAND_TIMEOUT_MS). */
  onProblem?: (op: StoreOp, error: Error) => void;
}

/** Longest wait for one command before it fails and the caller goes on without Redis. */
const COMMAND_TIMEOUT_MS = 500;

/**
 * This process's one way to Redis (lookups, budgets, persisted queries), and the one place that says it is in trouble: gone,
 * or failing lately. Commands fail at once while it is away (no offline queue), so nothing waits on it; ioredis reconnects.
 */
export class RedisLink {
  readonly redis: Redis | Cluster;
  #subscriber: Redis | Cluster | undefined;
  readonly #troubleUntil = { lookups: 0, budgets: 0 };
  #state: 'up' | 'down' | undefined;
  #closing = false;

  constructor(private readonly options: RedisLinkOptions) {
    this.redis = connect(options);
    // Without an 'error' listener ioredis would crash the process; with it, one log line per change.
    const tell = (state: 'up' | 'down', error?: Error) => {
      if (this.#state === state || this.#closing) return;
      this.#state = state;
      options.onState?.(state, error);
    };
    this.redis
      .on('error', (error: Error) => tell('down', error))
      .on('close', () => tell('down'))
      .on('ready', () => tell('up'));
  }

  /** One command (or pipeline), failed COMMAND_TIMEOUT_MS on without its reply; a timer that fires late first reads what came. */
  send<T>(command: (redis: Redis | Cluster) => Promise<T>): Promise<T> {
    // By hand: ioredis's commandTimeout fires before a reply that came while this process paused is read, a paid call each.
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => setImmediate(() => settled || reject(new Error('Command timed out'))), COMMAND_TIMEOUT_MS);
    });
    return Promise.race([command(this.redis).finally(() => ((settled = true), clearTimeout(timer))), late]);
  }

  /** A connection of its own for pub/sub, as Redis requires, made on first use. */
  get subscriber(): Redis | Cluster {
    return (this.#subscriber ??= connect(this.options).on('error', () => undefined));
  }

  problem(op: StoreOp, error: Error): void {
    this.#troubleUntil[op === 'budget' ? 'budgets' : 'lookups'] = performance.now() + (this.options.troubleMs ?? 10_000);
    this.options.onProblem?.(op, error);
  }

  /** The budgets' count is in trouble by its own failures only: a lookup's stalled claim must not refuse paid calls. */
  inTrouble(of: 'lookups' | 'budgets' = 'lookups'): boolean {
    const up = of === 'budgets' ? this.redis.status === 'ready' : this.healthy();
    return !up || performance.now() < this.#troubleUntil[of];
  }

  /** Every connection up: a waiter hears a lead's answer only on the subscriber's. */
  healthy(): boolean {
    return this.redis.status === 'ready' && (this.#subscriber === undefined || this.#subscriber.status === 'ready');
  }

  async close(): Promise<void> {
    this.#closing = true;
    this.redis.disconnect();
    this.#subscriber?.disconnect();
  }
}

export function connect({ url, cluster }: Pick<RedisLinkOptions, 'url' | 'cluster'>, overrides: RedisOptions = {}): Redis | Cluster {
  const options: RedisOptions = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(times * 100, 2000),
    ...overrides,
  };
  if (!cluster) return new Redis(url, options);
  const { hostname, port, username, password, protocol } = new URL(url);
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
    enableOfflineQueue: options.enableOfflineQueue,
    clusterRetryStrategy: (times) => Math.min(times * 100, 2000),
    // After a failover the new slot owners are learnt within 2 s even without a MOVED.
    slotsRefreshInterval: 2000,
    maxRedirections: 4,
  });
}
