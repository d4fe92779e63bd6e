import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import { randomBytes } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { connect, type RedisLink } from '../data/redis.js';
import { AT_ONCE, deliver, type DeliveryDeps, type Tries } from './delivery.js';
import type { Entrega, Mensaje, Outbox, SubscriptionStore, Suscripcion } from './types.js';

/** Every key of the webhooks in one hash slot (`{wh}`): a Redis Cluster serves BullMQ's scripts and our transactions alike. */
const PREFIX = '{wh}';
const QUEUE = 'entregas';
const subKey = (id: string) => `${PREFIX}:s:${id}`;
const rucsKey = (id: string) => `${PREFIX}:r:${id}`;
const ownerKey = (owner: string) => `${PREFIX}:o:${owner}`;
const entregaKey = (id: string) => `${PREFIX}:e:${id}`;
const ALL = `${PREFIX}:all`;
/** The key owners' tokens are hashed with: made once, by whichever instance comes first. */
const OWNER_KEY = `${PREFIX}:key`;
/** A subscription's messages not yet settled, by their order: one goes only when those before it have. */
const orderKey = (sub: string) => `${PREFIX}:p:${sub}`;
/** A message waiting behind an earlier one of its subscription looks again after this, doubled each time, to WAIT_MAX_MS. */
const WAIT_FIRST_MS = 1000;
const WAIT_MAX_MS = 10 * 60_000;
/** BullMQ's lowest priority. */
const MAX_PRIORITY = 2_097_152;
/** How long a close waits for BullMQ before it drops the connections. */
const CLOSE_WITHIN_MS = 2_000;
/** A job whose handling failed (Redis away mid-attempt, say) is handled again after this: never failed for good by it. */
const AGAIN_MS = 5_000;

interface JobData {
  message: Mensaje;
  tries: Tries;
  /** Times it waited behind an earlier message. */
  waits: number;
}

