import { describe, expect, it } from 'vitest';
import { BudgetUnavailableError, memoryBudgets, withLocalCount, type BudgetCounter } from '../../src/data/budgets.js';

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
    const problems: string[] = [];
    const budgets = withLocalCount(shared, (e) => problems.push(e.message), 200, 'local', 0);
    await budgets.charge('k', 2, 10, 60_000);
    shared.down = true;
    const whileDown = await budgets.charge('k', 3, 10, 60_000);
    expect(whileDown).toMatchObject({ taken: true, spent: 5 });
    await whileDown.refund(3);
    expect(await budgets.spent('k')).toBe(2);
    shared.down = false;
    // The shared count keeps the charge it took; the local one gave its own back.
    expect(await shared.inner.spent('k')).toBe(2);
    expect(problems).toEqual(['connection refused', 'connection refused']);
  });

  it('counts on from the last count the shared one gave while it is down: a budget spent stays spent', async () => {
    const shared = flaky();
    const budgets = withLocalCount(shared, () => undefined, 200, 'local', 0);
    for (let i = 0; i < 5; i++) expect((await budgets.charge('k', 1, 5, 60_000)).taken).toBe(true);
    shared.down = true;
    const whileDown = await Promise.all(Array.from({ length: 200 }, () => budgets.charge('k', 1, 5, 60_000)));
    expect(whileDown.filter((c) => c.taken)).toHaveLength(0);
    // A key read but never charged here counts on from what was read.
    shared.down = false;
    await shared.inner.charge('read', 4, 5, 60_000);
    expect(await budgets.spent('read')).toBe(4);
    shared.down = true;
    const charges = await Promise.all(Array.from({ length: 10 }, () => budgets.charge('read', 1, 5, 60_000)));
    expect(charges.filter((c) => c.taken)).toHaveLength(1);
  });

  it("with 'refuse', refuses every charge while the shared count is down, and reads on from the last count seen", async () => {
    const shared = flaky();
    const budgets = withLocalCount(shared, () => undefined, 200, 'refuse', 0);
    await budgets.charge('k', 2, 10, 60_000);
    shared.down = true;
    await expect(budgets.charge('k', 1, 10, 60_000)).rejects.toBeInstanceOf(BudgetUnavailableError);
    expect(await budgets.spent('k')).toBe(2);
    shared.down = false;
    expect((await budgets.charge('k', 1, 10, 60_000)).spent).toBe(3);
  });

  it('never lets concurrent charges pass the limit together, and never goes below zero', async () => {
    const budgets = memoryBudgets();
    const charges = await Promise.all(Array.from({ length: 10 }, () => budgets.charge('k', 1, 3, 60_000)));
    expect(charges.filter((c) => c.taken)).toHaveLength(3);
    for (const c of charges.filter((x) => x.taken)) await c.refund(5);
    expect(await budgets.spent('k')).toBe(0);
  });

  it('leaves a shared count that stalls alone for a while after it failed: nobody else waits out its time-out', async () => {
    const stalled: BudgetCounter = { charge: () => new Promise(() => {}), spent: () => new Promise(() => {}) };
    const budgets = withLocalCount(stalled, () => undefined, 200);
    const first = performance.now();
    await budgets.charge('k', 1, 10, 60_000);
    expect(performance.now() - first).toBeGreaterThanOrEqual(150);
    const next = performance.now();
    for (let i = 0; i < 5; i++) await budgets.charge('k', 1, 10, 60_000);
    await budgets.spent('k');
    expect(performance.now() - next).toBeLessThan(100);
  });
});
