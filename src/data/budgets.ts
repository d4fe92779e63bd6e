import { LRUCache } from 'lru-cache';
import { KEY_PREFIX } from './cache.js';
import type { RedisLink } from './redis.js';
import type { UpstreamCallInfo } from '../upstream/client.js';
import type { AuthConfig } from '../config/auth.js';

/** A subject's standing, as `extensions.cost.budget` and BUDGET_EXCEEDED's `extensions.budget` say it. */
export interface Standing {
  limit: number;
  spent: number;
  /** When the window ends and the count starts again (ISO 8601, UTC). */
  resetAt: string;
}

/** A call the subject's budget could not pay for: it was not sent. */
export class BudgetExceededError extends Error {
  override readonly name = 'BudgetExceededError';
  constructor(
    readonly standing: Standing,
    readonly cost: number,
  ) {
    super(`budget exceeded: ${standing.spent} of ${standing.limit} spent, ${cost} more asked`);
  }
}

/** A paid call refused because the shared count cannot be reached (BUDGET_WHEN_STORE_DOWN=refuse): it was not sent. */
export class BudgetUnavailableError extends Error {
  override readonly name = 'BudgetUnavailableError';
  constructor(cause: Error) {
    super('the budget store cannot be reached', { cause });
  }
}

/** BUDGET_QUERIES per BUDGET_WINDOW_MS; windows start at its multiples since the epoch. */
export type BudgetSettings = Pick<NonNullable<AuthConfig['budget']>, 'queries' | 'windowMs'>;

/** How long a window's count outlives its end: a charge sent at the last moment still finds it. */
const KEPT_PAST_WINDOW_MS = 60_000;

/** One subject's budget in the window of now, as one request spends it. */
export class Budget {
  private constructor(
    private readonly counter: BudgetCounter,
    private readonly key: string,
    private readonly limit: number,
    private readonly resetAt: number,
    private spent: number,
    private readonly onRefused: (() => void) | undefined,
  ) {}

  /** The budget of the subject `subjectId` stands for (a hash of it, never the subject in clear), read once. */
  static async open(counter: BudgetCounter, subjectId: string, settings: BudgetSettings, onRefused?: () => void): Promise<Budget> {
    const window = Math.floor(Date.now() / settings.windowMs);
    const key = `${KEY_PREFIX}budget:{${subjectId}}:${window}`;
    return new Budget(counter, key, settings.queries, (window + 1) * settings.windowMs, await counter.spent(key), onRefused);
  }

  /** `run`, paid at `cost` before it sends anything (or BudgetExceededError); what its calls were not billed goes back. */
  async pay<T, C extends { observe?: ((call: UpstreamCallInfo) => void) | undefined }>(
    cost: number,
    ctx: C,
    run: (ctx: C) => Promise<T>,
  ): Promise<T> {
    const charged = await this.counter.charge(this.key, cost, this.limit, this.resetAt - Date.now() + KEPT_PAST_WINDOW_MS);
    this.spent = charged.spent;
    if (!charged.taken) {
      this.onRefused?.();
      throw new BudgetExceededError(this.standing(), cost);
    }
    let billed = 0;
    const observe = (call: UpstreamCallInfo) => {
      billed += call.queries;
      ctx.observe?.(call);
    };
    try {
      return await run({ ...ctx, observe });
    } finally {
      if (billed < cost) {
        this.spent = Math.max(0, this.spent - (cost - billed));
        // A lost refund costs the subject part of its budget, never the plan a query.
        charged.refund(cost - billed).catch(() => undefined);
      }
    }
  }

  standing(): Standing {
    return { limit: this.limit, spent: this.spent, resetAt: new Date(this.resetAt).toISOString() };
  }
}

export type Charge = { taken: boolean; spent: number; refund(cost: number): Promise<void> };

/** The subjects' counts: a charge is taken only when it keeps the key's count within `limit`, in one step, so concurrent charges never pass it together. */
export interface BudgetCounter {
  charge(key: string, cost: number, limit: number, ttlMs: number): Promise<Charge>;
  spent(key: string): Promise<number>;
}

/** Subjects counted at once in one process's memory, at most; the oldest windows go first. */
const MAX_SUBJECTS = 100_000;

/** One process's counts; a key it has not counted starts at `from(key)` (or higher, where it counted before). */
export function memoryBudgets(from: (key: string) => number = () => 0): BudgetCounter {
  const counts = new LRUCache<string, number>({ max: MAX_SUBJECTS });
  const now = (key: string) => Math.max(counts.get(key) ?? 0, from(key));
  return {
    charge: async (key, cost, limit, ttlMs) => {
      const spent = now(key);
      const refund = async (back: number) => {
        const count = counts.get(key);
        if (count !== undefined) counts.set(key, Math.max(0, count - back), { noUpdateTTL: true });
      };
      if (spent + cost > limit) return { taken: false, spent, refund };
      counts.set(key, spent + cost, counts.has(key) ? { noUpdateTTL: true } : { ttl: ttlMs });
      return { taken: true, spent: spent + cost, refund };
    },
    spent: async (key) => now(key),
  };
}

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

/**
 * Every instance's counts in Redis, this process's behind: while Redis is in trouble, `local` counts on from the last count
 * Redis gave (a spent budget stays spent), `refuse` refuses. A late answer still counts there: twice, never missed.
 */
export function redisBudgets(link: Pick<RedisLink, 'send' | 'inTrouble' | 'problem'>, whenDown: 'local' | 'refuse'): BudgetCounter {
  const seen = new LRUCache<string, number>({ max: MAX_SUBJECTS });
  const saw = (key: string, spent: number) => (seen.set(key, Math.max(seen.get(key) ?? 0, spent)), spent);
  const local = memoryBudgets((key) => seen.get(key) ?? 0);
  const either = async <T>(shared: () => Promise<T>, alone: (error: Error) => Promise<T>): Promise<T> => {
    if (link.inTrouble('budgets')) return alone(new Error('the budget store is in trouble'));
    try {
      return await shared();
    } catch (error) {
      link.problem('budget', error as Error);
      return alone(error as Error);
    }
  };
  return {
    charge: (key, cost, limit, ttlMs) =>
      either(
        async () => {
          const [taken, spent] = (await link.send((redis) => redis.eval(CHARGE, 1, key, cost, limit, ttlMs))) as [number, number];
          const refund = async (back: number) => void (await link.send((redis) => redis.eval(REFUND, 1, key, back)));
          return { taken: taken === 1, spent: saw(key, spent), refund };
        },
        (error) => (whenDown === 'refuse' ? Promise.reject(new BudgetUnavailableError(error)) : local.charge(key, cost, limit, ttlMs)),
      ),
    spent: (key) =>
      either(
        async () => saw(key, Number((await link.send((redis) => redis.get(key))) ?? 0)),
        () => local.spent(key),
      ),
  };
}
