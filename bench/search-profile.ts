/**
 * One search at a time, in process, on a register written by bench/padron-register.ts: the time of
 * each text of the hard mix, the slowest listed. `BENCH_PADRON_LINES`, `BENCH_PADRON_NAMES` as the
 * bench; `BENCH_PROFILE_DIR` keeps the index between runs.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { Register } from '../src/padron/register.js';
import { hardMix, Oracle, typedPrefixes } from './padron-typed.js';
import { FULL_SIZE, writeRegister } from './padron-register.js';
import { serveFiles } from './mirror.js';

const LINES = Number(process.env['BENCH_PADRON_LINES'] ?? FULL_SIZE);
const dir = process.env['BENCH_PROFILE_DIR'] ?? '/tmp/search-profile';
const files = join(dir, 'files');
if (!existsSync(join(files, 'padron_reducido_ruc.zip'))) {
  mkdirSync(files, { recursive: true });
  await writeRegister(files, LINES);
}
const server = await serveFiles(files);
const padron = new Register({
  source: new URL(server.url),
  dir: join(dir, 'index'),
  maxAgeMs: 86_400_000_000,
  refreshMs: 3_600_000_000,
  logger: pino({ level: 'silent' }),
  searchThreads: 0,
});
await padron.start?.();
if (padron.state().state !== 'ready') await padron.refresh();
console.log(padron.state());
// BENCH_PROFILE_TEXTS=prefixes: the 1,000 prefixes typed into a form, else the hard mix.
const texts = process.env['BENCH_PROFILE_TEXTS'] === 'prefixes' ? typedPrefixes(LINES) : hardMix(new Oracle(LINES - 1));
const times: [number, string, number][] = [];
for (const pass of [0, 1])
  for (const t of texts) {
    const started = performance.now();
    const page = await padron.search(t, {}, 10, undefined).catch((e: Error) => ({ records: [], error: e.message }));
    if (pass) times.push([performance.now() - started, t, page.records.length]);
  }
times.sort((a, b) => b[0] - a[0]);
const total = times.reduce((n, x) => n + x[0], 0);
console.log(
  `mean ${(total / times.length).toFixed(2)} ms, p99 ${times[Math.floor(times.length / 100)]![0].toFixed(1)}, max ${times[0]![0].toFixed(1)}`,
);
for (const [ms, t, n] of times.slice(0, 25)) console.log(ms.toFixed(1), JSON.stringify(t), n);
await padron.close();
server.close();
