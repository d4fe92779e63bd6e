import cluster, { type Worker } from 'node:cluster';

/**
 * The one protocol over node:cluster's IPC channel: a question, answered once, or a message that
 * wants no answer, each under a topic. A worker asks its primary (its setup at start, every
 * worker's metrics for a scrape, the persisted queries, the shared lookups' claims) and tells it
 * a claim's outcome; the primary asks a worker its readiness, for the operations port.
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

/** In a worker: tells the primary `topic` (with `payload`), wanting no answer; dropped when the primary is gone. */
export function tellPrimary(topic: string, payload: unknown): void {
  if (process.connected) process.send!({ type: `${PREFIX}${topic}`, payload }, undefined, {}, () => undefined);
}

/** In the primary: hears every worker's `topic` messages that want no answer. */
export function hearWorkers(topic: string, listener: (payload: unknown, worker: Worker) => void): void {
  cluster.on('message', (worker: Worker, message: Message) => {
    if (message?.type === `${PREFIX}${topic}` && message.id === undefined) listener(message.payload, worker);
  });
}

/** In the primary: answers every worker's `topic` question with `answer(payload, worker)`. */
export function answerWorkers(topic: string, answer: (payload: unknown, worker: Worker) => unknown): void {
  cluster.on('message', (worker: Worker, message: Message) => {
    if (message?.type !== `${PREFIX}${topic}` || message.id === undefined) return;
    Promise.resolve()
      .then(() => answer(message.payload, worker))
      .then(
        // With a callback, a worker gone meanwhile (one that said it is exiting) is not an uncaught error.
        (reply) => worker.send({ type: `${PREFIX}reply`, id: message.id, reply }, () => {}),
        (error: Error) => worker.send({ type: `${PREFIX}reply`, id: message.id, error: error.message }, () => {}),
      );
  });
}

const TO_WORKER = 'gateway:ask-worker:';
let nextToWorker = 0;
const waitingOnWorkers = new Map<number, (reply: Message) => void>();
let listeningToWorkers = false;

/** In the primary: asks `worker` `topic` and resolves with its answer, or rejects after `timeoutMs`. */
export function askWorker<T>(worker: Worker, topic: string, timeoutMs: number): Promise<T> {
  if (!listeningToWorkers) {
    listeningToWorkers = true;
    cluster.on('message', (_worker: Worker, message: Message) => {
      if (message?.type === `${TO_WORKER}reply` && message.id !== undefined) waitingOnWorkers.get(message.id)?.(message);
    });
  }
  return new Promise<T>((resolve, reject) => {
    const id = nextToWorker++;
    const timer = setTimeout(() => {
      waitingOnWorkers.delete(id);
      reject(new Error(`worker ${worker.process.pid} did not answer ${topic} within ${timeoutMs} ms`));
    }, timeoutMs);
    waitingOnWorkers.set(id, (message) => {
      clearTimeout(timer);
      waitingOnWorkers.delete(id);
      if (message.error !== undefined) reject(new Error(message.error));
      else resolve(message.reply as T);
    });
    worker.send({ type: `${TO_WORKER}${topic}`, id }, undefined, (error) => {
      if (error) waitingOnWorkers.get(id)?.({ error: error.message });
    });
  });
}

/** In a worker: answers the primary's `topic` questions with `answer()`. */
export function answerPrimary(topic: string, answer: () => unknown): void {
  process.on('message', (message: Message) => {
    if (message?.type !== `${TO_WORKER}${topic}` || message.id === undefined) return;
    const reply = (body: Message) =>
      process.connected && process.send!({ type: `${TO_WORKER}reply`, id: message.id, ...body }, undefined, {}, () => undefined);
    Promise.resolve()
      .then(answer)
      .then(
        (value) => reply({ reply: value }),
        (error: Error) => reply({ error: error.message }),
      );
  });
}
