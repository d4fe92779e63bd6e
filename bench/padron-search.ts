/**
 * The bench's searches alone (bench/padron-typed.ts), on a register already written and imported
 * under BENCH_PADRON_DIR (`files/` and `index/`, as bench/search-profile.ts or bench/import-rss.ts
 * leave them): a gateway as production runs it reuses the index, and the loads run. For trying a
 * change of the search without the 4 minutes of an import; the figures of record come from
 * `npm run bench:padron`.
 *
 *   BENCH_PADRON_DIR=/tmp/prof BENCH_PADRON_LINES=18300000 BENCH_PADRON_NAMES=common node dist/bench/padron-search.js
 */
import { join } from 'node:path';
import { start, stopAll } from './procs.js';
import { FULL_SIZE, rucAt } from './padron-register.js';
import { foundAsTyped, hardLoad, hardMix, Oracle, searchesOf, timesOf, typedPrefixes } from './padron-typed.js';
import { serveFiles } from './mirror.js';

const LINES = Number(process.env['BENCH_PADRON_LINES'] ?? FULL_SIZE);
const DIR = process.env['BENCH_PADRON_DIR'];
const SAMPLES = Number(process.env['BENCH_PADRON_SAMPLES'] ?? 0);
if (!DIR) throw new Error('BENCH_PADRON_DIR names the register to search');
const files = join(DIR, 'files');
let server: Awaited<ReturnType<typeof serveFiles>> | undefined;
try {
  server = await serveFiles(files);
  const mirror = server.url;
  const sandbox = await start('sandbox', process.execPath, 'dist/bench/sandbox.js', { LATENCY_MS: '250' });
  const gateway = await start('gateway', process.execPath, 'dist/src/main.js', {
    NODE_ENV: 'production',
    UPSTREAM_URL: sandbox.url,
    PORT: '0',
    HOST: '127.0.0.1',
    CACHE: 'off',
    PADRON: mirror,
    PADRON_DIR: join(DIR, 'index'),
  });
  for (;;) {
    const health = (await (await fetch(`${gateway.url}/health`)).json()) as { padron: { state: string } };
    if (health.padron.state === 'ready') break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const prefixes = timesOf(await searchesOf(gateway.url, { texts: typedPrefixes(LINES), first: 10, width: 20, passes: 1 }));
  console.log(`search, 20 at a time: ${JSON.stringify(prefixes)}`);
  const oracle = new Oracle(LINES - 1);
  if (SAMPLES) console.log(`whole names typed four ways: ${JSON.stringify(await foundAsTyped(gateway.url, oracle, SAMPLES))}`);
  const hard = await hardLoad(gateway.url, oracle, hardMix(oracle), rucAt(Math.floor(LINES * 0.3), LINES - 1));
  console.log(`the hard mix, 20 at a time: ${JSON.stringify(hard)}`);
} finally {
  await stopAll();
  server?.close();
}
