import type { Logger } from 'pino';
import { ConfigError, loadConfig, withUpstream, type Config } from './config.js';
import { serve } from './process/serve.js';
import { sandboxBanner } from './sandbox/banner.js';
import { SANDBOX_TOKEN } from './sandbox/data.js';
import { SANDBOX_SUBJECT } from './sandbox/identity.js';
import { SANDBOX_IDENTITY } from './config/auth.js';
import type { Received } from './sandbox/receiver.js';
import { startSandbox, type Sandbox } from './sandbox/server.js';
import { createLogger, ignoreStandardStreamErrors, LogOutput } from './telemetry/logger.js';

/**
 * The only place with side effects: configuration, the sandbox, the socket, signals. One process
 * per instance: several instances share through REDIS_URL, and a supervisor (systemd, a restart
 * policy, Kubernetes) restarts one that dies (docs/deploy.md).
 */
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

  const sandbox = config.upstream.baseUrl
    ? undefined
    : await startBuiltinSandbox(config.sandboxPort, config.auth?.jwksUrl === SANDBOX_IDENTITY, logger);
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
  if (config.cache.redisUrl && !config.cache.keySecret) {
    logger.warn('REDIS_URL without CACHE_KEY_SECRET: cache keys hold a plain SHA-256 of each token; set a secret shared by all instances');
  }
  // The sandbox's banner once the port is ours: a port in use is then the last thing said.
  const onListening = sandbox ? () => announceSandbox(logger, sandbox) : undefined;
  serve(config, logger, { flushLogs, logDropped, graphiqlToken, sandbox, onListening });
}

type BuiltinSandbox = Sandbox & { signInToken?: string | undefined; movedFrom?: number | undefined };

/** Starts the sandbox (and, signing in, gets its sign-in token). */
async function startBuiltinSandbox(port: number, signsIn: boolean, logger: Logger): Promise<BuiltinSandbox> {
  // Its record serves /__sandbox/stats and nothing else here: a short one. Its receiver's deliveries are logged, signature and all.
  const onDelivery = ({ headers, body, status }: Received) =>
    logger.info({ sandboxReceiver: { ...headers, status, body: body.slice(0, 2000) } }, 'sandbox receiver: a signed delivery');
  const options = { host: '127.0.0.1', maxRecorded: 100, onDelivery };
  // Its port fixed (README query 6 subscribes its receiver there); taken by another process, any free one, said.
  let movedFrom: number | undefined;
  const sandbox = await startSandbox({ ...options, port }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EADDRINUSE') throw error;
    movedFrom = port;
    return startSandbox({ ...options, port: 0 });
  });
  const signInToken = signsIn ? await sandbox.signIn(SANDBOX_SUBJECT) : undefined;
  return Object.assign(sandbox, { signInToken, movedFrom });
}

/** Says, loudly, that the data is sample data, and what to ask it (and, signing in, with what). */
function announceSandbox(logger: Logger, sandbox: BuiltinSandbox): void {
  const why = ' UPSTREAM_URL is not set, so the gateway talks to the built-in sandbox.';
  logger.warn({ sandbox: sandbox.url }, 'SANDBOX MODE: sample data only');
  // Said once listening, as the banner is: a gateway whose own port is taken says only that.
  if (sandbox.movedFrom !== undefined)
    logger.warn(
      { sandboxPort: sandbox.movedFrom },
      `port ${sandbox.movedFrom} (SANDBOX_PORT) was taken: the sandbox listens at ${sandbox.url}`,
    );
  process.stderr.write(sandboxBanner(sandbox.url, why, sandbox.signInToken));
}

void main();
