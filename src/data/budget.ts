import type { UpstreamCallInfo } from '../upstream/client.js';
import type { BudgetCounter } from './budgets.js';
import { KEY_PREFIX } from './store.js';

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

export interface BudgetSettings {
  /** Plan queries a subject may spend in a window (BUDGET_QUERIES). */
  queries: number;
  /** The window (BUDGET_WINDOW_MS); windows start at its multiples since the epoch. */
  windowMs: number;
}

/** How long a window's count outlives its end: a charge sent at the last moment still finds it. */
const KEPT_PAST_WINDOW_MS = 60_000;

/** One subject's budget in the window of now, as one request spends it. */
export class Budget {
  #spent: number;

  private constructor(
    private readonly counter: BudgetCounter,
    private readonly key: string,
    private readonly limit: number,
    private readonly resetAt: number,
    spent: number,
    private readonly onRefused: (() => void) | undefined,
  ) {
    this.#spent = spent;
  }

  /** The budget of the subject `subjectId` stands for (a hash of it, never the subject in clear), read once. */
  static async open(counter: BudgetCounter, subjectId: string, settings: BudgetSettings, onRefused?: () => void): Promise<Budget> {
    const window = Math.floor(Date.now() / settings.windowMs);
    const key = `${KEY_PREFIX}budget:{${subjectId}}:${window}`;
    const spent = await counter.spent(key);
    return new Budget(counter, key, settings.queries, (window + 1) * settings.windowMs, spent, onRefused);
  }

  /**
   * Takes `cost` before a call is sent, or throws BudgetExceededError (the call is then not
   * sent). Resolves with how to give back what the call certainly did not cost.
   */
  async charge(cost: number): Promise<(back: number) => void> {
    const charged = await this.counter.charge(this.key, cost, this.limit, this.resetAt - Date.now() + KEPT_PAST_WINDOW_MS);
    this.#spent = charged.spent;
    if (!charged.taken) {
      this.onRefused?.();
      throw new BudgetExceededError(this.standing(), cost);
    }
    return (back) => {
      this.#spent = Math.max(0, this.#spent - back);
      // A lost refund costs the subject `back` of its budget, never the plan a query.
      charged.refund(back).catch(() => undefined);
    };
  }

  standing(): Standing {
    return { limit: this.limit, spent: this.#spent, resetAt: new Date(this.resetAt).toISOString() };
  }
}

/** What `paidFor` needs of a caller: to be told of each call that reached the network. */
interface Observed {
  observe?: ((call: UpstreamCallInfo) => void) | undefined;
}

/**
 * `run`, paid from `budget` at `cost` (the price list's) before it sends anything, with what its
 * calls did not cost given back: refused, never sent, or refused by the upstream unbilled.
 */
export async function paidFor<T, C extends Observed>(
  budget: Budget | undefined,
  cost: number,
  ctx: C,
  run: (ctx: C) => Promise<T>,
): Promise<T> {
  if (!budget) return run(ctx);
  const refund = await budget.charge(cost);
  let billed = 0;
  const observing: C = {
    ...ctx,
    observe: (call: UpstreamCallInfo) => {
      billed += call.queries;
      ctx.observe?.(call);
    },
  };
  try {
    return await run(observing);
  } finally {
    if (billed < cost) refund(cost - billed);
  }
}
