import { LRUCache } from 'lru-cache';
import { MemoryStore, type Claim, type ClaimOptions, type Lease, type SharedLookupStore } from './store.js';

export interface LocalFirstOptions {
  /**
   * Longest wait for the shared store's first answer to a claim; past it this process makes the
   * call itself (a late lead is given back at once). @default 2000
   */
  claimTimeoutMs?: number;
  /** Told when the shared store did not answer a claim in time. */
  onTimeout?: () => void;
  /** Bounds of the answers this process keeps for when the shared store is in trouble. @default 10000 entries, 50 MiB */
  keep?: { maxEntries: number; maxBytes: number };
}

/** How long after its last failure the shared store counts as in trouble. */
const TROUBLE_MS = 30_000;

/**
 * A shared store (Redis) behind this process's own calls in flight
 * and answers. Only the first of this process's callers for a key asks the shared store; the
 * others wait for that caller here. Every answer this process settles is kept here too, and read
 * while the shared store is in trouble (gone, or failing or timing out in the last 30 s): so when
 * it is slow, full or gone, this process still pays at most once per key, as a process on its
 * own memory store would. While the shared store is well, only its answers are read, so that one
 * instance's refresh (`no-cache`) is what every instance sees.
 */
export class LocalFirstStore implements SharedLookupStore {
  readonly kind: SharedLookupStore['kind'];
  readonly #shared: SharedLookupStore;
  /** Calls in flight: every settle here has no time to live. */
  readonly #local = new MemoryStore({ maxEntries: 1, coalesce: true });
  readonly #kept: LRUCache<string, string>;
  readonly #timeoutMs: number;
  readonly #onTimeout: (() => void) | undefined;
  #troubleUntil = 0;

  constructor(shared: SharedLookupStore, options: LocalFirstOptions = {}) {
    this.kind = shared.kind;
    this.#shared = shared;
    this.#timeoutMs = options.claimTimeoutMs ?? 2000;
    this.#onTimeout = options.onTimeout;
    this.#kept = new LRUCache<string, string>({
      max: options.keep?.maxEntries ?? 10_000,
      maxSize: options.keep?.maxBytes ?? 50 * 1024 * 1024,
      sizeCalculation: (value, key) => 2 * (value.length + key.length),
      ttlAutopurge: false,
    });
  }

  /** The shared store just failed or timed out: read this process's answers for a while. */
  troubled(): void {
    this.#troubleUntil = performance.now() + TROUBLE_MS;
  }

  #inTrouble(): boolean {
    return !this.#shared.healthy() || performance.now() < this.#troubleUntil;
  }

  claim(key: string, options: ClaimOptions): Promise<Claim> {
    if (options.read && this.#inTrouble()) {
      const entry = this.#kept.get(key);
      if (entry !== undefined) return Promise.resolve({ kind: 'hit', entry });
    }
    // A caller that must not read the cache never joins one that may have.
    const local = this.#local.claimNow(options.read ? key : `${key}#fresh`, { read: false });
    if (local.kind === 'lead') return this.#viaShared(key, options, this.#keeping(key, local.lease));
    if (local.kind === 'hit') return Promise.resolve(local);
    // The local lead's outcome, or its lead when it gave up: then this caller asks the shared store.
    return Promise.resolve({
      kind: 'wait',
      next: local.next.then((next) => (next.kind === 'lead' ? this.#viaShared(key, options, this.#keeping(key, next.lease)) : next)),
    });
  }

  /** This process's copy first (it is written with the shared one), then the shared store's, no later than a claim's time-out. */
  async peek(key: string): Promise<string | undefined> {
    const entry = this.#kept.get(key);
    if (entry !== undefined || this.#inTrouble()) return entry;
    return this.#inTime(this.#shared.peek(key));
  }

  /** What `asked` resolves with, or undefined once a claim's time-out has passed. */
  async #inTime<T>(asked: Promise<T>): Promise<T | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), this.#timeoutMs);
    });
    const first = await Promise.race([asked, timedOut]);
    clearTimeout(timer);
    return first;
  }

  keep(key: string, entry: string, ttlMs: number): void {
    if (ttlMs > 0) this.#kept.set(key, entry, { ttl: ttlMs });
    this.#shared.keep(key, entry, ttlMs);
  }

  /** The local lease, which also keeps what is settled with a time to live. */
  #keeping(key: string, lease: Lease): Lease {
    return {
      settle: (entry, ttlMs) => {
        if (ttlMs > 0) this.#kept.set(key, entry, { ttl: ttlMs });
        lease.settle(entry, 0);
      },
      abandon: () => lease.abandon(),
    };
  }

  async #viaShared(key: string, options: ClaimOptions, local: Lease): Promise<Claim> {
    const asked = this.#shared.claim(key, options);
    const first = await this.#inTime(asked);
    if (first === undefined) {
      this.troubled();
      this.#onTimeout?.();
      // Whatever the shared store answers later is not used; a lead it hands out is given back.
      void asked.then(
        (claim) => giveBack(claim),
        () => undefined,
      );
      return relay({ kind: 'lead', lease: NO_LEASE }, local);
    }
    return relay(first, local);
  }

  healthy(): boolean {
    return this.#shared.healthy();
  }

  close(): Promise<void> {
    this.#kept.clear();
    return this.#shared.close();
  }
}

/**
 * The shared store's claim, passed on to this process's waiters too: its answer settles them,
 * and a lead's outcome settles both the shared store's waiters and this process's (which keeps it).
 */
function relay(claim: Claim, local: Lease): Claim {
  switch (claim.kind) {
    case 'hit':
      local.settle(claim.entry, 0);
      return claim;
    case 'wait':
      return {
        kind: 'wait',
        // A shared wait that fails leaves this caller to make the call, as with no store.
        next: claim.next.then(
          (next) => relay(next, local),
          () => relay({ kind: 'lead', lease: NO_LEASE }, local),
        ),
      };
    case 'lead':
      return {
        kind: 'lead',
        lease: {
          settle: (entry, ttlMs) => {
            claim.lease.settle(entry, ttlMs);
            local.settle(entry, ttlMs);
          },
          abandon: () => {
            claim.lease.abandon();
            local.abandon();
          },
        },
      };
  }
}

/** A claim nobody will use: its lead goes back, its wait is followed to a lead that goes back. */
function giveBack(claim: Claim): void {
  if (claim.kind === 'lead') claim.lease.abandon();
  else if (claim.kind === 'wait') void claim.next.then(giveBack, () => undefined);
}

const NO_LEASE: Lease = { settle: () => undefined, abandon: () => undefined };
