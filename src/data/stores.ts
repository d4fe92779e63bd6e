import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Metrics } from '../telemetry/metrics.js';
import { memoryApqStore, redisApqStore, type ApqStore } from './apq-store.js';
import { memoryBudgets, redisBudgets, withLocalCount, type BudgetCounter } from './budgets.js';
import { LocalFirstStore } from './local-first-store.js';
import { RedisStore, type StoreOp } from './redis-store.js';
import { MemoryStore, type SharedLookupStore } from './store.js';

/** Where lookups meet: nowhere with CACHE=off and COALESCE=off, Redis with REDIS_URL, else in memory. */
export function storeKind(cache: Config['cache']): 'none' | 'redis' | 'memory' {
  if (!cache.enabled && !cache.coalesce) return 'none';
  return cache.redisUrl ? 'redis' : 'memory';
}

/** The in-memory store: this process's own. */
export function createMemoryStore(cache: Config['cache']): MemoryStore {
  return new MemoryStore({ maxEntries: cache.maxEntries, maxBytes: cache.maxBytes, coalesce: cache.coalesce });
}

export interface StoreDeps {
  logger: Logger;
  metrics: Metrics;
}

/**
 * The store `storeKind` names for this process. Redis sits behind this process's own calls in
 * flight, so that it can cost at most one call per key and process when it stalls; its errors
 * and time-outs are counted and logged.
 */
export function createStore(config: Config, deps: StoreDeps): SharedLookupStore | undefined {
  const kind = storeKind(config.cache);
  if (kind === 'none') return undefined;
  if (kind === 'memory') return createMemoryStore(config.cache);
  const report = storeProblems(deps);
  // The local store reads its own answers while the shared one is in trouble: it hears of each problem.
  let local: LocalFirstStore | undefined;
  const problem = (op: StoreOp, error: Error) => {
    local?.troubled();
    report(op, error);
  };
  const shared = createRedisStore(config, deps, problem);
  local = new LocalFirstStore(shared, {
    keep: { maxEntries: config.cache.maxEntries, maxBytes: config.cache.maxBytes },
    onTimeout: () => report('claim', new Error('the store did not answer a claim in time')),
  });
  return local;
}

/**
 * Where registered persisted queries are kept: with Redis, there (bounded apart from the
 * lookups, so that registrations can never fill it); else in this process's memory.
 */
export function createApqStore(config: Config, deps: Pick<StoreDeps, 'logger' | 'metrics'>): ApqStore {
  const bounds = config.persistedQueries;
  if (!config.cache.redisUrl) return memoryApqStore(bounds);
  const problem = storeProblems(deps);
  return redisApqStore({
    url: config.cache.redisUrl,
    cluster: config.cache.redisCluster,
    ...bounds,
    onError: (error) => problem('apq', error),
  });
}

/** How long a budget's shared count may take before this process counts on its own. */
const BUDGET_STORE_TIMEOUT_MS = 500;

/**
 * Where the subjects' budgets are counted: in Redis with REDIS_URL (every instance), else in
 * this process. While the shared count fails, each instance counts on from the last count it
 * saw, or refuses paid calls (BUDGET_WHEN_STORE_DOWN), each time counted and logged.
 */
export function createBudgets(config: Config, deps: Pick<StoreDeps, 'logger' | 'metrics'>): BudgetCounter {
  if (!config.cache.redisUrl) return memoryBudgets();
  const problem = storeProblems(deps);
  const shared = redisBudgets({ url: config.cache.redisUrl, cluster: config.cache.redisCluster }, BUDGET_STORE_TIMEOUT_MS);
  const whenDown = config.auth?.budget?.whenStoreDown ?? 'local';
  return withLocalCount(shared, (error) => problem('budget', error), BUDGET_STORE_TIMEOUT_MS, whenDown);
}

function createRedisStore(config: Config, { logger }: StoreDeps, onError: (op: StoreOp, error: Error) => void): RedisStore {
  const { redisUrl, leaseMs, coalesce } = config.cache;
  if (!config.cache.keySecret) {
    logger.warn('REDIS_URL without CACHE_KEY_SECRET: cache keys hold a plain SHA-256 of each token; set a secret shared by all instances');
  }
  return new RedisStore({
    url: redisUrl!,
    cluster: config.cache.redisCluster,
    leaseMs,
    coalesce,
    onError,
    onStateChange: (state, error) =>
      state === 'up'
        ? logger.info({ cache: 'redis' }, 'cache store up')
        : logger.warn({ cache: 'redis', error: error?.message }, 'cache store down: lookups go to the upstream until it is back'),
  });
}

/** How often a store's problems of one kind are logged at most; every one is counted. */
const LOG_EVERY_MS = 10_000;

/**
 * Store errors and time-outs, each counted by store, step and kind, and logged at most once per
 * LOG_EVERY_MS for each step and kind, with how many went unlogged since: a store that fails
 * every command must not turn each lookup into a log line.
 */
export function storeProblems({ logger, metrics }: Pick<StoreDeps, 'logger' | 'metrics'>) {
  const logged = new Map<string, { at: number; unlogged: number }>();
  return (op: StoreOp, error: Error): void => {
    const kind = problemKind(error);
    metrics.storeError('redis', op, kind);
    const key = `${op}:${kind}`;
    const now = performance.now();
    const last = logged.get(key);
    if (last && now - last.at < LOG_EVERY_MS) {
      last.unlogged++;
      return;
    }
    logged.set(key, { at: now, unlogged: 0 });
    logger.warn(
      { cache: 'redis', op, kind, error: error.message, unloggedSinceLast: last?.unlogged ?? 0 },
      op === 'budget'
        ? `cache store ${kind}: budgets are counted by BUDGET_WHEN_STORE_DOWN until it recovers`
        : `cache store ${kind}: lookups are shared within this process only until it recovers`,
    );
  };
}

/** What went wrong, in a few words a label can hold: a time-out, a full store, or anything else. */
function problemKind(error: Error): 'timeout' | 'full' | 'error' {
  if (/timed? ?out/i.test(error.message)) return 'timeout';
  // Redis at maxmemory with noeviction refuses writes with an OOM error.
  if (error.message.startsWith('OOM')) return 'full';
  return 'error';
}
