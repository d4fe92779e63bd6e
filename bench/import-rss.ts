/**
 * An import in process, its memory every 2 s by phase: RSS, anonymous and file-backed, the heap. Run with the production
 * flags (package.json's start:prod) to read what the gateway would:
 *
 *   node --max-semi-space-size=24 --heap-growing-percent=100 --import tsx bench/import-rss.ts <files dir> <index dir>
 */
import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { Register } from '../src/padron/register.js';
import { serveFiles } from './mirror.js';
const files = process.argv[2]!;
const server = await serveFiles(files);
const padron = new Register({
  source: new URL(server.url),
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
