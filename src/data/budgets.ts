import { LRUCache } from 'lru-cache';
import { connectRedis, type RedisTarget } from './redis-connection.js';

/** What a charge did: whether the cost was taken, and the count after it (or as it stood, when refused). */
export interface Charged {
  taken: boolean;
  spent: number;
}

/** A charge, and how to give back part of it to the very count that took it (never below zero). */
export interface Charge extends Charged {
  refund(cost: number): Promise<void>;
}

/**
 * Where the subjects' budgets are counted: one count per key (a subject in a window), each
 * charge taken only when it keeps the count within the limit, in one step, so that concurrent
 * charges from every instance can never pass it together.
 */
export interface BudgetCounter {
  /** Adds `cost` to `key` unless the count would pass `limit`; the key lasts `ttlMs`. */
  charge(key: string, cost: number, limit: number, ttlMs: number): Promise<Charge>;
  /** The count of `key` (0 when none). */
  spent(key: string): Promise<number>;
  close?(): Promise<void>;
  /** Whether a shared count is connected (absent: nothing to connect to). */
  healthy?(): boolean;
}

/** Subjects counted at once in one process's memory, at most; the oldest windows go first. */
const MAX_SUBJECTS = 100_000;

/** One process's counts; a key it has not counted starts at `from(key)` (or higher, where it counted before). */
export function memoryBudgets(from: (key: string) => number = () => 0): BudgetCounter {
  const counts = new LRUCache<string, number>({ max: MAX_SUBJECTS, ttlAutopurge: false });
  const now = (key: string) => Math.max(counts.get(key) ?? 0, from(key));
  const refund = (key: string, back: number) => {
    const now = counts.get(key);
    if (now !== undefined) counts.set(key, Math.max(0, now - back), { noUpdateTTL: true });
    return Promise.resolve();
  };
  return {
    charge: (key, cost, limit, ttlMs) => {
      const spent = now(key);
      const back = (c: number) => refund(key, c);
      if (spent + cost > limit) return Promise.resolve({ taken: false, spent, refund: back });
      counts.set(key, spent + cost, counts.has(key) ? { noUpdateTTL: true } : { ttl: ttlMs });
      return Promise.resolve({ taken: true, spent: spent + cost, refund: back });
    },
    spent: (key) => Promise.resolve(now(key)),
  };
}

/** Taken only within the limit, in one step; a new key gets its time to live. */
const CHARGE = `local spent = tonumber(redis.call('get', KEYS[1]) or '0')
local cost, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
if spent + cost > limit then return {0, spent} end
spent = redis.call('incrby', KEYS[1], cost)
if spent == cost then redis.call('pexpire', KEYS[1], ARGV[3]) end
return {1, spent}`;

/** Given back only while the key lasts (a key gone with its window stays gone), never below zero. */
const REFUND = `if redis.call('exists', KEYS[1]) == 0 then return 0 end
local spent = redis.call('decrby', KEYS[1], ARGV[1])
if spent < 0 then redis.call('incrby', KEYS[1], -spent) end
return 1`;

/** Every instance's counts, in Redis (or a Redis Cluster: one key a script, so any slot will do). */
export function redisBudgets(target: RedisTarget, commandTimeoutMs: number): BudgetCounter {
  const redis = connectRedis(target, commandTimeoutMs);
  redis.on('error', () => undefined); // the lookup store logs Redis's state; failed commands are counted by the caller
  return {
    charge: async (key, cost, limit, ttlMs) => {
      const [taken, spent] = (await redis.eval(CHARGE, 1, key, cost, limit, ttlMs)) as [number, number];
      return { taken: taken === 1, spent, refund: async (back) => void (await redis.eval(REFUND, 1, key, back)) };
    },
    spent: async (key) => Number((await redis.get(key)) ?? 0),
    close: async () => void (await redis.quit().catch(() => redis.disconnect())),
    healthy: () => redis.status === 'ready',
  };
}

/** How long after a failure of the shared count it is not asked again. */
const TROUBLED_MS = 5000;

/** A paid call refused because the shared count cannot be reached (BUDGET_WHEN_STORE_DOWN=refuse): it was not sent. */
export class BudgetUnavailableError extends Error {
  override readonly name = 'BudgetUnavailableError';
  constructor(cause: Error) {
    super('the budget store cannot be reached', { cause });
  }
}

/**
 * A shared counter (Redis) with this process's own behind it. While the shared one fails or does
 * not answer within `timeoutMs`, `local` counts on in this process from the last count the
 * shared one gave for each key (so a subject who had spent it all gets nothing more), and
 * `refuse` refuses charges with BudgetUnavailableError; `onProblem` hears of every such time, after which the shared count is left alone for
 * `troubledMs`. A
 * refund goes to the count that took the charge. A shared answer that comes after the time-out
 * still counts there: the charge is then counted twice, never missed.
 */
export function withLocalCount(
  shared: BudgetCounter,
  onProblem: (error: Error) => void,
  timeoutMs: number,
  whenDown: 'local' | 'refuse' = 'local',
  troubledMs = TROUBLED_MS,
): BudgetCounter {
  /** The last count the shared store gave for each key. */
  const seen = new LRUCache<string, number>({ max: MAX_SUBJECTS, ttlAutopurge: false });
  const local = memoryBudgets((key) => seen.get(key) ?? 0);
  const saw = (key: string, spent: number) => void seen.set(key, Math.max(seen.get(key) ?? 0, spent));
  // After a failure the shared count is left alone for a while: otherwise every request, refusals
  // included, would wait out its time-out again while it stalls.
  let troubledUntil = 0;
  let lastProblem = new Error('the budget store is in trouble');
  const either = <T>(work: () => Promise<T>, alone: (error: Error) => Promise<T>): Promise<T> => {
    if (performance.now() < troubledUntil) return alone(lastProblem);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the budget store timed out')), timeoutMs);
    });
    return Promise.race([work(), late])
      .catch((thrown: unknown) => {
        const error = thrown instanceof Error ? thrown : new Error(String(thrown));
        troubledUntil = performance.now() + troubledMs;
        lastProblem = error;
        onProblem(error);
        return alone(error);
      })
      .finally(() => clearTimeout(timer));
  };
  return {
    charge: (key, cost, limit, ttlMs) =>
      either(
        async () => {
          const charged = await shared.charge(key, cost, limit, ttlMs);
          saw(key, charged.spent);
          return charged;
        },
        (error) => (whenDown === 'refuse' ? Promise.reject(new BudgetUnavailableError(error)) : local.charge(key, cost, limit, ttlMs)),
      ),
    spent: (key) =>
      either(
        async () => {
          const spent = await shared.spent(key);
          saw(key, spent);
          return spent;
        },
        () => local.spent(key),
      ),
    close: () => shared.close?.() ?? Promise.resolve(),
    healthy: () => shared.healthy?.() ?? true,
  };
}
