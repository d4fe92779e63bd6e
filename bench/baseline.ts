/**
 * The yardstick: a bare node:http server that takes the same POST the gateway takes,
 * forwards one /ruc call through an undici pool with the caller's Authorization, and wraps
 * the record as {"data":{"contribuyente":…}}. No GraphQL, no validation, no limits: what a
 * frontend would pay for calling the REST API through the thinnest possible proxy.
 *
 *   UPSTREAM_URL=http://127.0.0.1:PORT PORT=0 node dist/bench/baseline.js   (after npm run build)
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const upstream = process.env['UPSTREAM_URL'];
if (!upstream) throw new Error('UPSTREAM_URL is required');
const pool = new Pool(upstream, { connections: 64, pipelining: 1, keepAliveTimeout: 30_000 });
const MAX_BODY = 100 * 1024;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_BODY) chunks.push(chunk);
  });
  req.on('end', async () => {
    try {
      if (size > MAX_BODY) {
        res.writeHead(413).end();
        return;
      }
      const { variables } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { variables?: { ruc?: string } };
      const answer = await pool.request({
        method: 'POST',
        path: '/ruc',
        headers: { accept: 'application/json', 'content-type': 'application/json', authorization: req.headers.authorization ?? '' },
        body: JSON.stringify({ ruc: variables?.ruc ?? '' }),
      });
      const envelope = (await answer.body.json()) as { data?: unknown };
      const body = JSON.stringify({ data: { contribuyente: envelope.data ?? null } });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    } catch {
      res.writeHead(502).end();
    }
  });
});

server.listen(Number(process.env['PORT'] ?? 0), '127.0.0.1', () => {
  console.log(`baseline ready: http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void pool.close().then(() => process.exit(0));
});
