/**
 * `npm run bench:padron`: SUNAT's register at its full size (18.3 million lines, in SUNAT's exact
 * format: bench/padron-register.ts) imported by the gateway as production runs it, then
 * `contribuyente` answered from it beside the bare proxy at the bench's 250 ms upstream, in the
 * same run. Figures: the import's duration, the gateway's peak RSS during it, the index's size on
 * disk, and the two systems' latencies and throughput. Every process is stopped by its PID.
 *
 *   BENCH_PADRON_LINES=1000000 npm run bench:padron   (a smaller register, for a quick look)
 *   BENCH_PADRON_NAMES=common                          (names from a vocabulary of under a hundred words a kind)
 *   BENCH_PADRON_ORDER=none                            (the lines in no order)
 *   BENCH_PADRON_NEXT_DAY=off                          (without the next day's import and comparison)
 *
 * The searches are checked against what bench/padron-typed.ts works out from the lines alone.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load, type Sample } from './load.js';
import { serveFiles } from './mirror.js';
import { peakRssMb, start, stopAll } from './procs.js';
import { FULL_SIZE, NAME_MODE, rucAt, writeRegister } from './padron-register.js';
import { foundAsTyped, hardLoad, hardMix, Oracle, searchesOf, timesOf, typedPrefixes } from './padron-typed.js';

const LINES = Number(process.env['BENCH_PADRON_LINES'] ?? FULL_SIZE);
/** `none` writes the register's lines in no order (SUNAT promises none): the import must hold its bounds either way. */
const ORDER = process.env['BENCH_PADRON_ORDER'] === 'none' ? 'none' : 'ruc';
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const REPS = Number(process.env['BENCH_REPS'] ?? 3);
const NEXT_DAY = process.env['BENCH_PADRON_NEXT_DAY'] !== 'off';
/** Taxpayers whose names are typed four ways. */
const SAMPLES = Number(process.env['BENCH_PADRON_SAMPLES'] ?? 10_000);
const QUERY =
  'query Contribuyente($ruc: String!) { contribuyente(ruc: $ruc) { ruc nombreORazonSocial estado condicion direccion departamento esAgenteDeRetencion esBuenContribuyente } }';
