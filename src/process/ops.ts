import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { coalesced, createOpsServer, type OpsAnswers } from '../http/health.js';

/**
 * The operations port (OPS_PORT), on HOST: scrapes and probes never share the GraphQL port's
 * sockets or admission, and one metrics text answers every scrape for a second (no Prometheus
 * interval sees it), so that a flood of scrapes costs the GraphQL work one gathering a second.
 */
export function startOpsServer(config: Config, logger: Logger, ops: OpsAnswers): Server {
  const server = createOpsServer({ ...ops, metricsText: coalesced(ops.metricsText, 1000) });
  server.on('error', (error) => logger.error({ err: error, port: config.opsPort }, 'the operations port cannot listen'));
  server.listen(config.opsPort, config.host, () => {
    const { port } = server.address() as AddressInfo;
    const shown = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
    logger.info({ port, host: config.host }, `operations endpoints ready: http://${shown}:${port}/metrics /ready /health`);
  });
  return server;
}
