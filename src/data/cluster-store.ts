import cluster, { type Worker } from 'node:cluster';
import type { Claim, ClaimOptions, Lease, SharedLookupStore, MemoryStore } from './store.js';

/**
 * The workers of one instance share the primary's MemoryStore over node:cluster's IPC
 * channel: a worker asks (`claim`), the primary answers `hit`, `lead` or `wait` (and later
 * the waited-for outcome), and a lead reports back (`settle` or `abandon`). So a lookup
 * answered on one worker is a hit on every worker, and one call in flight serves them all.
 */

const CLAIM = 'gateway:store-claim';
const REPLY = 'gateway:store-reply';
const SETTLE = 'gateway:store-settle';
const ABANDON = 'gateway:store-abandon';

type Reply = { type: typeof REPLY; id: number } & ({ kind: 'hit'; entry: string } | { kind: 'wait' } | { kind: 'lead' });
type Request =
  | { type: typeof CLAIM; id: number; key: string; read: boolean }
  | { type: typeof SETTLE; id: number; entry: string; ttlMs: number }
  | { type: typeof ABANDON; id: number };

/** A worker's side: every claim goes to the primary. */
export class ClusterStore implements SharedLookupStore {
  readonly kind = 'cluster';
  #next = 0;
  readonly #pending = new Map<number, (reply: Reply) => void>();
  readonly #onMessage = (message: Reply) => {
    if (message?.type !== REPLY) return;
    this.#pending.get(message.id)?.(message);
  };

  constructor() {
    if (!process.send) throw new TypeError('ClusterStore runs in a cluster worker');
    process.on('message', this.#onMessage);
  }

  claim(key: string, options: ClaimOptions): Promise<Claim> {
    // The primary is gone (the worker is on its way out): no sharing, as with no store.
    if (!process.connected) return Promise.resolve({ kind: 'lead', lease: NO_LEASE });
    const id = this.#next++;
    const claimed = this.#reply(id);
    send({ type: CLAIM, id, key, read: options.read });
    return claimed;
  }

  /** The claim the primary's next reply for `id` stands for. */
  #reply(id: number): Promise<Claim> {
    return new Promise<Claim>((resolve) =>
      this.#pending.set(id, (reply) => {
        if (reply.kind === 'wait') return resolve({ kind: 'wait', next: this.#reply(id) });
        this.#pending.delete(id);
        resolve(reply.kind === 'hit' ? { kind: 'hit', entry: reply.entry } : { kind: 'lead', lease: this.#lease(id) });
      }),
    );
  }

  #lease(id: number): Lease {
    let done = false;
    const once = (message: Request) => {
      if (done) return;
      done = true;
      send(message);
    };
    return {
      settle: (entry, ttlMs) => once({ type: SETTLE, id, entry, ttlMs }),
      abandon: () => once({ type: ABANDON, id }),
    };
  }

  healthy(): boolean {
    return process.connected;
  }

  async close(): Promise<void> {
    process.off('message', this.#onMessage);
  }
}

/** A message to the primary; one that cannot be sent (the primary is gone) is dropped. */
function send(message: Request): void {
  if (process.connected) process.send!(message, undefined, {}, () => undefined);
}

const NO_LEASE: Lease = { settle: () => undefined, abandon: () => undefined };

export interface ServeWorkersOptions {
  /** Longest a worker may lead a key: past it, or when the worker dies, a waiter takes the lead. */
  leaseMs: number;
}

/** The primary's side: answers every worker's claims from `store`. */
export function serveWorkers(store: MemoryStore, options: ServeWorkersOptions): void {
  const leases = new Map<string, { lease: Lease; timer: NodeJS.Timeout }>();
  const leaseKey = (worker: Worker, id: number) => `${worker.id}:${id}`;
  const take = (key: string) => {
    const held = leases.get(key);
    if (!held) return undefined;
    leases.delete(key);
    clearTimeout(held.timer);
    return held.lease;
  };

  const answer = (worker: Worker, id: number, claim: Claim): void => {
    if (worker.isDead() || !worker.isConnected()) {
      // Nobody to answer: a lead goes to the next waiter, a wait still has to be followed.
      if (claim.kind === 'lead') claim.lease.abandon();
      if (claim.kind === 'wait') void claim.next.then((next) => answer(worker, id, next));
      return;
    }
    const reply = (body: { kind: 'hit'; entry: string } | { kind: 'wait' } | { kind: 'lead' }): void => {
      worker.send({ type: REPLY, id, ...body }, undefined, () => undefined);
    };
    switch (claim.kind) {
      case 'hit':
        return reply({ kind: 'hit', entry: claim.entry });
      case 'wait':
        reply({ kind: 'wait' });
        void claim.next.then((next) => answer(worker, id, next));
        return;
      case 'lead': {
        const key = leaseKey(worker, id);
        const timer = setTimeout(() => take(key)?.abandon(), options.leaseMs);
        timer.unref();
        leases.set(key, { lease: claim.lease, timer });
        return reply({ kind: 'lead' });
      }
    }
  };

  cluster.on('message', (worker: Worker, message: Request) => {
    switch (message?.type) {
      case CLAIM:
        return answer(worker, message.id, store.claimNow(message.key, { read: message.read }));
      case SETTLE:
        return take(leaseKey(worker, message.id))?.settle(message.entry, message.ttlMs);
      case ABANDON:
        return take(leaseKey(worker, message.id))?.abandon();
    }
  });
  // A worker that died mid-call leaves its keys to the next waiter at once.
  cluster.on('exit', (worker: Worker) => {
    const prefix = `${worker.id}:`;
    for (const key of [...leases.keys()]) if (key.startsWith(prefix)) take(key)?.abandon();
  });
}
