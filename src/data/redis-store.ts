import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { connectRedis, type RedisConnection, type RedisTarget } from './redis-connection.js';
import type { Claim, ClaimOptions, Lease, SharedLookupStore } from './store.js';

export interface RedisStoreOptions extends RedisTarget {
  /** Longest a lead may hold a key (its lock's time to live): past it, a waiter makes the call itself. */
  leaseMs: number;
  /** Join calls in flight on any instance (COALESCE); off, every miss leads its own call. @default true */
  coalesce?: boolean;
  /** How often a waiter looks for the answer or a free lock, besides being told. @default 100 */
  pollMs?: number;
  /** Longest wait for one command before it counts as a miss (and the lookup calls unshared). @default 500 */
  commandTimeoutMs?: number;
  /** Told once when the store goes away and once when it is back. */
  onStateChange?: (state: 'up' | 'down', error?: Error) => void;
  /** Told of every command that failed or timed out (each costs at most a call, never a failed lookup). */
  onError?: (op: StoreOp, error: Error) => void;
}

/**
 * The store's steps: looking a key up or taking its lock, waiting for another's call, storing an
 * outcome, subscribing; and the persisted queries' own commands (src/data/apq-store.ts).
 */
export type StoreOp = 'claim' | 'wait' | 'settle' | 'subscribe' | 'apq' | 'budget';

/**
 * In one step, so that no answer can be stored between the look and the lock: the kept answer
 * (when reading), else the lock for this caller, else nothing (someone else holds it).
 */
const CLAIM = `if ARGV[3] == '1' then local v = redis.call('get', KEYS[1]); if v then return {1, v} end end
if redis.call('set', KEYS[2], ARGV[1], 'PX', ARGV[2], 'NX') then return {2} end
return {0}`;

/** Deletes the lock only while it is still this lead's (it may have expired and been taken). */
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * Redis shared by every instance (ioredis). A miss takes a short lock on the key (`SET NX PX`);
 * whoever holds it makes the call, stores the answer, publishes it on the key's channel and
 * releases the lock. The others wait for that message, looking now and then for the stored
 * answer or a free lock, so a lead that dies only delays them until its lock expires.
 * While Redis is away, commands fail at once (no offline queue) and every claim is a lead:
 * an outage costs calls, never a failed lookup. ioredis reconnects by itself.
 */
export class RedisStore implements SharedLookupStore {
  readonly kind = 'redis';
  readonly #redis: RedisConnection;
  /** A connection of its own for pub/sub, as Redis requires. */
  readonly #subscriber: RedisConnection | undefined;
  readonly #listeners = new Map<string, Set<(message: string) => void>>();
  readonly #options: Required<Omit<RedisStoreOptions, 'onStateChange' | 'onError' | 'cluster'>> & RedisTarget;
  readonly #onError: (op: StoreOp, error: Error) => void;
  readonly #owner = randomUUID();
  #leases = 0;
  #state: 'unknown' | 'up' | 'down' = 'unknown';
  #closing = false;

