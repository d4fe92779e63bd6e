import { randomUUID } from 'node:crypto';
import type { RedisLink } from './redis.js';

/** An answer found: kept (`hit`), or handed over by another instance's call (`flight`). */
export type Found = { entry: string; how: 'hit' | 'flight' };
/** No answer: make the call, holding the key's lock (`owner`), or unlocked when Redis failed or the wait ran out. */
export type Lead = { owner?: string; failed?: boolean };

/** In one step, so that no answer is stored between the look and the lock: the answer, else the lock (none to take without coalescing), else nothing. */
const CLAIM = `if ARGV[3] == '1' then local v = redis.call('get', KEYS[1]); if v then return {1, v} end end
if ARGV[4] == '0' then return {3} end
if redis.call('set', KEYS[2], ARGV[1], 'PX', ARGV[2], 'NX') then return {2} end
return {0}`;

/** Deletes the lock only while it is still this lead's (it may have expired and been taken). */
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * Lookups shared by every instance: the lock recipe (`SET NX PX`, released only by its owner). The lock's holder makes the
 * call, stores and publishes the answer; the others wait for it, looking now and then for the answer or a free lock, so a
 * lead that dies only delays them until its lock expires. A failed command costs a call, never a lookup.
 */
export class RedisCache {
  readonly #listeners = new Map<string, Set<(message: string) => void>>();
  readonly #owner = randomUUID();
  #leases = 0;

  constructor(
    readonly link: RedisLink,
    /** Longest a lead holds a key; `pollMs`: how often a waiter looks besides being told. */
    private readonly options: { leaseMs: number; pollMs?: number; coalesce: boolean },
  ) {
    if (!options.coalesce) return;
    // One subscription to every key's channel, once connected: no command per wait.
    const subscriber = link.subscriber.on('pmessage', (_: string, channel: string, message: string) => {
      for (const listener of this.#listeners.get(channel) ?? []) listener(message);
    });
    subscriber.on('ready', () => void subscriber.psubscribe(`*${DONE}`).catch((e: Error) => link.problem('subscribe', e)));
  }

  /** The kept answer (when `read`), or the lead, waiting for another instance's call in flight when there is one. */
  async claim(key: string, read: boolean): Promise<Found | Lead> {
    try {
      return (await this.#try(key, read)) ?? (await this.#wait(key, read));
    } catch (error) {
      this.link.problem('claim', error as Error);
      return { failed: true };
    }
  }

  /** Hands the lead's entry to every waiter and keeps it `ttlMs` (undefined: gave up, the next takes the lead). */
  finish(key: string, lead: Lead, handover: { entry: string; ttlMs: number } | undefined): void {
    if (!handover && !lead.owner) return;
    const settle = this.link.send((redis) => {
      const pipeline = redis.pipeline();
      if (handover && handover.ttlMs > 0) pipeline.set(key, handover.entry, 'PX', Math.max(1, Math.round(handover.ttlMs)));
      // Published even without the lock: callers waiting elsewhere take the answer rather than their own call.
      pipeline.publish(channelOf(key), handover?.entry ?? '');
      if (lead.owner) pipeline.eval(RELEASE, 1, lockOf(key), lead.owner);
      return pipeline.exec();
    });
    // A pipeline resolves with each command's own error (an OOM from a full Redis among them).
    const failed = (error: Error) => this.link.problem('settle', error);
    settle.then((results) => results?.forEach(([error]) => error && failed(error)), failed);
  }

  get(key: string): Promise<string | undefined> {
    const failed = (error: Error) => void this.link.problem('claim', error);
    return this.link.send((redis) => redis.get(key)).then((entry) => entry ?? undefined, failed);
  }

  set(key: string, entry: string, ttlMs: number): void {
    this.link
      .send((redis) => redis.set(key, entry, 'PX', Math.max(1, Math.round(ttlMs))))
      .catch((error: Error) => this.link.problem('settle', error));
  }

  /** The kept answer, or the lock, or undefined while another caller holds it. */
  async #try(key: string, read: boolean): Promise<Found | Lead | undefined> {
    const owner = `${this.#owner}:${this.#leases++}`;
    const args = [key, lockOf(key), owner, this.options.leaseMs, read ? '1' : '0', this.options.coalesce ? '1' : '0'];
    const [found, entry] = (await this.link.send((redis) => redis.eval(CLAIM, 2, ...args))) as [number, string?];
    if (found === 1) return { entry: entry!, how: 'hit' };
    return found === 0 ? undefined : found === 2 ? { owner } : {};
  }

  /** Waits for the lead's message, a kept answer or a free lock; never longer than a lease and a poll. */
  async #wait(key: string, read: boolean): Promise<Found | Lead> {
    const { leaseMs, pollMs = 100 } = this.options;
    const giveUpAt = Date.now() + leaseMs + pollMs;
    const channel = channelOf(key);
    let heard: string | undefined;
    let wake = () => {};
    // The lead's answer, once heard, is kept: a later empty message (another lead gave up) does not erase it.
    const listener = (message: string) => ((heard ||= message), wake());
    const listeners = this.#listeners.get(channel) ?? this.#listeners.set(channel, new Set()).get(channel)!;
    listeners.add(listener);
    try {
      for (;;) {
        let timer: NodeJS.Timeout | undefined;
        if (heard === undefined) await new Promise<void>((resolve) => ((wake = resolve), (timer = setTimeout(resolve, pollMs))));
        clearTimeout(timer);
        if (heard) return { entry: heard, how: 'flight' };
        // Nothing heard, or an empty message (the lead gave up): look for the answer or a free lock.
        heard = undefined;
        const claim = await this.#try(key, read);
        // The answer came while looking, and the lock with it: the lock goes back.
        if (heard && claim && 'owner' in claim) this.finish(key, claim, undefined);
        if (claim && !heard) return 'entry' in claim ? { entry: claim.entry, how: 'flight' } : claim;
        if (Date.now() > giveUpAt) return {};
      }
    } finally {
      if (listeners.delete(listener) && listeners.size === 0) this.#listeners.delete(channel);
    }
  }
}

const DONE = '#done';
const lockOf = (key: string) => `${key}#lock`;
const channelOf = (key: string) => `${key}${DONE}`;