const body = (ruc: string) => JSON.stringify({ query: QUERY, variables: { ruc } });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'bench-padron-'));
  const files = join(dir, 'files');
  let server: { url: string; close(): void } | undefined;
  try {
    let t = performance.now();
    await writeRegister(files, LINES, new Date(), ORDER);
    console.log(`register of ${LINES.toLocaleString('en')} lines written in ${Math.round((performance.now() - t) / 1000)} s`);
    server = await serveFiles(files);
    const mirror = server.url;
    const node = process.execPath;
    const sandbox = await start('sandbox', node, 'dist/bench/sandbox.js', { LATENCY_MS: '250' });
    const env = { NODE_ENV: 'production', UPSTREAM_URL: sandbox.url, PORT: '0', HOST: '127.0.0.1', CACHE: 'off', COALESCE: 'off' };
    t = performance.now();
    const gateway = await start('gateway', node, 'dist/src/main.js', { ...env, PADRON: mirror, PADRON_DIR: join(dir, 'index') });
    const idleRss = peakRssMb(gateway.pid);
    type Padron = { lastImport: { result: string; durationMs: number; rows?: number } | null };
    let padron: Padron | undefined;
    for (;;) {
      padron = ((await (await fetch(`${gateway.url}/health`)).json()) as { padron: Padron }).padron;
      if (padron.lastImport) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    if (padron.lastImport!.result !== 'imported') throw new Error(`the import failed: ${JSON.stringify(padron)}`);
    const importS = padron.lastImport!.durationMs / 1000;
    const importRss = peakRssMb(gateway.pid);
    const indexBytes = Number(execFileSync('du', ['-sb', join(dir, 'index')], { encoding: 'utf8' }).split('\t')[0]);
    console.log(
      `imported ${padron.lastImport!.rows} rows in ${importS.toFixed(1)} s; peak RSS ${Math.round(importRss)} MB (idle ${Math.round(idleRss)}); index ${(indexBytes / 1e9).toFixed(2)} GB`,
    );

    const bare = await start('bare', node, 'dist/bench/baseline.js', { UPSTREAM_URL: sandbox.url, PORT: '0' });
    const fromRegister = { body: body(rucAt(Math.floor(LINES * 0.9), LINES - 1)), connections: 50 };
    const fromService = { body: body('20100123453'), connections: 50 };
    for (const [s, l] of [
      [gateway, fromRegister],
      [bare, fromService],
    ] as const)
      await load(s, sandbox, l, 2);
    const search = await searches(gateway.url);
    t = performance.now();
    const oracle = new Oracle(LINES - 1);
    console.log(`the bench's own index of the register's words: ${Math.round((performance.now() - t) / 1000)} s`);
    const typed = await foundAsTyped(gateway.url, oracle, SAMPLES);
    console.log(`whole names typed four ways: ${JSON.stringify(typed)}`);
    const hard = await hardLoad(gateway.url, oracle, hardMix(oracle), rucAt(Math.floor(LINES * 0.3), LINES - 1));
    console.log(`the hard mix, 20 at a time: ${JSON.stringify(hard)}`);
    const list = await supplierList(gateway.url);
    const samples: [Sample[], Sample[]] = [[], []];
    for (let rep = 0; rep < REPS; rep++) {
      samples[0].push(await load(gateway, sandbox, fromRegister, SECONDS));
      samples[1].push(await load(bare, sandbox, fromService, SECONDS));
    }
    // The next day's register, 0.5 % of its rows changed: a gateway started again on the same PADRON_DIR imports it at once and compares.
    await gateway.stop();
    let changes: Awaited<ReturnType<typeof nextDay>> | undefined;
    if (NEXT_DAY) {
      await writeRegister(files, LINES, new Date(), ORDER, 2);
      changes = await nextDay({ ...env, PADRON: mirror, PADRON_DIR: join(dir, 'index'), PADRON_REFRESH_MS: '1000' });
    }
    const [g, b] = samples.map((s) => ({
      rps: median(s.map((x) => x.rps)),
      p50: median(s.map((x) => x.p50)),
      p99: median(s.map((x) => x.p99)),
      failed: s.reduce((a, x) => a + x.failed, 0),
    }));
    const result = {
      at: new Date().toISOString(),
      node: process.version,
      lines: LINES,
      order: ORDER,
      names: NAME_MODE,
      search,
      typed,
      hard,
      list,
      changes,
      import: { seconds: importS, peakRssMb: Math.round(importRss), idleRssMb: Math.round(idleRss), indexBytes },
      contribuyente: { register: g, bareProxy: b },
      targets: {
        'import <= 300 s': importS <= 300,
        'peak RSS <= 512 MB': importRss <= 512,
        'p50 <= bare / 20': g!.p50 <= b!.p50 / 20,
        'rps >= bare': g!.rps >= b!.rps,
        'search p99 <= 50 ms': search.p99 <= 50,
        'whole names where the order puts them': typed.found === typed.cases && typed.errors === 0,
        'no page short but the last': search.shortPages + typed.shortPages + hard.shortPages === 0,
        'hard mix as the oracle says': hard.differentFromOracle === 0 && hard.failed === 0,
        'hard mix p99 <= 50 ms': hard.p99 <= 50,
        'hard mix max <= 250 ms': hard.max <= 250,
        'contribuyente meanwhile p99 < 10 ms': hard.contribuyenteMeanwhile.p99 < 10,
        'index <= 5.8 GB': indexBytes <= 5.8e9,
        '10,000 RUCs <= 2 s': list.ms <= 2000,
        ...(changes && {
          'comparison <= 60 s': changes.comparisonS <= 60,
          'peak RSS with the comparison <= 512 MB': changes.peakRssMb <= 512,
        }),
      },
    };
    console.log(JSON.stringify(result, null, 2));
    mkdirSync('bench/results', { recursive: true });
    writeFileSync(`bench/results/padron-${result.at.replace(/[:.]/g, '-')}.json`, `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await stopAll();
    server?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The next day's import in a gateway of its own: its time, the comparison's (from its log line), the changes found, and its peak RSS. */
async function nextDay(env: Record<string, string>) {
  const gateway = await start('gateway-day-2', process.execPath, 'dist/src/main.js', env);
  try {
    for (;;) {
      const recorded = /"changes":\{"fecha":"[^"]*","changes":(\d+),"pruned":\d+,"durationMs":(\d+)\}/.exec(gateway.output());
      const failed = /padron: import failed[^\n]*/.exec(gateway.output());
      if (failed) throw new Error(failed[0]);
      if (recorded && /padron: imported/.test(gateway.output())) {
        const padron = ((await (await fetch(`${gateway.url}/health`)).json()) as { padron: { lastImport: { durationMs: number } } }).padron;
        const measured = {
          changes: Number(recorded[1]),
          comparisonS: Number(recorded[2]) / 1000,
          importS: padron.lastImport.durationMs / 1000,
          peakRssMb: Math.round(peakRssMb(gateway.pid)),
        };
        console.log(`the next day's register: ${JSON.stringify(measured)}`);
        return measured;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await gateway.stop();
  }
}

/**
 * 1,000 prefixes typed into a form, cut from names of the register at a length a user stops at, and the common words: 20 at a
 * time over 20 connections of an undici pool, from a process of its own (bench/search-caller.ts), as the other loads here
 * (fetch cost this 2-core machine 1.6 ms of CPU a request, taken from the gateway: docs/performance.md). Also counted: the
 * pages that came back short of `first` with a next page.
 */
async function searches(url: string) {
  const measured = timesOf(await searchesOf(url, { texts: typedPrefixes(LINES), first: 10, width: 20, passes: 1 }));
  console.log(`search, 20 at a time: ${JSON.stringify(measured)}`);
  return measured;
}

/** 10,000 RUCs of the register in one contribuyentes list: the median of three. */
async function supplierList(url: string) {
  const rucs = Array.from({ length: 10_000 }, (_, k) => rucAt((k * 1_830) % (LINES - 1), LINES - 1));
  const times: number[] = [];
  let ok = true;
  for (let r = 0; r < 3; r++) {
    const started = performance.now();
    const res = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer bench-token' },
      body: JSON.stringify({
        query: 'query($r: [String!]!) { contribuyentes(rucs: $r) { ruc estado condicion } }',
        variables: { r: rucs },
      }),
    });
    const body = (await res.json()) as { data?: { contribuyentes: unknown[] }; errors?: unknown };
    times.push(performance.now() - started);
    ok &&= !body.errors && body.data?.contribuyentes.length === 10_000;
  }
  const measured = { rucs: 10_000, ms: Math.round(median(times)), ok };
  console.log(`10,000 RUCs from the register: ${JSON.stringify(measured)}`);
  return measured;
}

await main();
