import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { ConfigError, loadConfig, withUpstream, type Config } from './config.js';
import { askPrimary } from './data/ipc.js';
import { SETUP, supervise, type WorkerSetup } from './process/primary.js';
import { serve } from './process/serve.js';
import { sandboxBanner } from './sandbox/banner.js';
import { SANDBOX_TOKEN } from './sandbox/data.js';
import { SANDBOX_SUBJECT } from './sandbox/identity.js';
import { SANDBOX_IDENTITY } from './config/auth.js';
import { startSandbox, type Sandbox } from './sandbox/server.js';
import { createLogger, ignoreStandardStreamErrors, LogOutput } from './telemetry/logger.js';

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
  ignoreStandardStreamErrors();
  const output = new LogOutput();
  const logger = createLogger(config, output);
  const flushLogs = () => output.flush();
  const logDropped = () => output.dropped;
  // A promise nobody awaited is a bug of ours; one such bug must not take every caller down.
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));

  if (cluster.isWorker) {
    // Where the upstream is, as the primary decided it (the built-in sandbox is the primary's).
    const setup = await askPrimary<WorkerSetup>(SETUP);
    return serve(withUpstream(config, setup.upstreamUrl, SANDBOX_TOKEN), logger, {
      flushLogs,
      logDropped,
      graphiqlToken: setup.graphiqlToken,
    });
  }

  // One sandbox for every worker, so that they share its quotas and its record.
  const sandbox = config.upstream.baseUrl ? undefined : await startBuiltinSandbox(logger, config.auth?.jwksUrl === SANDBOX_IDENTITY);
  const upstreamUrl = sandbox?.url ?? config.upstream.baseUrl!;
  // AUTH_JWKS_URL=sandbox: the sandbox signs callers in, and its token is the plan's.
  config = withUpstream(config, upstreamUrl, SANDBOX_TOKEN);
  // GraphiQL's Headers pane: the sandbox's token, or in sign-in mode its sign-in token (else a placeholder).
  const graphiqlToken = sandbox && (config.auth ? sandbox.signInToken : SANDBOX_TOKEN);

  // A shared key set (Firebase's serves every project) takes any issuer's or audience's token unless they are checked.
  if (config.auth && (!config.auth.issuer || !config.auth.audience)) {
    logger.warn(
      'AUTH_JWKS_URL without AUTH_ISSUER or AUTH_AUDIENCE: any token its keys signed is taken; set both (NODE_ENV=production requires them)',
    );
  }
  if (config.workers <= 1) return serve(config, logger, { flushLogs, logDropped, graphiqlToken, sandbox });
  return supervise(config, logger, flushLogs, { upstreamUrl, graphiqlToken }, sandbox);
}

/** Starts the sandbox and says, loudly, that the data is sample data, and what to ask it (and, signing in, with what). */
async function startBuiltinSandbox(logger: Logger, signsIn: boolean): Promise<Sandbox & { signInToken?: string | undefined }> {
  // Its record serves /__sandbox/stats and nothing else here: a short one.
  const sandbox = await startSandbox({ host: '127.0.0.1', port: 0, maxRecorded: 100 });
  const signInToken = signsIn ? await sandbox.signIn(SANDBOX_SUBJECT) : undefined;
  const why = ' UPSTREAM_URL is not set, so the gateway talks to the built-in sandbox.';
  logger.warn({ sandbox: sandbox.url }, 'SANDBOX MODE: sample data only');
  process.stderr.write(sandboxBanner(sandbox.url, why, signInToken));
  return Object.assign(sandbox, { signInToken });
}

void main();
