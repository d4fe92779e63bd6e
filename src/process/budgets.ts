import type { BudgetCounter, Charged, memoryBudgets } from '../data/budgets.js';
import { answerWorkers, askPrimary } from '../data/ipc.js';

const CHARGE = 'budget-charge';
const REFUND = 'budget-refund';
const SPENT = 'budget-spent';

/**
 * A worker's budgets, counted by its primary: a subject's charges through every worker meet in
 * one count, each taken there in one step (without Redis, each worker would count its own).
 */
export function clusterBudgets(): BudgetCounter {
  return {
    charge: async (key, cost, limit, ttlMs) => ({
      ...(await askPrimary<Charged>(CHARGE, { key, cost, limit, ttlMs })),
      refund: (back) => askPrimary<void>(REFUND, { key, cost: back }),
    }),
    spent: (key) => askPrimary<number>(SPENT, { key }),
  };
}

/** The primary's side: its own counter answers every worker. */
export function serveBudgetsToWorkers(counter: ReturnType<typeof memoryBudgets>): void {
  answerWorkers(CHARGE, async (payload) => {
    const { key, cost, limit, ttlMs } = payload as { key: string; cost: number; limit: number; ttlMs: number };
    const { taken, spent } = await counter.charge(key, cost, limit, ttlMs);
    return { taken, spent } satisfies Charged;
  });
  answerWorkers(REFUND, async (payload) => {
    const { key, cost } = payload as { key: string; cost: number };
    await counter.refund(key, cost);
  });
  answerWorkers(SPENT, (payload) => counter.spent((payload as { key: string }).key));
}
