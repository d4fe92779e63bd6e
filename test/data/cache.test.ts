import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LookupStore, type Handover } from '../../src/data/cache.js';
import { RedisCache } from '../../src/data/redis-cache.js';
import { RedisLink } from '../../src/data/redis.js';
import { startRedis, type RedisServer } from '../helpers.js';

const memory = (options: Partial<ConstructorParameters<typeof LookupStore>[0]> = {}) =>
  new LookupStore({ maxEntries: 1000, maxBytes: 1_000_000, coalesce: true, ...options });

/** A lead that counts its calls and hands over `entry` (kept a minute) once `release` is called. */
function lead(entry: string | null = 'answer') {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const calls = { n: 0 };
  const run = async (): Promise<Handover> => {
    calls.n++;
    await gate;
    return entry === null ? undefined : { entry, ttlMs: 60_000 };
  };
  return { run, release, calls };
}

/** A port nothing listens on: a Redis that is gone. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

describe('LookupStore in one process', () => {
  it('is bounded by entries and by bytes (2 bytes a character)', async () => {
    const few = memory({ maxEntries: 3 });
    for (const k of ['a', 'b', 'c', 'd']) few.keep(k, 'x', 60_000);
    expect(await Promise.all(['a', 'b', 'c', 'd'].map((k) => few.peek(k)))).toEqual([undefined, 'x', 'x', 'x']);
    const small = memory({ maxBytes: 10_000 });
    for (let i = 0; i < 10; i++) small.keep(`k${i}`, 'x'.repeat(1000), 60_000);
    const kept = await Promise.all(Array.from({ length: 10 }, (_, i) => small.peek(`k${i}`)));
    expect(kept.filter(Boolean).length).toBeLessThanOrEqual(4);
    small.keep('huge', 'x'.repeat(20_000), 60_000);
    expect(await small.peek('huge')).toBeUndefined();
  });

  it('makes one call for concurrent callers of a key and hands its answer to the others, then answers from what it kept', async () => {
    const store = memory();
    const { run, release, calls } = lead();
    const asked = Array.from({ length: 5 }, () => store.once('k', true, run));
    release();
    expect(await Promise.all(asked)).toEqual([undefined, ...Array(4).fill({ entry: 'answer', how: 'flight' })]);
    expect(await store.once('k', true, run)).toEqual({ entry: 'answer', how: 'hit' });
    expect(calls.n).toBe(1);
  });

  it('passes the call to the next caller when its lead gives up, and hands a settled-only answer over without keeping it', async () => {
    const store = memory();
    const quitter = lead(null);
    const first = store.once('k', true, quitter.run);
    const next = lead();
    const second = store.once('k', true, async () => ({ entry: 'answer', ttlMs: 0 }));
    const third = store.once('k', true, next.run);
    quitter.release();
    expect(await first).toBeUndefined();
    expect(await second).toBeUndefined();
    expect(await third).toEqual({ entry: 'answer', how: 'flight' });
    expect(next.calls.n).toBe(0);
    expect(await store.peek('k')).toBeUndefined();
  });

  it('never lets a caller that must not read the cache join one that may, nor read what is kept', async () => {
    const store = memory();
    store.keep('k', 'old', 60_000);
    const reading = lead();
    const fresh = lead('new');
    expect(await store.once('k', true, reading.run)).toEqual({ entry: 'old', how: 'hit' });
    const refreshing = store.once('k', false, fresh.run);
    fresh.release();
    expect(await refreshing).toBeUndefined();
    expect(fresh.calls.n).toBe(1);
    expect(await store.once('k', true, reading.run)).toEqual({ entry: 'new', how: 'hit' });
  });

  it('with coalescing off, lets every caller make its call', async () => {
    const store = memory({ coalesce: false });
    const { run, release, calls } = lead();
    const asked = [store.once('k', false, run), store.once('k', false, run)];
    release();
    await Promise.all(asked);
    expect(calls.n).toBe(2);
  });
});

describe('LookupStore in front of a Redis that is gone', () => {
  it('makes one call per process for concurrent callers, keeps its answer, and answers from it: the link is in trouble', async () => {
    const problems: string[] = [];
    const link = new RedisLink({ url: `redis://127.0.0.1:${await deadPort()}`, onProblem: (op) => problems.push(op) });
    const store = new LookupStore({
      maxEntries: 100,
      maxBytes: 100_000,
      coalesce: true,
      shared: new RedisCache(link, { leaseMs: 1000, coalesce: true }),
    });
    try {
      const { run, release, calls } = lead();
      const asked = Array.from({ length: 20 }, () => store.once('k', true, run));
      release();
      await Promise.all(asked);
      expect(await store.once('k', true, run)).toEqual({ entry: 'answer', how: 'hit' });
      expect(calls.n).toBe(1);
      expect(store.healthy()).toBe(false);
      expect(link.inTrouble()).toBe(true);
      expect(problems).toContain('claim');
    } finally {
      await link.close();
    }
  });
});

describe('LookupStore in front of a real redis-server, as two instances', () => {
  let redis: RedisServer;
  const problems: string[] = [];
  const links: RedisLink[] = [];
  const instance = () => {
    const link = new RedisLink({ url: redis.url, onProblem: (op, e) => problems.push(`${op}: ${e.message}`) });
    links.push(link);
    return new LookupStore({
      maxEntries: 100,
      maxBytes: 100_000,
      coalesce: true,
      shared: new RedisCache(link, { leaseMs: 5000, coalesce: true, pollMs: 60_000 }),
    });
  };
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await Promise.all(links.map((l) => l.close()));
    await redis?.stop();
  });

  it('makes one call for both, hands the answer over at once, and is never in trouble on the way', async () => {
    const [a, b] = [instance(), instance()];
    for (let i = 0; i < 100 && !links.every((l) => l.healthy()); i++) await new Promise((r) => setTimeout(r, 20));
    const { run, release, calls } = lead();
    const first = a.once('k', true, run);
    await new Promise((r) => setTimeout(r, 50));
    const second = b.once('k', true, run);
    await new Promise((r) => setTimeout(r, 50));
    release();
    expect(await first).toBeUndefined();
    // Heard on the channel: the waiter's next look would come a minute later.
    expect(await second).toEqual({ entry: 'answer', how: 'flight' });
    expect(await b.once('k', true, run)).toEqual({ entry: 'answer', how: 'hit' });
    expect(calls.n).toBe(1);
    expect(links.some((l) => l.inTrouble())).toBe(false);
    expect(problems).toEqual([]);
  });
});
