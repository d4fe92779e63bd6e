import { MemoryStore, type Claim, type ClaimOptions, type Lease, type LookupStore } from './store.js';

export interface LocalFirstOptions {
  /**
   * Longest wait for the shared store's first answer to a claim; past it this process makes the
   * call itself (a late lead is given back at once). @default 2000
   */
  claimTimeoutMs?: number;
  /** Told when the shared store did not answer a claim in time. */
  onTimeout?: () => void;
}

/**
 * A shared store (the cluster primary's, or Redis) behind this process's own calls in flight.
 * Only the first of this process's callers for a key asks the shared store; the others wait
 * for that caller here. So when the shared store is slow, full or gone, and every claim that
 * reaches it turns into a lead, this process still makes at most one call per key at a time:
 * coalescing is never worse than one process's.
 */
export class LocalFirstStore implements LookupStore {
  readonly kind: LookupStore['kind'];
  readonly #shared: LookupStore;
  /** Calls in flight only: it keeps nothing (every settle here has no time to live). */
  readonly #local = new MemoryStore({ maxEntries: 1, coalesce: true });
  readonly #timeoutMs: number;
  readonly #onTimeout: (() => void) | undefined;

  constructor(shared: LookupStore, options: LocalFirstOptions = {}) {
    this.kind = shared.kind;
    this.#shared = shared;
    this.#timeoutMs = options.claimTimeoutMs ?? 2000;
    this.#onTimeout = options.onTimeout;
  }

  claim(key: string, options: ClaimOptions): Promise<Claim> {
    // A caller that must not read the cache never joins one that may have.
    const local = this.#local.claimNow(options.read ? key : `${key}#fresh`, { read: false });
    if (local.kind === 'lead') return this.#viaShared(key, options, local.lease);
    if (local.kind === 'hit') return Promise.resolve(local);
    // The local lead's outcome, or its lead when it gave up: then this caller asks the shared store.
    return Promise.resolve({
      kind: 'wait',
      next: local.next.then((next) => (next.kind === 'lead' ? this.#viaShared(key, options, next.lease) : next)),
    });
  }

  async #viaShared(key: string, options: ClaimOptions, local: Lease): Promise<Claim> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const asked = this.#shared.claim(key, options);
    const timedOut = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), this.#timeoutMs);
    });
    const first = await Promise.race([asked, timedOut]);
    clearTimeout(timer);
    if (first === undefined) {
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
    return this.#shared.close();
  }
}

/**
 * The shared store's claim, passed on to this process's waiters too: its answer settles them,
 * and a lead's outcome settles both the shared store's waiters and this process's.
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
            local.settle(entry, 0);
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
