import { createReadStream, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pino } from 'pino';
import { Register } from '../src/padron/register.js';
const files = process.argv[2]!;
const server = createServer((req, res) => {
  const path = join(files, (req.url ?? '/').slice(1));
  try {
    const { size, mtime } = statSync(path);
    res.writeHead(200, { 'content-length': size, 'last-modified': mtime.toUTCString() });
    createReadStream(path).pipe(res);
  } catch {
    res.writeHead(404).end();
  }
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const padron = new Register({
  source: new URL(`http://127.0.0.1:${(server.address() as { port: number }).port}/`),
  dir: process.argv[3]!,
  maxAgeMs: 1e12,
  refreshMs: 2e9,
  logger: pino({ level: 'silent' }),
  searchThreads: 0,
});
let peak = 0;
const t0 = performance.now();
const tick = setInterval(() => {
  const st = readFileSync('/proc/self/status', 'utf8');
  const get = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(st)![1]) / 1024;
  const m = process.memoryUsage();
  const rss = get('VmRSS');
  console.log(
    `${((performance.now() - t0) / 1000).toFixed(0)}s ${JSON.stringify((padron.state() as any).progress ?? {})} rss ${rss.toFixed(0)} anon ${get('RssAnon').toFixed(0)} file ${get('RssFile').toFixed(0)} heap ${(m.heapUsed / 1e6).toFixed(0)}/${(m.heapTotal / 1e6).toFixed(0)} ext ${(m.external / 1e6).toFixed(0)} ab ${(m.arrayBuffers / 1e6).toFixed(0)}`,
  );
  peak = Math.max(peak, rss);
}, 2000);
await padron.refresh();
clearInterval(tick);
console.log('peak', peak, padron.state().lastImport);
await padron.close();
server.close();
