import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import { connect, type RedisLink } from '../data/redis.js';
import { deliver, type DeliveryDeps, type Tries } from './delivery.js';
import type { Entrega, Mensaje, Outbox, SubscriptionStore, Suscripcion } from './types.js';

/** Every key of the webhooks in one hash slot (`{wh}`): a Redis Cluster serves BullMQ's scripts and our transactions alike. */
const PREFIX = '{wh}';
const QUEUE = 'entregas';
const subKey = (id: string) => `${PREFIX}:s:${id}`;
const rucsKey = (id: string) => `${PREFIX}:r:${id}`;
const ownerKey = (owner: string) => `${PREFIX}:o:${owner}`;
const ALL = `${PREFIX}:all`;
/** A subscription's messages not yet settled, by their order: one goes only when those before it have. */
const orderKey = (sub: string) => `${PREFIX}:p:${sub}`;
/** Attempts under way at once on each instance: a slow receiver holds one of them, never the others' turn. */
const AT_ONCE = 32;
/** A message waiting behind an earlier one of its subscription looks again after this, doubled each time, to WAIT_MAX_MS. */
const WAIT_FIRST_MS = 1000;
const WAIT_MAX_MS = 10 * 60_000;
/** How long a close waits for BullMQ before it drops the connections. */
const CLOSE_WITHIN_MS = 2_000;

interface JobData {
  message: Mensaje;
  tries: Tries;
  /** Times it waited behind an earlier message. */
  waits: number;
}

/**
 * A fleet's subscriptions and messages (REDIS_URL): the subscriptions as JSON under `{wh}`, the
 * messages as BullMQ jobs whose id is the webhook-id, so an instance that makes a message
 * another made is refused by the queue; jobs are kept as long as changes are, for that. A crashed
 * instance's jobs are taken up by another's worker (BullMQ's stalled jobs).
 */
export class RedisWebhooks implements SubscriptionStore, Outbox {
  readonly #queue: Queue<JobData>;
  readonly #worker: Worker<JobData>;
  readonly #connections: (Redis | Cluster)[] = [];
  #saidAt = 0;

  constructor(
    private readonly link: RedisLink,
    private readonly deps: DeliveryDeps & { keepMs: number; redis: { url: string; cluster: boolean } },
  ) {
    // Connections of their own: BullMQ's commands wait for Redis rather than fail, as its blocking reads require.
    const connection = () => {
      const made = connect(deps.redis, { maxRetriesPerRequest: null, enableOfflineQueue: true }).on('error', () => undefined);
      this.#connections.push(made);
      return made;
    };
    const age = Math.ceil(deps.keepMs / 1000);
    this.#queue = new Queue<JobData>(QUEUE, {
      connection: connection(),
      prefix: PREFIX,
      defaultJobOptions: { removeOnComplete: { age }, removeOnFail: { age } },
    });
    this.#worker = new Worker<JobData>(QUEUE, (job, token) => this.#process(job, token), {
      connection: connection(),
      prefix: PREFIX,
      concurrency: AT_ONCE,
      // A job's lock outlives its longest attempt.
      lockDuration: deps.settings.timeoutMs + 30_000,
    });
    this.#queue.on('error', () => undefined);
    // Said once a minute at most: a Redis gone for an hour is not a thousand lines.
    this.#worker.on('error', (error) => {
      if (Date.now() - this.#saidAt < 60_000) return;
      this.#saidAt = Date.now();
      deps.logger.warn({ err: { message: error.message } }, 'webhook: the queue in Redis failed; it tries again');
    });
  }

  async ids(owner?: string): Promise<string[]> {
    return this.link.send((r) => r.smembers(owner === undefined ? ALL : ownerKey(owner)));
  }

  async get(id: string): Promise<Suscripcion | undefined> {
    const json = await this.link.send((r) => r.get(subKey(id)));
    return json ? (JSON.parse(json) as Suscripcion) : undefined;
  }

  async rucsOf(id: string): Promise<string[]> {
    return JSON.parse((await this.link.send((r) => r.get(rucsKey(id)))) ?? '[]') as string[];
  }

  async put(sub: Suscripcion, rucs?: readonly string[]): Promise<void> {
    await this.link.send((r) => {
      const multi = r.multi().set(subKey(sub.id), JSON.stringify(sub)).sadd(ownerKey(sub.owner), sub.id).sadd(ALL, sub.id);
      return (rucs ? multi.set(rucsKey(sub.id), JSON.stringify(rucs)) : multi).exec();
    });
  }

  async remove(id: string, owner: string): Promise<boolean> {
    const sub = await this.get(id);
    if (!sub || sub.owner !== owner) return false;
    await this.link.send((r) => r.multi().del(subKey(id), rucsKey(id), orderKey(id)).srem(ownerKey(owner), id).srem(ALL, id).exec());
    return true;
  }

  async record(id: string, entrega: Entrega): Promise<void> {
    const sub = await this.get(id);
    // Written only if the subscription is still there: a delete meanwhile is not undone.
    if (sub) await this.link.send((r) => r.set(subKey(id), JSON.stringify({ ...sub, ultimaEntrega: entrega }), 'XX'));
  }

  async add(messages: Mensaje[]): Promise<void> {
    for (const message of messages) {
      // In its subscription's order first: a job with no place would go before those ahead of it.
      await this.link.send((r) => r.zadd(orderKey(message.sub), 'NX', message.seq, message.id));
      await this.#queue.add('entrega', { message, tries: { intentos: 0 }, waits: 0 }, { jobId: message.id });
    }
  }

  async #process(job: Job<JobData>, token: string | undefined): Promise<void> {
    const { message, tries, waits } = job.data;
    if (!(await this.#isNext(message))) {
      await job.updateData({ ...job.data, waits: waits + 1 });
      await job.moveToDelayed(Date.now() + Math.min(WAIT_FIRST_MS * 2 ** waits, WAIT_MAX_MS), token);
      throw new DelayedError();
    }
    const settled = await deliver(message, tries, { store: this, ...this.deps });
    if (settled.settled) {
      await this.link.send((r) => r.zrem(orderKey(message.sub), message.id));
      return;
    }
    await job.updateData({ ...job.data, tries: settled.tries });
    await job.moveToDelayed(settled.retryAt, token);
    throw new DelayedError();
  }

  /** Whether every message of the subscription before this one has settled; one whose job is gone (or never came) has. */
  async #isNext(message: Mensaje): Promise<boolean> {
    for (;;) {
      const [first] = await this.link.send((r) => r.zrange(orderKey(message.sub), '0', '0'));
      if (first === undefined || first === message.id) return true;
      const state = await this.#queue.getJobState(first);
      if (state !== 'completed' && state !== 'failed' && state !== 'unknown') return false;
      await this.link.send((r) => r.zrem(orderKey(message.sub), first));
    }
  }

  /** Stops taking jobs; one under way stays locked and is taken up again (stalled) by a live instance. Bounded: Redis may be gone. */
  async close(): Promise<void> {
    const closed = Promise.allSettled([this.#worker.close(true), this.#queue.close()]);
    const timer = new Promise((resolve) => setTimeout(resolve, CLOSE_WITHIN_MS).unref());
    await Promise.race([closed, timer]);
    for (const connection of this.#connections) connection.disconnect();
  }
}
