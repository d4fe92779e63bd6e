import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { createOpsServer, type OpsAnswers } from '../http/health.js';

/**
 * The operations port (OPS_PORT), on HOST: in the cluster's primary when there are workers, so
 * that no scrape or probe ever lands on a worker serving GraphQL; else in the one process.
 */
export function startOpsServer(config: Config, logger: Logger, ops: OpsAnswers): Server {
  const server = createOpsServer(ops);
  server.on('error', (error) => logger.error({ err: error, port: config.opsPort }, 'the operations port cannot listen'));
  server.listen(config.opsPort, config.host, () => {
    const { port } = server.address() as AddressInfo;
    const shown = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
    logger.info({ port, host: config.host }, `operations endpoints ready: http://${shown}:${port}/metrics /ready /health`);
  });
  return server;
}
