import cluster, { type Worker } from 'node:cluster';
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import { createApp, createMemoryStore, storeKind } from './app.js';
import { ClusterStore, serveWorkers } from './cache/cluster-store.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createHttpServer } from './http-server.js';
import { createLogger, flushLogsSync } from './logger.js';
import { DEFAULT_TOKENS, TRIGGERS } from './sandbox/data.js';
import { startSandbox, type Sandbox } from './sandbox/server.js';
import { Metrics } from './telemetry/metrics.js';

/** The only place with side effects: configuration, the sandbox, processes, the socket, signals. */
async function main() {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config);
  // A promise nobody awaited is a bug of ours; one such bug must not take every caller down.
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));

  if (cluster.isWorker) return serve(config, logger);

  // One sandbox for every worker, so that they share its quotas and its record.
  const sandbox = config.upstreamUrl ? undefined : await startBuiltinSandbox(logger);
  if (sandbox) config = { ...config, upstreamUrl: sandbox.url, builtinSandbox: true };

  if (config.workers <= 1) return serve(config, logger, sandbox);
  return supervise(config, logger, sandbox);
}

/** Starts the sandbox and says, loudly, that the data is sample data. */
async function startBuiltinSandbox(logger: Logger): Promise<Sandbox> {
  const sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
  const banner = [
    '',
    '================================================================================',
    ' SANDBOX: UPSTREAM_URL is not set, so the gateway talks to the built-in sandbox.',
    ` It serves SAMPLE DATA (invented taxpayers and licences) from ${sandbox.url}.`,
    ' Set UPSTREAM_URL=https://api.apiperu.dev to use the real service.',
    ' Sandbox tokens (send as "Authorization: Bearer <token>"):',
    ...DEFAULT_TOKENS.map((t) => `   ${t.token.padEnd(14)} plan ${t.plan}, ${t.quota} queries`),
    ` Trigger RUCs: ${Object.entries(TRIGGERS)
      .map(([name, k]) => `${name}=${k.ruc}`)
      .join(' ')}`,
    '================================================================================',
    '',
  ].join('\n');
  logger.warn({ sandbox: sandbox.url }, 'SANDBOX MODE: sample data only');
  process.stderr.write(banner);
  return sandbox;
}

/**
 * The primary of a cluster: WORKERS processes share the port (node:cluster hands them the
 * connections). A worker that dies is replaced; on SIGTERM or SIGINT every worker drains
 * its operations in flight, then the primary exits 0.
 */
function supervise(config: Config, logger: Logger, sandbox: Sandbox | undefined) {
  // The workers' lookups meet here, unless they meet in Redis.
  if (storeKind(config.cache) === 'memory') serveWorkers(createMemoryStore(config.cache), { leaseMs: config.cache.leaseMs });
  const env = {
    UPSTREAM_URL: config.upstreamUrl,
    ...(config.builtinSandbox ? { BUILTIN_SANDBOX: '1' } : {}),
  };
  let stopping = false;
  const fork = () => cluster.fork(env);
  /** When workers died lately, to give up on one that keeps dying. */
  const deaths: number[] = [];
  // /metrics in a cluster: the worker that gets the scrape asks here, and prom-client
  // gathers every worker's registry into one text.
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker: Worker, message: { type?: string; id?: number }) => {
    if (message?.type !== METRICS_REQUEST) return;
    aggregator
      .clusterMetrics()
      .then((text) => worker.send({ type: METRICS_REPLY, id: message.id, text }))
      .catch((error: Error) => worker.send({ type: METRICS_REPLY, id: message.id, error: error.message }));
  });
  cluster.on('exit', (worker: Worker, code, signal) => {
    if (stopping) return;
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
    setTimeout(fork, 500);
  });
  for (let i = 0; i < config.workers; i++) fork();
  logger.info({ workers: config.workers }, 'cluster primary started');

  const stop = async (signal: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    logger.info({ signal, workers: workers.length }, 'shutting down the cluster');
    const exits = workers.map((w) => new Promise<void>((resolve) => (w.isDead() ? resolve() : w.once('exit', () => resolve()))));
    for (const w of workers) w.process.kill('SIGTERM');
    // Each worker keeps its own deadline; this one only guards against a stuck worker.
    const guard = setTimeout(() => workers.forEach((w) => w.process.kill('SIGKILL')), config.shutdownTimeoutMs + 2000);
    await Promise.all(exits);
    clearTimeout(guard);
    await sandbox?.close();
    logger.info('stopped');
    flushLogsSync(logger);
    process.exit(exitCode);
  };
  onStopSignals((signal) => void stop(signal));
}

/**
 * SIGINT and SIGTERM, every time they come: Ctrl-C, systemd and npm signal the whole process
 * group, so a worker gets the signal from the terminal and again from its primary (and the
 * primary from npm or tsx as well). A one-shot listener would let the second one kill it.
 */
