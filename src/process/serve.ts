import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { createApp, type App } from '../app.js';
import { GRAPHQL_PATH, type Config } from '../config.js';
import { createHttpServer } from '../http/server.js';
import type { Sandbox } from '../sandbox/server.js';
import { Metrics } from '../telemetry/metrics.js';
import { startOpsServer } from './ops.js';
import { cannotListen, LISTEN_ERRORS, onStopSignals } from './signals.js';

export interface ServeOptions {
  /** Writes out the log lines still buffered (a bounded wait), before exiting. */
  flushLogs: () => Promise<void>;
  /** Log lines dropped so far (the output gone, stalled or full), for the metrics. */
  logDropped?: () => number;
  /** Put this token in GraphiQL's headers pane: only ever the sandbox's. */
  graphiqlToken?: string | undefined;
  /** The built-in sandbox this process started, closed with it. */
  sandbox?: Sandbox | undefined;
  /** Told once the port is listening. */
  onListening?: (() => void) | undefined;
}

/** The gateway's one process: the app on its socket, and a graceful stop. */
export function serve(config: Config, logger: Logger, options: ServeOptions) {
  const metrics = new Metrics();
  if (options.logDropped) metrics.logDropped(options.logDropped);
  const app = createApp(config, {
    logger,
    metrics,
    ...(options.graphiqlToken ? { graphiqlToken: options.graphiqlToken } : {}),
  });
  const server = createHttpServer(app, { ...config.http, onRefused: (code) => metrics.refused(code) });
  // It closes with the process: through a stop it says /ready 503 and /health 200.
  if (config.opsPort !== undefined) startOpsServer(config, logger, app.ops);
  const inFlight = countInFlight(server);
  listen(server, config, logger, options.onListening);
  let stopping = false;
  onStopSignals((signal) => {
    if (stopping) return;
    stopping = true;
    void stop(signal, { config, logger, options, app, server, inFlight });
  });
}

/**
 * Requests in flight, for the drain: a count, not a Set of the responses (in a long-lived Set,
 * responses outlived their end: docs/performance.md).
 */
function countInFlight(server: Server): InFlight {
  const inFlight: InFlight = { count: 0, onIdle: undefined };
  server.on('request', (_req, res: ServerResponse) => {
    inFlight.count++;
    res.once('close', () => {
      if (--inFlight.count === 0) inFlight.onIdle?.();
    });
  });
  return inFlight;
}

/** Listens on HOST:PORT; a port taken, forbidden or not on this machine ends the process with its own exit code. */
function listen(server: Server, config: Config, logger: Logger, onListening: (() => void) | undefined): void {
  server.on('error', (error: NodeJS.ErrnoException) => {
    const listenError = LISTEN_ERRORS.find((e) => e.code === error.code);
    if (!listenError) throw error;
    process.stderr.write(`${cannotListen(config, listenError.code)}\n`);
    process.exit(listenError.exitCode);
  });
  server.listen(config.port, config.host, () => {
    onListening?.();
    const { port } = server.address() as AddressInfo;
    const shown = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
    logger.info({ port, host: config.host }, `GraphQL gateway ready: http://${shown}:${port}${GRAPHQL_PATH}`);
  });
}

/** The graceful stop: /ready 503 for SHUTDOWN_DELAY_MS, no new connections, the work in flight drained, then exit. */
async function stop(
  signal: string,
  {
    config,
    logger,
    options,
    app,
    server,
    inFlight,
  }: { config: Config; logger: Logger; options: ServeOptions; app: App; server: Server; inFlight: InFlight },
): Promise<void> {
  app.stopping();
  if (config.shutdownDelayMs > 0) {
    // Still serving, /ready already 503: the load balancer's next probes take this process out.
    logger.info({ signal, delayMs: config.shutdownDelayMs }, 'shutting down: /ready says 503, still serving');
    await new Promise((resolve) => setTimeout(resolve, config.shutdownDelayMs));
  }
  logger.info({ signal, inFlight: inFlight.count, deadlineMs: config.shutdownTimeoutMs }, 'shutting down: no new connections');
  // Stop accepting; idle keep-alive sockets close now, busy ones after their answer.
  server.close();
  server.closeIdleConnections();
  app.endStreams();
  // The operations port stays open until exit: /ready says 503, /health 200, while the work in flight finishes.
  const drained = await waitForDrain(inFlight, config.shutdownTimeoutMs);
  if (!drained) logger.warn({ inFlight: inFlight.count }, 'shutdown deadline passed; closing the remaining connections');
  server.closeAllConnections();
  if (drained) {
    await app.dispose(); // closes the upstream pools once their calls are done (none are)
  } else {
    // Past the deadline the callers are gone; do not wait on their upstream calls too.
    void app.dispose();
  }
  await options.sandbox?.close();
  logger.info('stopped');
  await options.flushLogs();
  process.exit(0);
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