/**
 * A fleet's subscriptions and messages (REDIS_URL): the subscriptions as JSON under `{wh}`, the
 * messages as BullMQ jobs whose id, and deduplication id, is the webhook-id, so an instance that
 * makes a message another made is refused by the queue for as long as changes are kept. A
 * crashed instance's jobs are taken up by another's worker (BullMQ's stalled jobs), as often as
 * that happens: an attempt repeated carries the same webhook-id.
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
    this.#queue = new Queue<JobData>(QUEUE, {
      connection: connection(),
      prefix: PREFIX,
      // A delivered message's job goes at once (its deduplication id stays); a failed one is kept a day for a look.
      defaultJobOptions: {
        removeOnComplete: true,
        removeOnFail: { age: 86_400 },
        attempts: 1_000,
        backoff: { type: 'fixed', delay: AGAIN_MS },
      },
    });
    this.#worker = new Worker<JobData>(QUEUE, (job, token) => this.#process(job, token), {
      connection: connection(),
      prefix: PREFIX,
      concurrency: AT_ONCE,
      // A job's lock outlives its longest attempt; a job stalled by a stop or a crash is taken up again however often.
      lockDuration: deps.settings.timeoutMs + 30_000,
      maxStalledCount: 1_000,
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
    const [json, entrega] = await this.link.send((r) => r.mget(subKey(id), entregaKey(id)));
    return json
      ? { ...(JSON.parse(json) as Suscripcion), ultimaEntrega: entrega ? (JSON.parse(entrega) as Entrega) : undefined }
      : undefined;
  }

  async ownerKey(): Promise<string> {
    await this.link.send((r) => r.set(OWNER_KEY, randomBytes(32).toString('base64'), 'NX'));
    return (await this.link.send((r) => r.get(OWNER_KEY)))!;
  }

  async rucsOf(id: string): Promise<string[]> {
    return JSON.parse((await this.link.send((r) => r.get(rucsKey(id)))) ?? '[]') as string[];
  }

  async put(sub: Suscripcion, rucs?: readonly string[]): Promise<void> {
    const { ultimaEntrega: _, ...kept } = sub;
    await this.link.send((r) => {
      const multi = r.multi().set(subKey(sub.id), JSON.stringify(kept)).sadd(ownerKey(sub.owner), sub.id).sadd(ALL, sub.id);
      return (rucs ? multi.set(rucsKey(sub.id), JSON.stringify(rucs)) : multi).exec();
    });
  }

  async update(sub: Suscripcion, rucs?: readonly string[]): Promise<boolean> {
    const { ultimaEntrega: _, ...kept } = sub;
    // Only while it exists: a subscription deleted meanwhile (a 410, its owner) is not made again.
    if ((await this.link.send((r) => r.set(subKey(sub.id), JSON.stringify(kept), 'XX'))) === null) return false;
    if (rucs) await this.link.send((r) => r.set(rucsKey(sub.id), JSON.stringify(rucs), 'XX'));
    return true;
  }

  async remove(id: string, owner: string): Promise<boolean> {
    const sub = await this.get(id);
    if (!sub || sub.owner !== owner) return false;
    await this.link.send((r) =>
      r.multi().del(subKey(id), rucsKey(id), entregaKey(id), orderKey(id)).srem(ownerKey(owner), id).srem(ALL, id).exec(),
    );
    return true;
  }

  /** In a key of its own: a change of the subscription meanwhile is not undone; one deleted meanwhile leaves it to expire. */
  async record(id: string, entrega: Entrega): Promise<void> {
    await this.link.send((r) => r.set(entregaKey(id), JSON.stringify(entrega), 'PX', this.deps.keepMs));
  }

  async add(messages: Mensaje[]): Promise<void> {
    const deduplication = { ttl: this.deps.keepMs };
    const priorities = new Map<string, number>();
    for (const message of messages) {
      // Taken first, the messages of callers with fewer subscriptions: many hanging receivers of one caller wait behind
      // another's single one, never the other way round (BullMQ: 1 is the highest priority).
      let priority = priorities.get(message.sub);
      if (priority === undefined) {
        const sub = await this.get(message.sub);
        priority = Math.min(MAX_PRIORITY, Math.max(1, sub ? (await this.ids(sub.owner)).length : 1));
        priorities.set(message.sub, priority);
      }
      await this.#queue.add(
        'entrega',
        { message, tries: { intentos: 0 }, waits: 0 },
        { jobId: message.id, deduplication: { ...deduplication, id: message.id }, priority },
      );
      // Its place in its subscription's order (its handler takes it too, should this instance stop in between).
      await this.link.send((r) => r.zadd(orderKey(message.sub), 'NX', message.seq, message.id));
    }
  }

  /** One job: its attempt, or a wait behind an earlier message; a failure of its own handling puts it off, never ends it. */
  async #process(job: Job<JobData>, token: string | undefined): Promise<void> {
    try {
      await this.#handle(job, token);
    } catch (error) {
      if (error instanceof DelayedError) throw error;
      this.deps.logger.warn(
        { err: { message: (error as Error).message }, webhook: { webhookId: job.data.message.id } },
        'webhook: handling a message failed; again shortly',
      );
      await job.moveToDelayed(Date.now() + AGAIN_MS, token);
      throw new DelayedError();
    }
  }

  async #handle(job: Job<JobData>, token: string | undefined): Promise<void> {
    const { message, tries, waits } = job.data;
    await this.link.send((r) => r.zadd(orderKey(message.sub), 'NX', message.seq, message.id));
    if (!(await this.#isNext(message))) {
      await job.updateData({ ...job.data, waits: waits + 1 });
      await job.moveToDelayed(Date.now() + Math.min(WAIT_FIRST_MS * 2 ** waits, WAIT_MAX_MS), token);
      throw new DelayedError();
    }
    const settled = await deliver(message, tries, { store: this, ...this.deps });
    if (settled.settled) {
      // The next message of the subscription, waiting behind this one, goes now rather than at its next look.
      const [, next] =
        (await this.link.send((r) => r.multi().zrem(orderKey(message.sub), message.id).zrange(orderKey(message.sub), '0', '0').exec())) ??
        [];
      const nextId = (next?.[1] as string[] | undefined)?.[0];
      if (nextId) await (await this.#queue.getJob(nextId))?.promote().catch(() => undefined);
      return;
    }
    await job.updateData({ ...job.data, tries: settled.tries });
    await job.moveToDelayed(settled.retryAt, token);
    throw new DelayedError();
  }

  /** Whether every message of the subscription before this one has settled: one whose job is gone (delivered, or deleted) has. */
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
