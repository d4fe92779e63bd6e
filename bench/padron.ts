/**
 * `npm run bench:padron`: SUNAT's register at its full size (18.3 million lines, in SUNAT's exact
 * format: bench/padron-register.ts) imported by the gateway as production runs it, then
 * `contribuyente` answered from it beside the bare proxy at the bench's 250 ms upstream, in the
 * same run. Figures: the import's duration, the gateway's peak RSS during it, the index's size on
 * disk, and the two systems' latencies and throughput. Every process is stopped by its PID.
 *
 *   BENCH_PADRON_LINES=1000000 npm run bench:padron   (a smaller register, for a quick look)
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load, type Sample } from './load.js';
import { peakRssMb, start, stopAll } from './procs.js';
import { FULL_SIZE, rucAt, writeRegister } from './padron-register.js';

const LINES = Number(process.env['BENCH_PADRON_LINES'] ?? FULL_SIZE);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const REPS = Number(process.env['BENCH_REPS'] ?? 3);
const QUERY = 'query Contribuyente($ruc: String!) { contribuyente(ruc: $ruc) { ruc nombreORazonSocial estado condicion direccion departamento esAgenteDeRetencion esBuenContribuyente } }';
const body = (ruc: string) => JSON.stringify({ query: QUERY, variables: { ruc } });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'bench-padron-'));
  const files = join(dir, 'files');
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
  try {
    let t = performance.now();
    await writeRegister(files, LINES);
    console.log(`register of ${LINES.toLocaleString('en')} lines written in ${Math.round((performance.now() - t) / 1000)} s`);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const mirror = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
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
    console.log(`imported ${padron.lastImport!.rows} rows in ${importS.toFixed(1)} s; peak RSS ${Math.round(importRss)} MB (idle ${Math.round(idleRss)}); index ${(indexBytes / 1e9).toFixed(2)} GB`);

    const bare = await start('bare', node, 'dist/bench/baseline.js', { UPSTREAM_URL: sandbox.url, PORT: '0' });
    const fromRegister = { body: body(rucAt(Math.floor(LINES * 0.9), LINES - 1)), connections: 50 };
    const fromService = { body: body('20100123453'), connections: 50 };
    for (const [s, l] of [[gateway, fromRegister], [bare, fromService]] as const) await load(s, sandbox, l, 2);
    const samples: [Sample[], Sample[]] = [[], []];
    for (let rep = 0; rep < REPS; rep++) {
      samples[0].push(await load(gateway, sandbox, fromRegister, SECONDS));
      samples[1].push(await load(bare, sandbox, fromService, SECONDS));
    }
    const [g, b] = samples.map((s) => ({ rps: median(s.map((x) => x.rps)), p50: median(s.map((x) => x.p50)), p99: median(s.map((x) => x.p99)), failed: s.reduce((a, x) => a + x.failed, 0) }));
    const result = {
      at: new Date().toISOString(),
      node: process.version,
      lines: LINES,
      import: { seconds: importS, peakRssMb: Math.round(importRss), idleRssMb: Math.round(idleRss), indexBytes },
      contribuyente: { register: g, bareProxy: b },
      targets: {
        'import <= 300 s': importS <= 300,
        'peak RSS <= 512 MB': importRss <= 512,
        'p50 <= bare / 20': g!.p50 <= b!.p50 / 20,
        'rps >= bare': g!.rps >= b!.rps,
      },
    };
    console.log(JSON.stringify(result, null, 2));
    mkdirSync('bench/results', { recursive: true });
    writeFileSync(`bench/results/padron-${result.at.replace(/[:.]/g, '-')}.json`, `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await stopAll();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
