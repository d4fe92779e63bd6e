import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BudgetUnavailableError, memoryBudgets, redisBudgets } from '../../src/data/budgets.js';
import { RedisLink } from '../../src/data/redis.js';
import { startRedis, type RedisServer } from '../helpers.js';

const until = async (ok: () => boolean) => {
  for (let i = 0; i < 100 && !ok(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(ok()).toBe(true);
};

describe('budgets counted in one process', () => {
  it('never lets concurrent charges pass the limit together, and never goes below zero', async () => {
    const budgets = memoryBudgets();
    const charges = await Promise.all(Array.from({ length: 10 }, () => budgets.charge('k', 1, 3, 60_000)));
    expect(charges.filter((c) => c.taken)).toHaveLength(3);
    for (const c of charges.filter((x) => x.taken)) await c.refund(5);
    expect(await budgets.spent('k')).toBe(0);
  });
});

describe('budgets counted in a real redis-server, with this process’s count behind', () => {
  let redis: RedisServer;
  let link: RedisLink;
  const problems: string[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    link = new RedisLink({ url: redis.url, troubleMs: 60_000, onProblem: (op) => problems.push(op) });
    await until(() => link.healthy());
  });
  afterAll(async () => {
    await link?.close();
    await redis?.stop();
  });

  it('takes concurrent charges in one step each: exactly the limit, and refunds never below zero', async () => {
    const budgets = redisBudgets(link, 'local');
    const charges = await Promise.all(Array.from({ length: 10 }, () => budgets.charge('exact', 1, 3, 60_000)));
    expect(charges.filter((c) => c.taken)).toHaveLength(3);
    expect(await budgets.spent('exact')).toBe(3);
    for (const c of charges.filter((x) => x.taken)) await c.refund(5);
    expect(await budgets.spent('exact')).toBe(0);
  });

  it("counts in Redis still when a lookup's command failed: only the budgets' own failures put them in trouble", async () => {
    const budgets = redisBudgets(link, 'refuse');
    link.problem('claim', new Error('a lookup claim timed out'));
    expect(link.inTrouble()).toBe(true);
    expect((await budgets.charge('unshaken', 2, 10, 60_000)).taken).toBe(true);
    expect(await link.redis.get('unshaken')).toBe('2');
    problems.length = 0;
  });

  it('while Redis is gone, counts on from the last count it gave (a budget spent stays spent), refunds to the count that took the charge, or refuses', async () => {
    const local = redisBudgets(link, 'local');
    const refuse = redisBudgets(link, 'refuse');
    for (let i = 0; i < 5; i++) expect((await local.charge('spent', 1, 5, 60_000)).taken).toBe(true);
    const before = await local.charge('part', 2, 10, 60_000);
    expect(await refuse.spent('part')).toBe(2);
    await redis.stop();
    await until(() => link.inTrouble('budgets'));
    const whileDown = await Promise.all(Array.from({ length: 50 }, () => local.charge('spent', 1, 5, 60_000)));
    expect(whileDown.filter((c) => c.taken)).toHaveLength(0);
    const more = await local.charge('part', 3, 10, 60_000);
    expect(more).toMatchObject({ taken: true, spent: 5 });
    await more.refund(3);
    expect(await local.spent('part')).toBe(2);
    await expect(refuse.charge('part', 1, 10, 60_000)).rejects.toBeInstanceOf(BudgetUnavailableError);
    expect(await refuse.spent('part')).toBe(2);
    // Redis was never asked while the link was gone: nothing failed there to count.
    expect(problems).toEqual([]);
    expect(before.taken).toBe(true);
  });
});
