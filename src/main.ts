import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { DEFAULT_TOKENS, TRIGGERS } from './sandbox/data.js';
import { startSandbox, type Sandbox } from './sandbox/server.js';

async function main() {
  let config;
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

  let sandbox: Sandbox | undefined;
  if (!config.upstreamUrl) {
    sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
    config = { ...config, upstreamUrl: sandbox.url };
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
  }

  const app = createApp(config, { logger, ...(sandbox ? { graphiqlToken: 'sandbox-pro' } : {}) });
  const server = createServer(app);
  server.listen(config.port, config.host, () => {
    const { port } = server.address() as AddressInfo;
    const shown = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
    logger.info({ port, host: config.host }, `GraphQL gateway ready: http://${shown}:${port}/graphql`);
  });

  const stop = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    server.close();
    await app.dispose();
    await sandbox?.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

void main();
