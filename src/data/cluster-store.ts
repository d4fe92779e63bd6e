import cluster, { type Worker } from 'node:cluster';
import { answerWorkers, askPrimary, hearWorkers, tellPrimary } from './ipc.js';
import type { Claim, ClaimOptions, Lease, SharedLookupStore, MemoryStore } from './store.js';

/**
 * The workers of one instance share the primary's MemoryStore over the cluster's one IPC
 * protocol (./ipc.ts): a worker asks for a claim and the primary answers at once, `hit`, `lead`
 * or `wait` with a ticket; a waiter then asks for its ticket's outcome, answered once the call it
 * waits on is over, however long that takes (up to the lead's lease). A lead tells the primary
 * its outcome (`settle` or `abandon`). So a lookup answered on one worker is a hit on every
 * worker, and one call in flight serves them all.
 */
const CLAIM = 'store-claim';
const AWAIT = 'store-await';
const SETTLE = 'store-settle';
const ABANDON = 'store-abandon';
const PEEK = 'store-peek';
const KEEP = 'store-keep';

/** The primary's answer to a claim or a ticket: `lease` names a lead's lease, `ticket` a wait, in the primary's book. */
type ClaimReply = { kind: 'hit'; entry: string } | { kind: 'lead'; lease: number } | { kind: 'wait'; ticket: number };
type Outcome = { lease: number; entry: string; ttlMs: number } | { lease: number };

/** A worker's side: every claim goes to the primary. */
export class ClusterStore implements SharedLookupStore {
  readonly kind = 'cluster';

  constructor() {
    if (!process.send) throw new TypeError('ClusterStore runs in a cluster worker');
  }

  async claim(key: string, options: ClaimOptions): Promise<Claim> {
    // The primary is gone (the worker is on its way out): no sharing, as with no store.
    if (!process.connected) return { kind: 'lead', lease: NO_LEASE };
    return claimOf(await askPrimary<ClaimReply>(CLAIM, { key, read: options.read }).catch(() => undefined));
  }

  async peek(key: string): Promise<string | undefined> {
    if (!process.connected) return undefined;
    return askPrimary<string | undefined>(PEEK, { key }).catch(() => undefined);
  }

  keep(key: string, entry: string, ttlMs: number): void {
    tellPrimary(KEEP, { key, entry, ttlMs });
  }

  healthy(): boolean {
    return process.connected;
  }

  async close(): Promise<void> {}
}

/** The primary's reply as a claim; no reply (the primary is gone) is a lead that shares nothing. */
function claimOf(reply: ClaimReply | undefined): Claim {
  if (!reply) return { kind: 'lead', lease: NO_LEASE };
  if (reply.kind === 'hit') return reply;
  if (reply.kind === 'lead') return { kind: 'lead', lease: leaseOf(reply.lease) };
  // No time-out here: the primary answers once the call waited on is over, or its lease ran out.
  return { kind: 'wait', next: askPrimary<ClaimReply>(AWAIT, { ticket: reply.ticket }).then(claimOf, () => claimOf(undefined)) };
}

/** A lead's lease, settled or abandoned once, by telling the primary. */
function leaseOf(lease: number): Lease {
  let done = false;
  const once = (topic: string, outcome: Outcome) => {
    if (done) return;
    done = true;
    tellPrimary(topic, outcome);
  };
  return {
    settle: (entry, ttlMs) => once(SETTLE, { lease, entry, ttlMs }),
    abandon: () => once(ABANDON, { lease }),
  };
}

const NO_LEASE: Lease = { settle: () => undefined, abandon: () => undefined };

export interface ServeWorkersOptions {
  /** Longest a worker may lead a key: past it, or when the worker dies, a waiter takes the lead. */
  leaseMs: number;
}

/** The primary's side: answers every worker's claims from `store`. */
export function serveWorkers(store: MemoryStore, options: ServeWorkersOptions): void {
  const leases = new Map<string, { lease: Lease; timer: NodeJS.Timeout }>();
  let next = 0;
  const leaseKey = (worker: Worker, lease: number) => `${worker.id}:${lease}`;
  const take = (key: string) => {
    const held = leases.get(key);
    if (!held) return undefined;
    leases.delete(key);
    clearTimeout(held.timer);
    return held.lease;
  };

  /** Waits whose worker has not yet asked for the outcome (or is waiting for it), by worker and ticket. */
  const tickets = new Map<string, Promise<Claim>>();
  /** The claim as a reply: a lead is booked under a lease that runs out, or given back when its worker is gone. */
  const reply = (claim: Claim, worker: Worker): ClaimReply | undefined => {
    if (claim.kind === 'hit') return claim;
    if (claim.kind === 'wait') {
      const ticket = next++;
      const held = leaseKey(worker, ticket);
      // Followed from now on, whether or not the worker asks: a lead nobody takes is given back.
      tickets.set(held, settled(claim));
      return { kind: 'wait', ticket };
    }
    // Nobody to answer: the lead goes to the next waiter.
    if (worker.isDead() || !worker.isConnected()) return void claim.lease.abandon();
    const lease = next++;
    const held = leaseKey(worker, lease);
    const timer = setTimeout(() => take(held)?.abandon(), options.leaseMs);
    timer.unref();
    leases.set(held, { lease: claim.lease, timer });
    return { kind: 'lead', lease };
  };

  answerWorkers(CLAIM, (payload, worker) => {
    const { key, read } = payload as { key: string; read: boolean };
    return reply(store.claimNow(key, { read }), worker);
  });
  answerWorkers(AWAIT, async (payload, worker) => {
    const held = leaseKey(worker, (payload as { ticket: number }).ticket);
    const waiting = tickets.get(held);
    tickets.delete(held);
    return waiting ? reply(await waiting, worker) : undefined;
  });
  answerWorkers(PEEK, (payload) => store.peekNow((payload as { key: string }).key));
  hearWorkers(KEEP, (payload) => {
    const { key, entry, ttlMs } = payload as { key: string; entry: string; ttlMs: number };
    store.keep(key, entry, ttlMs);
  });
  hearWorkers(SETTLE, (payload, worker) => {
    const { lease, entry, ttlMs } = payload as { lease: number; entry: string; ttlMs: number };
    take(leaseKey(worker, lease))?.settle(entry, ttlMs);
  });
  hearWorkers(ABANDON, (payload, worker) => take(leaseKey(worker, (payload as { lease: number }).lease))?.abandon());
  // A worker that died mid-call leaves its keys to the next waiter at once.
  cluster.on('exit', (worker: Worker) => forget(worker, leases.keys(), take, tickets));
}

/** A worker that is gone: its leases given back, and each lead its waits come to. */
function forget(
  worker: Worker,
  leaseKeys: Iterable<string>,
  take: (key: string) => Lease | undefined,
  tickets: Map<string, Promise<Claim>>,
) {
  const prefix = `${worker.id}:`;
  for (const key of [...leaseKeys]) if (key.startsWith(prefix)) take(key)?.abandon();
  for (const [key, waiting] of [...tickets]) {
    if (!key.startsWith(prefix)) continue;
    tickets.delete(key);
    void waiting.then(giveBack);
  }
}

/** A wait followed to its end: the answer, or the lead handed on. */
async function settled(claim: Claim): Promise<Claim> {
  while (claim.kind === 'wait') claim = await claim.next;
  return claim;
}

function giveBack(claim: Claim): void {
  if (claim.kind === 'lead') claim.lease.abandon();
}
