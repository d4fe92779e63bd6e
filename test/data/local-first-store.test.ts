import { describe, expect, it } from 'vitest';
import { LocalFirstStore } from '../../src/data/local-first-store.js';
import { MemoryStore, type Claim, type SharedLookupStore } from '../../src/data/store.js';

/** Follows a claim's waits to its end. */
async function settled(claim: Claim | Promise<Claim>): Promise<Exclude<Claim, { kind: 'wait' }>> {
  let c = await claim;
  while (c.kind === 'wait') c = await c.next;
  return c;
}

/** A shared store that never answers (a Redis paused, an IPC channel stuck), counting the claims that reach it. */
function stalled(): SharedLookupStore & { claims: number } {
  return {
    kind: 'redis',
    claims: 0,
    claim() {
      this.claims++;
      return new Promise<Claim>(() => undefined);
    },
    peek: () => new Promise<undefined>(() => undefined),
    keep: () => undefined,
    healthy: () => false,
    close: async () => undefined,
  };
}

describe('LocalFirstStore: a process shares its own calls in flight, whatever the shared store does', () => {
  it("asks the shared store once for a process's concurrent claims, and hands the lead's outcome to the others", async () => {
    const shared = new MemoryStore();
    const store = new LocalFirstStore(shared);
    const claims = await Promise.all(Array.from({ length: 5 }, () => store.claim('k', { read: true })));
    expect(claims.map((c) => c.kind)).toEqual(['lead', 'wait', 'wait', 'wait', 'wait']);
    const others = claims.slice(1).map(settled);
    const lead = claims[0]!;
    if (lead.kind !== 'lead') throw new Error('no lead');
    lead.lease.settle('answer', 1000);
    expect(await Promise.all(others)).toEqual(Array(4).fill({ kind: 'hit', entry: 'answer' }));
    // Kept where the shared store keeps answers.
    expect(await settled(shared.claim('k', { read: true }))).toEqual({ kind: 'hit', entry: 'answer' });
  });

  it('gives the lead to the next waiter of this process when the lead gives up', async () => {
    const store = new LocalFirstStore(new MemoryStore());
    const first = await store.claim('k', { read: true });
    const second = settled(store.claim('k', { read: true }));
    if (first.kind !== 'lead') throw new Error('no lead');
    first.lease.abandon();
    expect((await second).kind).toBe('lead');
  });

  it('makes one call per process when the shared store does not answer: the first caller leads after the time-out', async () => {
    const shared = stalled();
    let timeouts = 0;
    const store = new LocalFirstStore(shared, { claimTimeoutMs: 50, onTimeout: () => timeouts++ });
    const claims = await Promise.all(Array.from({ length: 20 }, () => store.claim('k', { read: true })));
    const outcomes = claims.map(settled);
    const lead = await outcomes[0]!;
    expect(lead.kind).toBe('lead');
    if (lead.kind === 'lead') lead.lease.settle('answer', 1000);
    expect(await Promise.all(outcomes.slice(1))).toEqual(Array(19).fill({ kind: 'hit', entry: 'answer' }));
    expect(shared.claims).toBe(1);
    expect(timeouts).toBe(1);
  });

  it('never lets a caller that must not read the cache join one that may read it', async () => {
    const shared = new MemoryStore();
    const store = new LocalFirstStore(shared);
    const reading = await store.claim('k', { read: true });
    const fresh = await store.claim('k', { read: false });
    expect(reading.kind).toBe('lead');
    // Not the local reader's waiter: it went to the shared store, which has the reader's call in flight.
    expect(fresh.kind).toBe('wait');
    if (reading.kind === 'lead') reading.lease.settle('answer', 0);
    expect(await settled(fresh)).toEqual({ kind: 'hit', entry: 'answer' });
  });
});

describe('LocalFirstStore: what this process paid for, kept for when the shared store is in trouble', () => {
  /** A shared store that is gone: every claim a lead, nothing kept, not healthy. */
  function gone(): SharedLookupStore & { claims: number } {
    return {
      kind: 'redis',
      claims: 0,
      claim() {
        this.claims++;
        return Promise.resolve({ kind: 'lead', lease: { settle: () => undefined, abandon: () => undefined } });
      },
      peek: async () => undefined,
      keep: () => undefined,
      healthy: () => false,
      close: async () => undefined,
    };
  }

  it('answers from its own keeping while the shared store is gone', async () => {
    const shared = gone();
    const store = new LocalFirstStore(shared);
    const first = await settled(store.claim('k', { read: true }));
    if (first.kind !== 'lead') throw new Error('no lead');
    first.lease.settle('answer', 60_000);
    expect(await settled(store.claim('k', { read: true }))).toEqual({ kind: 'hit', entry: 'answer' });
    // A caller that asked not to read the cache still makes the call.
    expect((await settled(store.claim('k', { read: false }))).kind).toBe('lead');
    expect(shared.claims).toBe(2);
  });

  it('reads only the shared store while it is well, and its own keeping for a while after a problem', async () => {
    const shared = new MemoryStore();
    const store = new LocalFirstStore(shared);
    const first = await settled(store.claim('k', { read: true }));
    if (first.kind !== 'lead') throw new Error('no lead');
    first.lease.settle('answer', 60_000);
    await shared.close(); // another instance's refresh, say: the shared store no longer has it
    expect((await settled(store.claim('k', { read: true }))).kind).toBe('lead');
    store.troubled();
    expect(await settled(store.claim('k', { read: true }))).toEqual({ kind: 'hit', entry: 'answer' });
  });
});
