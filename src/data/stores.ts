import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Metrics } from '../telemetry/metrics.js';
import { memoryBudgets, redisBudgets, type BudgetCounter } from './budgets.js';
import { LookupStore } from './cache.js';
import { RedisCache } from './redis-cache.js';
import { RedisLink } from './redis.js';
import { storeProblems } from '../telemetry/store-problems.js';

/** This process's one link to Redis (REDIS_URL), whose state and problems are counted and logged. */
export function createRedisLink(config: Config, deps: { logger: Logger; metrics: Metrics }): RedisLink | undefined {
  const { redisUrl, redisCluster } = config.cache;
  if (!redisUrl) return undefined;
  const { logger } = deps;
  return new RedisLink({
    url: redisUrl,
    cluster: redisCluster,
    onProblem: storeProblems(deps),
    onState: (state, error) =>
      state === 'up'
        ? logger.info({ cache: 'redis' }, 'cache store up')
        : logger.warn(
            { cache: 'redis', error: error?.message },
            'cache store down: lookups go to the upstream, and budgets are counted by BUDGET_WHEN_STORE_DOWN, until it is back',
          ),
  });
}

/** Where lookups meet: nowhere with CACHE=off and COALESCE=off, Redis with REDIS_URL, else in memory. */
export function createStore(config: Config, link: RedisLink | undefined): LookupStore | undefined {
  const { enabled, maxEntries, maxBytes, coalesce, leaseMs } = config.cache;
  if (!enabled && !coalesce) return undefined;
  return new LookupStore({ maxEntries, maxBytes, coalesce, shared: link && new RedisCache(link, { leaseMs, coalesce }) });
}

/** Where the subjects' budgets are counted: Redis (every instance) behind this process's own count, or this process. */
export function createBudgets(config: Config, link: RedisLink | undefined): BudgetCounter {
  if (!link) return memoryBudgets();
  return redisBudgets(link, config.auth?.budget?.whenStoreDown ?? 'local');
}
