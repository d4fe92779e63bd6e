import cluster, { type Worker } from 'node:cluster';
import { answerWorkers, askPrimary, hearWorkers, tellPrimary } from './ipc.js';
import type { Claim, ClaimOptions, Lease, SharedLookupStore, MemoryStore } from './store.js';

/**
 * The workers of one instance share the primary's MemoryStore over the cluster's one IPC
 * protocol (./ipc.ts): a worker asks for a claim, the primary answers `hit` or `lead` once any
 * call it waited on is over (saying whether it waited), and a lead tells the primary its
 * outcome (`settle` or `abandon`). So a lookup answered on one worker is a hit on every worker,
 * and one call in flight serves them all.
 */
const CLAIM = 'store-claim';
const SETTLE = 'store-settle';
const ABANDON = 'store-abandon';

/** The primary's answer to a claim: `lease` names the lead's lease in the primary's book. */
type ClaimReply = ({ kind: 'hit'; entry: string } | { kind: 'lead'; lease: number }) & { waited: boolean };
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
    const reply = await askPrimary<ClaimReply>(CLAIM, { key, read: options.read }).catch(() => undefined);
    if (!reply) return { kind: 'lead', lease: NO_LEASE };
    const claim: Claim = reply.kind === 'hit' ? { kind: 'hit', entry: reply.entry } : { kind: 'lead', lease: leaseOf(reply.lease) };
    // A claim that waited on another call says so, as the primary's own store would: the lookup counts it as shared.
    return reply.waited ? { kind: 'wait', next: Promise.resolve(claim) } : claim;
  }

  healthy(): boolean {
    return process.connected;
  }

  async close(): Promise<void> {}
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

  answerWorkers(CLAIM, async (payload, worker): Promise<ClaimReply | undefined> => {
    const { key, read } = payload as { key: string; read: boolean };
    let claim = store.claimNow(key, { read });
    let waited = false;
    while (claim.kind === 'wait') {
      waited = true;
      claim = await claim.next;
    }
    if (claim.kind === 'hit') return { kind: 'hit', entry: claim.entry, waited };
    // Nobody to answer: the lead goes to the next waiter.
    if (worker.isDead() || !worker.isConnected()) return void claim.lease.abandon();
    const lease = next++;
    const held = leaseKey(worker, lease);
    const timer = setTimeout(() => take(held)?.abandon(), options.leaseMs);
    timer.unref();
    leases.set(held, { lease: claim.lease, timer });
    return { kind: 'lead', lease, waited };
  });
  hearWorkers(SETTLE, (payload, worker) => {
    const { lease, entry, ttlMs } = payload as { lease: number; entry: string; ttlMs: number };
    take(leaseKey(worker, lease))?.settle(entry, ttlMs);
  });
  hearWorkers(ABANDON, (payload, worker) => take(leaseKey(worker, (payload as { lease: number }).lease))?.abandon());
  // A worker that died mid-call leaves its keys to the next waiter at once.
  cluster.on('exit', (worker: Worker) => {
    const prefix = `${worker.id}:`;
    for (const key of [...leases.keys()]) if (key.startsWith(prefix)) take(key)?.abandon();
  });
}
