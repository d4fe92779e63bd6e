/**
 * One search at a time, in process, on an index already on disk (read-only: a gateway may hold it): the time of each of
 * the 1,000 typed prefixes or of the hard mix, the slowest listed. For finding the slow texts of a bench's register.
 *
 *   BENCH_PADRON_LINES=18300000 BENCH_PADRON_NAMES=peru npx tsx bench/search-index.ts <index version directory> [prefixes|hard]
 */
import { hardMix, Oracle, typedPrefixes } from './padron-typed.js';
import { FULL_SIZE } from './padron-register.js';
import { search } from '../src/padron/search.js';
import { namesOf, openIndex } from '../src/padron/versions.js';

const LINES = Number(process.env['BENCH_PADRON_LINES'] ?? FULL_SIZE);
const path = process.argv[2]!;
const db = await openIndex(path, true);
const names = namesOf(db)!;
const texts = process.argv[3] === 'hard' ? hardMix(new Oracle(LINES - 1)) : typedPrefixes(LINES);
const times: [number, string, number][] = [];
for (const pass of [0, 1])
  for (const t of texts) {
    const started = performance.now();
    let n = -1;
    try {
      n = search({ version: 'v', db, names }, t, {}, 10, undefined).found.length;
    } catch {
      // Refused: counted with -1.
    }
    if (pass) times.push([performance.now() - started, t, n]);
  }
times.sort((a, b) => b[0] - a[0]);
const total = times.reduce((n, x) => n + x[0], 0);
console.log(
  `mean ${(total / times.length).toFixed(2)} ms, p99 ${times[Math.floor(times.length / 100)]![0].toFixed(1)}, max ${times[0]![0].toFixed(1)}`,
);
for (const [ms, t, n] of times.slice(0, 20)) console.log(ms.toFixed(1), JSON.stringify(t), n);
await db.close();
