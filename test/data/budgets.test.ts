import { describe, expect, it } from 'vitest';
import { memoryBudgets, withLocalCount, type BudgetCounter } from '../../src/data/budgets.js';

/** A shared count that fails while `down` is set, as a Redis that is away does. */
function flaky(): BudgetCounter & { down: boolean; inner: ReturnType<typeof memoryBudgets> } {
  const inner = memoryBudgets();
  const counter = {
    down: false,
    inner,
    charge: (key: string, cost: number, limit: number, ttlMs: number) =>
      counter.down ? Promise.reject(new Error('connection refused')) : inner.charge(key, cost, limit, ttlMs),
    spent: (key: string) => (counter.down ? Promise.reject(new Error('connection refused')) : inner.spent(key)),
  };
  return counter;
}

describe('budgets with a local count behind a shared one', () => {
  it('gives a refund back to the count that took the charge, not to the other one', async () => {
    const shared = flaky();
    const local = memoryBudgets();
    const problems: string[] = [];
    const budgets = withLocalCount(shared, (e) => problems.push(e.message), 200, local);
    await budgets.charge('k', 2, 10, 60_000);
    shared.down = true;
    const whileDown = await budgets.charge('k', 3, 10, 60_000);
    expect(whileDown).toMatchObject({ taken: true, spent: 3 });
    shared.down = false;
    await whileDown.refund(3);
    // The shared count keeps the charge it took; the local one gave its own back.
    expect(await shared.inner.spent('k')).toBe(2);
    expect(await local.spent('k')).toBe(0);
    expect(problems).toEqual(['connection refused']);
  });

  it('never lets concurrent charges pass the limit together, and never goes below zero', async () => {
    const budgets = memoryBudgets();
    const charges = await Promise.all(Array.from({ length: 10 }, () => budgets.charge('k', 1, 3, 60_000)));
    expect(charges.filter((c) => c.taken)).toHaveLength(3);
    for (const c of charges.filter((x) => x.taken)) await c.refund(5);
    expect(await budgets.spent('k')).toBe(0);
  });
});