  constructor(options: RedisStoreOptions) {
    const { onStateChange: _, onError, ...rest } = options;
    this.#options = { coalesce: true, pollMs: 100, commandTimeoutMs: 500, ...rest };
    this.#onError = onError ?? (() => undefined);
    this.#redis = this.#connect(options.onStateChange);
    if (this.#options.coalesce) {
      const subscriber = (this.#subscriber = this.#connect());
      subscriber.on('message', (channel: string, message: string) => {
        for (const listener of this.#listeners.get(channel) ?? []) listener(message);
      });
      // Channels whose subscription failed while Redis was away are taken up again.
      subscriber.on('ready', () => {
        if (this.#listeners.size) subscriber.subscribe(...this.#listeners.keys()).catch((e: Error) => this.#onError('subscribe', e));
      });
    }
  }

  #connect(onStateChange?: RedisStoreOptions['onStateChange']): RedisConnection {
    const redis = connectRedis(this.#options, this.#options.commandTimeoutMs);
    // Without an 'error' listener ioredis would crash the process; with it, one log line per change.
    redis.on('ready', () => {
      if (this.#state === 'up' || !onStateChange) return;
      this.#state = 'up';
      onStateChange('up');
    });
    const down = (error?: Error) => {
      if (this.#state === 'down' || this.#closing || !onStateChange) return;
      this.#state = 'down';
      onStateChange('down', error);
    };
    redis.on('error', down);
    redis.on('close', () => down());
    return redis;
  }

  async claim(key: string, options: ClaimOptions): Promise<Claim> {
    try {
      if (!this.#options.coalesce) {
        const entry = options.read ? await this.#redis.get(key) : null;
        return entry !== null ? { kind: 'hit', entry } : { kind: 'lead', lease: this.#lease(key, undefined) };
      }
      return (await this.#try(key, options)) ?? { kind: 'wait', next: this.#wait(key, options) };
    } catch (error) {
      this.#onError('claim', error as Error);
      return { kind: 'lead', lease: this.#lease(key, undefined) };
    }
  }

  async peek(key: string): Promise<string | undefined> {
    try {
      return (await this.#redis.get(key)) ?? undefined;
    } catch (error) {
      this.#onError('claim', error as Error);
      return undefined;
    }
  }

  keep(key: string, entry: string, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.#redis.set(key, entry, 'PX', Math.max(1, Math.round(ttlMs))).catch((error: Error) => this.#onError('settle', error));
  }

  /** The kept answer, or the lead, or undefined while another caller holds the key. */
  async #try(key: string, options: ClaimOptions): Promise<Claim | undefined> {
    const owner = `${this.#owner}:${this.#leases++}`;
    const [found, entry] = (await this.#redis.eval(CLAIM, 2, key, lockOf(key), owner, this.#options.leaseMs, options.read ? '1' : '0')) as [
      number,
      string?,
    ];
    if (found === 1) return { kind: 'hit', entry: entry! };
    if (found === 2) return { kind: 'lead', lease: this.#lease(key, owner) };
    return undefined;
  }

  /** Settling stores the answer, tells the waiters, then frees the lock, in one round trip. */
  #lease(key: string, owner: string | undefined): Lease {
    let done = false;
    const send = (build: (p: ReturnType<Redis['pipeline']>) => void) => {
      if (done) return;
      done = true;
      const pipeline = this.#redis.pipeline();
      build(pipeline);
      if (owner) pipeline.eval(RELEASE, 1, lockOf(key), owner);
      // A lost write costs a later call, nothing more; it is counted. A pipeline resolves with
      // each command's own error (an OOM from a full Redis among them) rather than rejecting.
      pipeline.exec().then(
        (results) => {
          const failed = results?.find(([error]) => error);
          if (failed) this.#onError('settle', failed[0]!);
        },
        (error: Error) => this.#onError('settle', error),
      );
    };
    return {
      settle: (entry, ttlMs) =>
        send((p) => {
          if (ttlMs > 0) p.set(key, entry, 'PX', Math.max(1, Math.round(ttlMs)));
          // Published even by a lead that holds no lock (it got its lead from a failed command):
          // callers waiting elsewhere take the answer rather than their own call.
          p.publish(channelOf(key), entry);
        }),
      // An empty message: look again now (the lock is free).
      abandon: () => send((p) => (owner ? p.publish(channelOf(key), '') : undefined)),
    };
  }

  /** Waits for the lead's message, or a stored answer, or a free lock; never longer than a lease and a poll. */
  #wait(key: string, options: ClaimOptions): Promise<Claim> {
    return new Promise<Claim>((resolve) => {
      const channel = channelOf(key);
      const giveUpAt = Date.now() + this.#options.leaseMs + this.#options.pollMs;
      let done = false;
      let looking = false;
      const finish = (claim: Claim) => {
        done = true;
        clearInterval(timer);
        this.#unlisten(channel, onMessage);
        resolve(claim);
      };
      const look = async () => {
        if (done || looking) return;
        looking = true;
        try {
          const claim = await this.#try(key, options);
          if (claim && done && claim.kind === 'lead') return claim.lease.abandon();
          if (claim && !done) return finish(claim);
          if (!done && Date.now() > giveUpAt) finish({ kind: 'lead', lease: this.#lease(key, undefined) });
        } catch (error) {
          // Redis went away while waiting: make the call, as with no store.
          this.#onError('wait', error as Error);
          if (!done) finish({ kind: 'lead', lease: this.#lease(key, undefined) });
        } finally {
          looking = false;
        }
      };
      const onMessage = (message: string) => {
        if (done) return;
        if (message === '') void look();
        else finish({ kind: 'hit', entry: message });
      };
      const timer = setInterval(() => void look(), this.#options.pollMs);
      // Once subscribed, look at once: the answer may have been published before.
      void this.#listen(channel, onMessage).then(look);
    });
  }

  async #listen(channel: string, listener: (message: string) => void): Promise<void> {
    let set = this.#listeners.get(channel);
    if (!set) this.#listeners.set(channel, (set = new Set()));
    set.add(listener);
    if (set.size > 1) return;
    // Not subscribed (Redis away): the waiter still looks every poll.
    await this.#subscriber?.subscribe(channel).catch((e: Error) => this.#onError('subscribe', e));
  }

  #unlisten(channel: string, listener: (message: string) => void): void {
    const set = this.#listeners.get(channel);
    if (!set?.delete(listener) || set.size > 0) return;
    this.#listeners.delete(channel);
    this.#subscriber?.unsubscribe(channel).catch(() => undefined);
  }

  /** Both connections up: a waiter hears the lead's answer only on the subscriber's, so an instance without it is not ready. */
  healthy(): boolean {
    return this.#redis.status === 'ready' && (this.#subscriber === undefined || this.#subscriber.status === 'ready');
  }

  async close(): Promise<void> {
    this.#closing = true;
    this.#redis.disconnect();
    this.#subscriber?.disconnect();
  }
}

const lockOf = (key: string) => `${key}#lock`;
const channelOf = (key: string) => `${key}#done`;
