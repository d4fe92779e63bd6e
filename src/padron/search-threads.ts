import { Worker } from 'node:worker_threads';
import { parseText, PadronRefused, type PadronRefusal, type SearchFilter, type SearchPage } from './search.js';

/** A search asked of a thread: the index by its directory and version's name, and the search. */
export interface SearchAsked {
  id: number;
  dir: string;
  name: string;
  texto: string;
  filter: SearchFilter;
  first: number;
  after: string | undefined;
}

export type SearchAnswered =
  { id: number; page: SearchPage } | { id: number; refused: PadronRefusal; args: Record<string, number> } | { id: number; error: string };

interface Thread {
  worker: Worker;
  pending: Map<number, { resolve: (page: SearchPage) => void; reject: (error: Error) => void }>;
}

/** The thread's module: the built .js beside this one; run from the sources (tsx, vitest), the .ts through tsx's API. */
function workerUrl(): URL {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return new URL('./search-worker.js', here);
  const source = new URL('./search-worker.ts', here).href;
  const api = import.meta.resolve('tsx/esm/api');
  const boot = `import { register } from ${JSON.stringify(api)}; register(); await import(${JSON.stringify(source)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(boot)}`);
}

/**
 * Searches run on threads of their own (PADRON_SEARCH_THREADS), each reading the index on its own:
 * a search costs the event loop a message, not its walk of the streams, so lookups and other
 * searches go on meanwhile, and the machine's cores share the searches. Started on first use.
 */
export class SearchThreads {
  readonly #threads: Thread[] = [];
  #next = 0;
  #closed = false;

  constructor(readonly count: number) {}

  /** One search, on the thread with the fewest in hand; refused as the search refuses (PadronRefused). */
  run(asked: Omit<SearchAsked, 'id'>): Promise<SearchPage> {
    if (this.#closed) return Promise.reject(new Error('the search threads are closed'));
    // A text the search refuses is refused here, before any message to a thread.
    try {
      parseText(asked.texto);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    const thread = this.#pick();
    const id = this.#next++;
    return new Promise<SearchPage>((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.worker.postMessage({ ...asked, id } satisfies SearchAsked);
    });
  }

  /** Starts every thread now, so that the first searches do not wait for a thread to load. */
  warm(): void {
    while (!this.#closed && this.#threads.length < this.count) this.#start();
  }

  /** Every thread lets go of the index it holds (the register switched to another). */
  release(): void {
    for (const { worker } of this.#threads) worker.postMessage('release');
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#threads.splice(0).map(({ worker }) => worker.terminate()));
  }

  #pick(): Thread {
    if (this.#threads.length < this.count) return this.#start();
    return this.#threads.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
  }

  #start(): Thread {
    const thread: Thread = { worker: new Worker(workerUrl()), pending: new Map() };
    const { worker, pending } = thread;
    worker.unref();
    worker.on('message', (answered: SearchAnswered) => {
      const waiting = pending.get(answered.id);
      pending.delete(answered.id);
      if ('page' in answered) waiting?.resolve(answered.page);
      else
        waiting?.reject(
          'refused' in answered ? new PadronRefused(answered.refused, answered.args) : new Error(`search: ${answered.error}`),
        );
    });
    // A thread that fails fails its searches, and is replaced at the next.
    const gone = (error: Error) => {
      const at = this.#threads.indexOf(thread);
      if (at >= 0) this.#threads.splice(at, 1);
      for (const { reject } of pending.values()) reject(error);
      pending.clear();
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`the search thread stopped (${code})`)));
    this.#threads.push(thread);
    return thread;
  }
}
