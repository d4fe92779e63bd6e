import type { BudgetCounter, Charged } from '../data/budgets.js';
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
    charge: (key, cost, limit, ttlMs) => askPrimary<Charged>(CHARGE, { key, cost, limit, ttlMs }),
    refund: (key, cost) => askPrimary<void>(REFUND, { key, cost }),
    spent: (key) => askPrimary<number>(SPENT, { key }),
  };
}

/** The primary's side: its own counter answers every worker. */
export function serveBudgetsToWorkers(counter: BudgetCounter): void {
  answerWorkers(CHARGE, (payload) => {
    const { key, cost, limit, ttlMs } = payload as { key: string; cost: number; limit: number; ttlMs: number };
    return counter.charge(key, cost, limit, ttlMs);
  });
  answerWorkers(REFUND, (payload) => {
    const { key, cost } = payload as { key: string; cost: number };
    return counter.refund(key, cost);
  });
  answerWorkers(SPENT, (payload) => counter.spent((payload as { key: string }).key));
}
