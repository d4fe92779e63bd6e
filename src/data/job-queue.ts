import { Queue, Worker } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import { PART, type JobQueue } from '../sunat/jobs.js';
import type { Job } from '../sunat/job-store.js';
import { connect } from './redis.js';
import { JOBS_PREFIX } from './redis-jobs.js';

const QUEUE = 'validaciones';
/** Parts one instance validates at once: each keeps SUNAT_API_CONCURRENCY × 2 calls waiting for the fleet's pace. */
const PARTS_AT_ONCE = 2;
/** A part whose handling failed (Redis away mid-part, say) is handled again after this. */
const AGAIN_MS = 5_000;
/** How long a close waits for BullMQ before it drops the connections. */
const CLOSE_WITHIN_MS = 2_000;

interface PartData {
  owner: string;
  id: string;
  from: number;
  to: number;
}

export interface JobQueueOptions {
  redis: { url: string; cluster: boolean };
  logger: Logger;
  /** How long an instance holds a part without renewing it before another takes it up (it died). @default 30000 */
  lockMs?: number | undefined;
  /** Runs one part of a job. */
  run(part: PartData): Promise<void>;
}

/**
 * A fleet's background validations shared through BullMQ: each job is queued as parts of PART
 * distinct receipts, one BullMQ job each (its id the job's and the part's, so a part is queued
 * once); any instance's worker takes a part, and a killed instance's part is taken up again
 * (BullMQ's stalled jobs), asking only what has no answer yet.
 */
export class RedisJobQueue implements JobQueue {
  readonly #queue: Queue<PartData>;
  readonly #worker: Worker<PartData>;
  readonly #connections: (Redis | Cluster)[] = [];
  #saidAt = 0;

  constructor(options: JobQueueOptions) {
    // Connections of their own: BullMQ's commands wait for Redis rather than fail, as its blocking reads require.
    const connection = () => {
      const made = connect(options.redis, { maxRetriesPerRequest: null, enableOfflineQueue: true }).on('error', () => undefined);
      this.#connections.push(made);
      return made;
    };
    const lockDuration = options.lockMs ?? 30_000;
    this.#queue = new Queue<PartData>(QUEUE, {
      connection: connection(),
      prefix: JOBS_PREFIX,
      defaultJobOptions: {
        removeOnComplete: true,
        removeOnFail: { age: 86_400 },
        attempts: 1_000,
        backoff: { type: 'fixed', delay: AGAIN_MS },
      },
    });
    this.#worker = new Worker<PartData>(QUEUE, (job) => options.run(job.data), {
      connection: connection(),
      prefix: JOBS_PREFIX,
      concurrency: PARTS_AT_ONCE,
      lockDuration,
      // A dead instance's parts are looked for as often as their locks can lapse.
      stalledInterval: Math.max(1_000, Math.min(30_000, lockDuration / 2)),
      maxStalledCount: 1_000,
    });
    this.#queue.on('error', () => undefined);
    this.#worker.on('error', (error) => {
      if (Date.now() - this.#saidAt < 60_000) return;
      this.#saidAt = Date.now();
      options.logger.warn({ err: { message: error.message } }, 'validaciones: the queue in Redis failed; it tries again');
    });
  }

  async enqueue(job: Job): Promise<void> {
    const parts = Array.from({ length: Math.ceil(job.distinct / PART) }, (_, i) => ({
      name: 'parte',
      data: { owner: job.owner, id: job.id, from: i * PART, to: (i + 1) * PART },
      opts: { jobId: `${job.id}.${i}` },
    }));
    await this.#queue.addBulk(parts);
  }

  /** Stops taking parts; one under way stays locked and is taken up again (stalled) by a live instance. */
  async close(): Promise<void> {
    const closed = Promise.allSettled([this.#worker.close(true), this.#queue.close()]);
    const timer = new Promise((resolve) => setTimeout(resolve, CLOSE_WITHIN_MS).unref());
    await Promise.race([closed, timer]);
    for (const connection of this.#connections) connection.disconnect();
  }
}

/** The part-data type, for the jobs' runner. */
export type { PartData };
