import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { AggregatorRegistry, type RegistryContentType } from 'prom-client';
import { createMemoryStore, storeKind } from '../data/stores.js';
import type { Config } from '../config.js';
import { serveWorkers } from '../data/cluster-store.js';
import type { Sandbox } from '../sandbox/server.js';
import { memoryApqStore } from '../data/apq-store.js';
import { serveApqToWorkers } from './apq.js';
import { serveBudgetsToWorkers } from './budgets.js';
import { memoryBudgets } from '../data/budgets.js';
import { answerWorkers, askWorker } from '../data/ipc.js';
import { startOpsServer } from './ops.js';
import { coalesced, STOPPING, type Readiness } from '../http/health.js';
import { cannotListen, LISTEN_ERRORS, onStopSignals } from './signals.js';

/** What a worker learns from its primary at start: settings the primary decided, not the environment's. */
export interface WorkerSetup {
  upstreamUrl: string;
  /** The built-in sandbox's token, for GraphiQL's headers pane. */
  graphiqlToken: string | undefined;
}
export const SETUP = 'setup';
export const METRICS = 'metrics';
export const READY = 'ready';
/** A worker says it has stopped and is exiting (its pid); the primary then gives it `EXIT_GRACE_MS`. */
export const EXITING = 'exiting';
/**
 * How long a worker that said it is exiting may take to be gone. Its exit can wait for a DNS
 * lookup already under way in libuv's threads (a store's host name, while the resolver does not
 * answer: seen 5 s), and by then it has answered everything and flushed its log.
 */
const EXIT_GRACE_MS = 1000;

/** More deaths than this within the window, and the primary gives up. */
const MAX_DEATHS = 5;
const DEATH_WINDOW_MS = 60_000;

/**
 * The primary of a cluster: WORKERS processes share the port (node:cluster hands them the
 * connections). A worker that dies is replaced, one that keeps dying is given up on; on
 * SIGTERM or SIGINT every worker drains its operations in flight, then the primary exits 0.
 */
export function supervise(
  config: Config,
  logger: Logger,
  flushLogs: () => Promise<void>,
  setup: WorkerSetup,
  sandbox: Sandbox | undefined,
) {
  let stopping = false;
  const aggregator = answerTheWorkers(config, setup);
  const ops =
    config.opsPort === undefined
      ? undefined
      : startOpsServer(config, logger, {
          readiness: coalesced(() => (stopping ? Promise.resolve(STOPPING) : workersReadiness())),
          metricsText: coalesced(() => aggregator.clusterMetrics(), 1000),
          contentType: aggregator.contentType,
        });
  const stop = async (signal: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    await stopWorkers(config, logger, signal);
    // The operations port stayed open until now: /ready said 503, /health 200, while the workers drained.
    ops?.close();
    await sandbox?.close();
    logger.info('stopped');
    await flushLogs();
    process.exit(exitCode);
  };
  restartWorkers(config, logger, () => stopping, stop);
  for (let i = 0; i < config.workers; i++) cluster.fork();
  logger.info({ workers: config.workers }, 'cluster primary started');
  onStopSignals((signal) => void stop(signal));
}

/** What the workers ask here: their setup, the shared stores unless Redis holds them, the cluster's metrics, leave to exit. */
function answerTheWorkers(config: Config, setup: WorkerSetup): AggregatorRegistry<RegistryContentType> {
  // The workers' lookups meet here, unless they meet in Redis.
  if (storeKind(config.cache) === 'memory') serveWorkers(createMemoryStore(config.cache), { leaseMs: config.cache.leaseMs });
  answerWorkers(SETUP, () => setup);
  answerWorkers(EXITING, (pid) => {
    const worker = Object.values(cluster.workers ?? {}).find((w) => w?.process.pid === pid);
    setTimeout(() => worker?.isDead() === false && worker.process.kill('SIGKILL'), EXIT_GRACE_MS).unref();
  });
  // Persisted queries meet here too, unless in Redis.
  if (!config.cache.redisUrl) serveApqToWorkers(memoryApqStore(config.persistedQueries));
  // And the signed-in subjects' budgets, unless in Redis.
  if (config.auth?.budget && !config.cache.redisUrl) serveBudgetsToWorkers(memoryBudgets());
  // /metrics in a cluster: the worker that gets the scrape asks here (or the operations port
  // is here), and prom-client gathers every worker's registry into one text.
  const aggregator = new AggregatorRegistry();
  answerWorkers(
    METRICS,
    coalesced(() => aggregator.clusterMetrics()),
  );
  return aggregator;
}

/** A worker that dies is replaced, unless none can ever listen or they keep dying (then the cluster stops). */
function restartWorkers(config: Config, logger: Logger, stopping: () => boolean, stop: (why: string, exitCode: number) => Promise<void>) {
  /** When workers died lately, to give up on one that keeps dying. */
  const deaths: number[] = [];
  cluster.on('exit', (worker: Worker, code, signal) => {
    if (stopping()) return;
    // No worker can ever listen (the port is taken, or not ours): none is started again.
    const listenError = LISTEN_ERRORS.find((e) => e.exitCode === code);
    if (listenError) {
      process.stderr.write(`${cannotListen(config, listenError.code)}\n`);
      return void stop('a worker could not listen', listenError.exitCode);
    }
    const now = Date.now();
    deaths.push(now);
    while (deaths[0]! < now - DEATH_WINDOW_MS) deaths.shift();
    if (deaths.length > MAX_DEATHS) {
      logger.fatal(
        { worker: worker.process.pid, code, signal, deaths: deaths.length },
        `workers died ${deaths.length} times within ${DEATH_WINDOW_MS / 1000} s; giving up`,
      );
      return void stop('workers keep dying', 1);
    }
    logger.error({ worker: worker.process.pid, code, signal }, 'worker died; starting another');
    setTimeout(() => cluster.fork(), 500);
  });
}

/** SIGTERM to every worker, each of which drains on its own deadline; SIGKILL only for one that is stuck. */
async function stopWorkers(config: Config, logger: Logger, signal: string): Promise<void> {
  const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
  logger.info({ signal, workers: workers.length }, 'shutting down the cluster');
  const exits = workers.map((w) => new Promise<void>((resolve) => (w.isDead() ? resolve() : w.once('exit', () => resolve()))));
  for (const w of workers) w.process.kill('SIGTERM');
  const guard = setTimeout(
    () => workers.forEach((w) => w.process.kill('SIGKILL')),
    config.shutdownDelayMs + config.shutdownTimeoutMs + 2000,
  );
  await Promise.all(exits);
  clearTimeout(guard);
}

/** Ready when every live worker says it is (each answers for its own upstream and store), and there is one. */
async function workersReadiness(): Promise<Readiness> {
  const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && w.isConnected());
  const answers = await Promise.all(
    workers.map(async (w) => {
      const said = await askWorker<Readiness>(w, READY, 2000).catch((error: Error) => ({ ready: false, detail: { error: error.message } }));
      return { pid: w.process.pid, ready: said.ready, ...said.detail };
    }),
  );
  return { ready: answers.length > 0 && answers.every((a) => a.ready), detail: { workers: answers } };
}
