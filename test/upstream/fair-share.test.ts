import { describe, expect, it } from 'vitest';
import { FairShare } from '../../src/upstream/fair-share.js';

describe('FairShare', () => {
  it('lets one caller take every free place, and refuses none', () => {
    const share = new FairShare(3);
    expect([share.enter('a'), share.enter('a'), share.enter('a'), share.enter('a')]).toEqual([true, true, true, false]);
    expect(share.load).toEqual({ inFlight: 3, waiting: 0 });
  });

  it('gives a freed place to the waiting caller with the fewest calls in flight', async () => {
    const share = new FairShare(4);
    for (let i = 0; i < 4; i++) share.enter('greedy');
    const order: string[] = [];
    const waits = [
      ...Array.from({ length: 10 }, () => share.wait('greedy').then(() => void order.push('greedy'))),
      ...Array.from({ length: 2 }, () => share.wait('polite').then(() => void order.push('polite'))),
    ];
    expect(share.load).toEqual({ inFlight: 4, waiting: 12 });
    // Two places free up: both go to the caller with none in flight, though it came last.
    share.leave('greedy');
    share.leave('greedy');
    await Promise.resolve();
    expect(order).toEqual(['polite', 'polite']);
    // Then the greedy caller's backlog, as places free up.
    for (let i = 0; i < 12; i++) share.leave(i < 2 ? 'polite' : 'greedy');
    await Promise.all(waits);
    expect(order).toEqual(['polite', 'polite', ...Array(10).fill('greedy')]);
    expect(share.load).toEqual({ inFlight: 2, waiting: 0 });
  });
});
