import { existsSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { ValidationJobs } from '../sunat/jobs.js';
import { LocalJobStore } from '../sunat/local-job-store.js';
import type { SunatValidation } from '../sunat/validation.js';
import { RedisJobQueue } from './job-queue.js';
import { RedisJobStore } from './redis-jobs.js';
import type { RedisLink } from './redis.js';

/**
 * Background validations: with REDIS_URL, the fleet's (Redis, and BullMQ sharing the work); without, this instance's,
 * in LMDB under VALIDACION_DIR, taken up again at start.
 */
export function createJobs(
  config: Config,
  deps: { link: RedisLink | undefined; sunat: SunatValidation; logger: Logger; lockMs?: number | undefined },
): ValidationJobs {
  const { link, sunat, logger } = deps;
  const settings = { ...config.sunat.jobs, keySecret: config.cache.keySecret };
  if (!link) {
    const jobs = new ValidationJobs(settings, new LocalJobStore(settings.dir), sunat, logger);
    // Nothing was ever made here: nothing to take up, and no store to open.
    jobs.start(existsSync(settings.dir));
    return jobs;
  }
  const jobs = new ValidationJobs(settings, new RedisJobStore(link, settings.keptDays), sunat, logger);
  jobs.queue = new RedisJobQueue({
    redis: { url: config.cache.redisUrl!, cluster: config.cache.redisCluster },
    logger,
    lockMs: deps.lockMs,
    run: ({ owner, id, from, to }) => jobs.runPart(owner, id, from, to),
  });
  jobs.start(true);
  return jobs;
}
