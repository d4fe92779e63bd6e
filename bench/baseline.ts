/**
 * The yardstick: a bare node:http server that takes the same POST the gateway takes,
 * forwards one /ruc call through an undici pool with the caller's Authorization, and wraps
 * the record as {"data":{"contribuyente":…}}. No GraphQL, no validation, no limits: what a
 * frontend would pay for calling the REST API through the thinnest possible proxy. POST /ten
 * makes scenario (c)'s ten calls the same way (below).
 *
 *   UPSTREAM_URL=http://127.0.0.1:PORT PORT=0 node dist/bench/baseline.js   (after npm run build)
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const upstream = process.env['UPSTREAM_URL'];
if (!upstream) throw new Error('UPSTREAM_URL is required');
// Large enough for 1,000 callers waiting on a slow upstream at once.
const pool = new Pool(upstream, { connections: 2048, pipelining: 1, keepAliveTimeout: 30_000 });
const MAX_BODY = 100 * 1024;

/** POSTs `{"ruc": ruc}` to `path` with the caller's token and returns the envelope's `data`. */
async function forward(path: string, ruc: string, authorization: string): Promise<unknown> {
  const answer = await pool.request({
    method: 'POST',
    path,
    headers: { accept: 'application/json', 'content-type': 'application/json', authorization },
    body: JSON.stringify({ ruc }),
  });
  return ((await answer.body.json()) as { data?: unknown }).data ?? null;
}

/**
 * POST /ten, for scenario (c): `{"rucs": [...]}` (distinct RUCs) becomes one /ruc call per RUC,
 * then one /ruc-sunat call per RUC, in two waves as the gateway makes them (the detail of a
 * taxpayer is asked for once its summary is in), answered as `{"data":{"a0":{…,"detalle":{…}},…}}`
 * with two aliases per RUC. The same upstream calls as (c), without GraphQL.
 */
async function ten(body: { rucs?: string[] }, authorization: string): Promise<string> {
  const rucs = body.rucs ?? [];
  const summaries = await Promise.all(rucs.map((ruc) => forward('/ruc', ruc, authorization)));
  const details = await Promise.all(rucs.map((ruc) => forward('/ruc-sunat', ruc, authorization)));
  const data: Record<string, unknown> = {};
  for (let i = 0; i < rucs.length * 2; i++) {
    const at = i % rucs.length;
    data[`a${i}`] = { ...(summaries[at] as object), detalle: details[at] };
  }
  return JSON.stringify({ data });
}

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
      if (req.url === '/ten') {
        const tenBody = await ten(
          JSON.parse(Buffer.concat(chunks).toString('utf8')) as { rucs?: string[] },
          req.headers.authorization ?? '',
        );
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(tenBody) }).end(tenBody);
        return;
      }
      // Scenario (a)'s path, written out in full: the yardstick itself, with nothing shared.
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
