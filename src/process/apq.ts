import type { ApqStore } from '../data/apq-store.js';
import { answerWorkers, askPrimary } from '../data/ipc.js';

const GET = 'apq-get';
const SET = 'apq-set';

/**
 * A worker's persisted queries, kept by its primary: a hash registered through one worker is
 * known to all (without Redis, each would otherwise ask the client for the document again).
 */
export function clusterApqStore(): ApqStore {
  return {
    get: (hash) => askPrimary<string | null>(GET, { hash }),
    set: (hash, query) => askPrimary(SET, { hash, query }),
  };
}

/** The primary's side: its own store answers every worker. */
export function serveApqToWorkers(store: ApqStore): void {
  answerWorkers(GET, (payload) => store.get((payload as { hash: string }).hash) ?? null);
  answerWorkers(SET, (payload) => {
    const { hash, query } = payload as { hash: string; query: string };
    return store.set(hash, query);
  });
}
