import cluster, { type Worker } from 'node:cluster';

/**
 * Questions a cluster worker asks its primary over node:cluster's IPC channel, each answered
 * once: the worker's setup at start, every worker's metrics for a scrape, the persisted queries.
 */
interface Message {
  type?: string;
  id?: number;
  payload?: unknown;
  reply?: unknown;
  error?: string;
}

const PREFIX = 'gateway:ask:';
let next = 0;
const waiting = new Map<number, { resolve: (reply: unknown) => void; reject: (error: Error) => void }>();
let listening = false;

/** In a worker: asks the primary `topic` (with `payload`) and resolves with its answer. */
export function askPrimary<T>(topic: string, payload?: unknown): Promise<T> {
  if (!listening) {
    listening = true;
    process.on('message', (message: Message) => {
      if (message?.type !== `${PREFIX}reply` || message.id === undefined) return;
      const waiter = waiting.get(message.id);
      waiting.delete(message.id);
      if (message.error !== undefined) waiter?.reject(new Error(message.error));
      else waiter?.resolve(message.reply);
    });
  }
  return new Promise<T>((resolve, reject) => {
    const id = next++;
    waiting.set(id, { resolve: resolve as (reply: unknown) => void, reject });
    process.send!({ type: `${PREFIX}${topic}`, id, payload });
  });
}

/** In the primary: answers every worker's `topic` question with `answer(payload)`. */
export function answerWorkers(topic: string, answer: (payload: unknown) => unknown): void {
  cluster.on('message', (worker: Worker, message: Message) => {
    if (message?.type !== `${PREFIX}${topic}` || message.id === undefined) return;
    Promise.resolve()
      .then(() => answer(message.payload))
      .then(
        (reply) => worker.send({ type: `${PREFIX}reply`, id: message.id, reply }),
        (error: Error) => worker.send({ type: `${PREFIX}reply`, id: message.id, error: error.message }),
      );
  });
}
