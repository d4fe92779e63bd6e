/**
 * SUNAT's receipt validation for the benchmark, in a process of its own: the token call and
 * `validarcomprobante`, each answer 100–300 ms late (uniform), as SUNAT's users report it. It
 * counts what it is asked (each receipt's calls, the most in flight at once, the delays it
 * drew) and answers GET /__stats with them. A receipt's state follows its number, by the rule
 * bench/jobs.ts works out apart: `estadoOf`.
 *
 *   node dist/bench/sunat-double.js   (after npm run build)
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export const BENCH_SUNAT = { rucEmpresa: '20100123453', clientId: 'bench-client', clientSecret: 'bench-secret-not-logged' };

/** The state SUNAT gives receipt number `n`: mostly accepted, a few of each other kind. */
export function estadoOf(n: number): string {
  if (n % 97 === 0) return '0';
  if (n % 13 === 0) return '2';
  if (n % 31 === 0) return '4';
  return '1';
}

const MIN_MS = 100;
const MAX_MS = 300;

if (process.argv[1]?.endsWith('sunat-double.js')) {
  const asked = new Map<string, number>();
  let inFlight = 0;
  let peak = 0;
  let calls = 0;
  let delaySum = 0;
  let firstAt = 0;
  let lastAt = 0;
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/__stats') {
      const repeated = [...asked.values()].filter((n) => n > 1).length;
      return void res.end(
        JSON.stringify({ calls, distinct: asked.size, repeated, peak, meanDelayMs: calls ? delaySum / calls : 0, firstAt, lastAt }),
      );
    }
    if (req.method === 'POST' && req.url === '/__reset') {
      asked.clear();
      [calls, peak, delaySum, firstAt, lastAt] = [0, inFlight, 0, 0, 0];
      return void res.end('{}');
    }
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const json = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.url?.includes('/oauth2/token'))
        return json(200, { access_token: `bench-token-${Date.now()}`, token_type: 'JWT', expires_in: 3600 });
      if (!req.url?.endsWith('/validarcomprobante')) return json(404, {});
      const body = JSON.parse(text) as { numero: string; numRuc: string; numeroSerie: string };
      const key = `${body.numRuc}|${body.numeroSerie}|${body.numero}`;
      asked.set(key, (asked.get(key) ?? 0) + 1);
      calls++;
      peak = Math.max(peak, ++inFlight);
      const delay = MIN_MS + Math.random() * (MAX_MS - MIN_MS);
      delaySum += delay;
      firstAt ||= Date.now();
      setTimeout(() => {
        inFlight--;
        lastAt = Date.now();
        json(200, {
          success: true,
          message: 'Operation Success! ',
          data: { estadoCp: estadoOf(Number(body.numero)), estadoRuc: '00', condDomiRuc: '00', observaciones: [] },
        });
      }, delay);
    });
  });
  server.listen(0, '127.0.0.1', () => console.log(`sunat ready: http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}