function onStopSignals(stop: (signal: NodeJS.Signals) => void): void {
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/** Exit codes when the port cannot be had; a worker's tells its primary why, which says it once and starts no other. */
const LISTEN_ERRORS = [
  { code: 'EADDRINUSE', exitCode: 78 },
  { code: 'EACCES', exitCode: 77 },
] as const;
/** More deaths than this within the window, and the primary gives up. */
const MAX_DEATHS = 5;
const DEATH_WINDOW_MS = 60_000;

/** The one line that says why the gateway cannot listen. */
function cannotListen(config: Config, code: (typeof LISTEN_ERRORS)[number]['code']): string {
  const where = `${config.host}:${config.port}`;
  return code === 'EACCES'
    ? `Cannot listen on ${where}: permission denied (EACCES). Use a port above 1023, or set PORT.`
    : `Cannot listen on ${where}: port ${config.port} is already in use (EADDRINUSE). Stop the other process, or set PORT to a free port.`;
}

const METRICS_REQUEST = 'gateway:metrics-request';
const METRICS_REPLY = 'gateway:metrics-reply';

/** In a cluster worker: the metrics of every worker, through the primary. */
function clusterMetricsText(): () => Promise<string> {
  let next = 0;
  const waiting = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>();
  process.on('message', (message: { type?: string; id?: number; text?: string; error?: string }) => {
    if (message?.type !== METRICS_REPLY || message.id === undefined) return;
    const waiter = waiting.get(message.id);
    waiting.delete(message.id);
    if (message.error !== undefined) waiter?.reject(new Error(message.error));
    else waiter?.resolve(message.text ?? '');
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve, reject });
      process.send!({ type: METRICS_REQUEST, id });
    });
}

/** One gateway process: the app on its socket, and a graceful stop. */
function serve(config: Config, logger: Logger, sandbox?: Sandbox) {
  const metrics = new Metrics();
  if (cluster.isWorker) {
    // prom-client answers the primary's gathering only once an AggregatorRegistry exists here too.
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([metrics.registry]);
  }
  const app = createApp(config, {
    logger,
    metrics,
    ...(cluster.isWorker ? { metricsText: clusterMetricsText() } : {}),
    ...(config.builtinSandbox ? { graphiqlToken: 'sandbox-pro' } : {}),
    ...(cluster.isWorker && storeKind(config.cache) === 'memory' ? { store: new ClusterStore() } : {}),
  });
  const server = createHttpServer(app, { ...config.http, onRefused: (code) => metrics.refused(code) });
  // A count, not a Set of the responses: with every response added to a long-lived Set and
  // deleted from it, V8 kept responses past their end. Measured with --trace-gc-nvp under the
  // bench's load: about 0.65 MB promoted to the old generation per scavenge with the Set,
  // 0.15 MB with the count (2.3 against 0.4 MB with a handler that answers after 6 ms).
  const inFlight: InFlight = { count: 0, onIdle: undefined };
  server.on('request', (_req, res: ServerResponse) => {
    inFlight.count++;
    res.once('close', () => {
      if (--inFlight.count === 0) inFlight.onIdle?.();
    });
  });
  server.on('error', (error: NodeJS.ErrnoException) => {
    const listenError = LISTEN_ERRORS.find((e) => e.code === error.code);
    if (!listenError) throw error;
    // In a cluster the primary says it, once for all workers.
    if (!cluster.isWorker) process.stderr.write(`${cannotListen(config, listenError.code)}\n`);
    process.exit(listenError.exitCode);
  });
  server.listen(config.port, config.host, () => {
    const { port } = server.address() as AddressInfo;
    const shown = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
    logger.info({ port, host: config.host }, `GraphQL gateway ready: http://${shown}:${port}/graphql`);
  });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, inFlight: inFlight.count, deadlineMs: config.shutdownTimeoutMs }, 'shutting down: no new connections');
    // Stop accepting; idle keep-alive sockets close now, busy ones after their answer.
    server.close();
    server.closeIdleConnections();
    const drained = await waitForDrain(inFlight, config.shutdownTimeoutMs);
    if (!drained) logger.warn({ inFlight: inFlight.count }, 'shutdown deadline passed; closing the remaining connections');
    server.closeAllConnections();
    if (drained) {
      await app.dispose(); // closes the upstream pools once their calls are done (none are)
    } else {
      // Past the deadline the callers are gone; do not wait on their upstream calls too.
      void app.dispose();
    }
    await sandbox?.close();
    logger.info('stopped');
    flushLogsSync(logger);
    process.exit(0);
  };
  onStopSignals((signal) => void stop(signal));
}

/** Responses not yet closed, and who is told when there are none left. */
interface InFlight {
  count: number;
  onIdle: (() => void) | undefined;
}

/** Resolves true once no response is in flight, or false when `deadlineMs` passes first. */
function waitForDrain(inFlight: InFlight, deadlineMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (inFlight.count === 0) return resolve(true);
    const deadline = setTimeout(() => resolve(false), deadlineMs);
    // On the next turn, as before: the last 'close' may still have listeners to run.
    inFlight.onIdle = () =>
      setImmediate(() => {
        clearTimeout(deadline);
        resolve(true);
      });
  });
}

void main();
