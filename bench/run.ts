/**
 * `npm run bench`: the gateway beside the fastest safe GraphQL peer (fastify + mercurius on
 * graphql-js, bench/mercurius.ts) and a bare node:http + undici proxy (bench/baseline.ts), all
 * over the sandbox in a process of its own, with autocannon as the load generator, on this
 * machine's loopback and cores; once on the machine's Node and once on Node 24 LTS
 * (scripts/node24.sh). Bounded: every measurement lasts BENCH_SECONDS (default 5) and is repeated
 * BENCH_REPS times (default 5), alternating systems. Every process it starts is stopped by its
 * own PID. Only good answers count: a 200 whose body carries an error is not throughput.
 *
 * Results: bench/results/<time>.json and bench/results/latest.json, and a Markdown table per Node.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callsPerOperation, load, TOKENS, type Load, type Sample } from './load.js';
import { peakRssMb, start, stopAll, type Proc } from './procs.js';
import { SANDBOX_AUDIENCE, SANDBOX_JWKS_PATH } from '../src/config/auth.js';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 5);
const REPS = Number(process.env['BENCH_REPS'] ?? 5);
const WARMUP_SECONDS = 2;
/**
 * Another build of the gateway (its `dist/src/main.js`, built in a folder of this checkout so
 * that it finds these node_modules), measured in (a), (c), (h) and (i) in the same alternating rounds:
 * before and after a change, side by side.
 */
const BEFORE = process.env['BENCH_BEFORE'];
/** With BENCH_BEFORE: measure only this build against it, in (a), (c), (h) and (i), and stop. */
const ONLY_BEFORE = process.env['BENCH_ONLY_BEFORE'] === '1';
/** (c) against the bare proxy's same ten calls before issue 22 (docs/performance.md): not to fall below. */
const C_BEFORE_ISSUE_22 = 0.63;

/** The Node binaries to run on: `machine` (this process's) and `24` (Node 24 LTS). @default both */
function nodes(): { label: string; bin: string }[] {
  return (process.env['BENCH_NODES'] ?? 'machine,24').split(',').map((which) => {
    const bin = which === '24' ? execFileSync('scripts/node24.sh', { encoding: 'utf8' }).trim() : process.execPath;
    return { label: `Node ${execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim()}`, bin };
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
function summarize(samples: Sample[]): Sample {
  return {
    rps: Math.round(median(samples.map((s) => s.rps))),
    p50: median(samples.map((s) => s.p50)),
    p99: median(samples.map((s) => s.p99)),
    requests: samples.reduce((a, s) => a + s.requests, 0),
    failed: samples.reduce((a, s) => a + s.failed, 0),
    upstreamPerOp: Math.round(median(samples.map((s) => s.upstreamPerOp)) * 100) / 100,
    cpuUs: Math.round(median(samples.map((s) => s.cpuUs))),
  };
}

/** Warm each, then REPS rounds alternating systems; the median of each. `each` adapts the load to a system. */
async function compare(systems: Proc[], sandbox: Proc, common: Load, each: Partial<Load>[] = []): Promise<Sample[]> {
  const loads = systems.map((_, i) => ({ ...common, ...each[i] }));
  for (const [i, s] of systems.entries()) await load(s, sandbox, loads[i]!, WARMUP_SECONDS);
  // One system at a time: the sandbox counts every caller's calls.
  const exact: number[] = [];
  for (const [i, s] of systems.entries())
    exact.push(await callsPerOperation(s, sandbox, loads[i]!.body, loads[i]!.path, loads[i]!.bearer?.[0]));
  const samples: Sample[][] = systems.map(() => []);
  for (let rep = 0; rep < REPS; rep++) {
    for (const [i, s] of systems.entries()) samples[i]!.push(await load(s, sandbox, loads[i]!, loads[i]!.seconds ?? SECONDS));
  }
  return samples.map((s, i) => ({ ...summarize(s), upstreamPerOp: exact[i]! }));
}

const q = (query: string, variables: Record<string, unknown>) => JSON.stringify({ query, variables });
const RUCS = ['20100123453', '20501234568', '20602345671', '20603456786', '20484567892'];
const BODIES = {
  contribuyente: q(
    'query Contribuyente($ruc: String!) { contribuyente(ruc: $ruc) { ruc nombreORazonSocial estado condicion direccion departamento esAgenteDeRetencion esBuenContribuyente } }',
    { ruc: RUCS[0] },
  ),
  aliases: JSON.stringify({
    query: `query Alias { ${Array.from({ length: 10 }, (_, i) => `a${i}: contribuyente(ruc: "${RUCS[i % 5]}") { ruc nombreORazonSocial detalle { tipoContribuyente actividadesEconomicas } }`).join(' ')} }`,
  }),
  // (c)'s calls for the baseline's POST /ten: the five distinct RUCs, no GraphQL.
  tenCalls: JSON.stringify({ rucs: RUCS }),
  licencia: q(
    'query Licencia($n: String!) { licencia(numLicencia: $n) { numLicencia tipoDocumento numeroDocumento nombres apellidoPaterno apellidoMaterno } }',
    { n: 'Q46779354' },
  ),
  batch: q(
    'mutation Validar($c: [ComprobanteInput!]!) { validarComprobantes(comprobantes: $c) { cantidadDeComprobantes comprobantes { serieDocumento numeroDocumento comprobanteEstadoDescripcion observaciones } } }',
    {
      c: Array.from({ length: 100 }, (_, i) => ({
        rucEmisor: RUCS[i % 5],
        codigoTipoDocumento: '01',
        serieDocumento: 'F001',
        numeroDocumento: String(i + 1),
        fechaDeEmision: '2026-10-01',
        total: '100.00',
      })),
    },
  ),
};

const gatewayEnv = (sandbox: Proc, extra: Record<string, string> = {}) => ({
  NODE_ENV: 'production',
  UPSTREAM_URL: sandbox.url,
  WORKERS: '1',
  PORT: '0',
  HOST: '127.0.0.1',
  // Every operation reaches the upstream, as the bare proxy's and Mercurius's do: nothing kept, no call shared.
  CACHE: 'off',
  COALESCE: 'off',
  ...extra,
});

export interface Row {
  scenario: string;
  system: string;
  sample: Sample;
  /** Good answers per second against the bare proxy's, and against Mercurius's, in the same scenario. */
  toBare?: number;
  toMercurius?: number;
  /** This build's good answers per second against BENCH_BEFORE's, measured in the same rounds. */
  toBefore?: number;
  peakRssMb?: number;
  target?: string;
  met?: boolean;
}

/** The bench's three systems over one sandbox whose answers take `latencyMs`. */
async function systems(node: string, latencyMs: number, cache = 'off') {
  const sandbox = await start('sandbox', node, 'dist/bench/sandbox.js', { LATENCY_MS: String(latencyMs) });
  const gateway = await start('gateway', node, 'dist/src/main.js', gatewayEnv(sandbox, { CACHE: cache }));
  const mercurius = await start('mercurius', node, 'dist/bench/mercurius.js', { UPSTREAM_URL: sandbox.url, PORT: '0' });
  const bare = await start('bare', node, 'dist/bench/baseline.js', { UPSTREAM_URL: sandbox.url, PORT: '0' });
  return { sandbox, gateway, mercurius, bare, stop: () => Promise.all([sandbox, gateway, mercurius, bare].map((p) => p.stop())) };
}

/** The three systems on one load; the gateway's row carries the target, judged by `met`. */
async function threeWay(
  rows: Row[],
  scenario: string,
  s: Awaited<ReturnType<typeof systems>>,
  l: Load,
  target: string,
  met: (gateway: Sample, mercurius: Sample, rss: number) => boolean,
) {
  const [g, m, b] = await compare([s.gateway, s.mercurius, s.bare], s.sandbox, l);
  const rss = peakRssMb(s.gateway.pid);
  rows.push({ scenario, system: 'bare proxy', sample: b!, toBare: 1, peakRssMb: peakRssMb(s.bare.pid) });
  rows.push({ scenario, system: 'Mercurius', sample: m!, toBare: m!.rps / b!.rps, toMercurius: 1, peakRssMb: peakRssMb(s.mercurius.pid) });
  rows.push({
    scenario,
    system: 'gateway',
    sample: g!,
    toBare: g!.rps / b!.rps,
    toMercurius: g!.rps / m!.rps,
    peakRssMb: rss,
    target,
    met: met(g!, m!, rss),
  });
}

/**
 * (a) in sign-in mode (AUTH_JWKS_URL, the sandbox as identity provider): each of 16 users with
 * a JWT of their own, verified on every request, and a budget charged per call (in memory, one
 * process), beside the same gateway passing the plan tokens through, in the same rounds.
 */
async function signedInRow(rows: Row[], node: string, s: Awaited<ReturnType<typeof systems>>, log: (m: string) => void) {
  log('(a) signed in: one JWT per user, verified on every request');
  const signedIn = await start(
    'gateway-signed-in',
    node,
    'dist/src/main.js',
    gatewayEnv(s.sandbox, {
      AUTH_JWKS_URL: `${s.sandbox.url}${SANDBOX_JWKS_PATH}`,
      AUTH_ISSUER: s.sandbox.url,
      AUTH_AUDIENCE: SANDBOX_AUDIENCE,
      UPSTREAM_TOKEN: TOKENS[0]!,
      BUDGET_QUERIES: String(1_000_000_000),
    }),
  );
  const jwts = await Promise.all(
    TOKENS.map(async (_, i) => ((await (await fetch(`${s.sandbox.url}/__sandbox/token?sub=user-${i}`)).json()) as { token: string }).token),
  );
  const scenario = '(a) contribuyente, 50 conn, signed in';
  const [pass, signed] = await compare([s.gateway, signedIn], s.sandbox, { body: BODIES.contribuyente, connections: 50 }, [
    {},
    { bearer: jwts },
  ]);
  rows.push({ scenario, system: 'gateway (pass-through, beside)', sample: pass! });
  rows.push({
    scenario,
    system: 'gateway (sign-in mode, 16 users)',
    sample: signed!,
    target: `${(signed!.rps / pass!.rps).toFixed(2)} of pass-through; verification and budget: ${signed!.cpuUs - pass!.cpuUs} µs of CPU per request`,
  });
  await signedIn.stop();
}

/**
 * BENCH_BEFORE: this build and the one before, alternating in the same rounds, where a change
 * could show: (a) and (c) with the upstream answering at once, (h) at 20 ms and (i) at 250 ms.
 * Each load on a fresh pair of gateways, so that each peak RSS is that load's own.
 */
async function beforeRows(rows: Row[], node: string, log: (m: string) => void): Promise<void> {
  const tokens = (t: number) => `${t} token${t > 1 ? 's' : ''}`;
  const phases: { latencyMs: number; loads: [string, Load, Local?][] }[] = [
    {
      latencyMs: 0,
      loads: [
        ['(a) contribuyente, 50 conn', { body: BODIES.contribuyente, connections: 50 }],
        ['(c) 10 calls: 5 RUCs + detalle', { body: BODIES.aliases, connections: 50 }],
        ['(g) contribuyente, cache hits, 50 conn', { body: BODIES.contribuyente, connections: 50 }, 'cache'],
        ['(r) contribuyente from the register, 50 conn', { body: BODIES.contribuyente, connections: 50 }, 'register'],
      ],
    },
    {
      latencyMs: 20,
      loads: [16, 1].map((t) => [
        `(h) upstream 20 ms, 200 conn, ${tokens(t)}`,
        { body: BODIES.contribuyente, connections: 200, tokens: t },
      ]),
    },
    {
      latencyMs: 250,
      loads: [16, 1].map((t) => [
        `(i) upstream 250 ms, 1,000 conn, ${tokens(t)}`,
        { body: BODIES.contribuyente, connections: 1000, tokens: t },
      ]),
    },
  ];
  // BENCH_SCENARIOS=g,r: only those scenarios' letters, to measure one change quickly.
  const only = process.env['BENCH_SCENARIOS']?.split(',');
  const picked = (scenario: string) => !only || only.includes(scenario.slice(1, scenario.indexOf(')')));
  for (const phase of phases) phase.loads = phase.loads.filter(([scenario]) => picked(scenario));
  for (const { latencyMs, loads } of phases.filter((p) => p.loads.length > 0)) {
    const sandbox = await start('sandbox', node, 'dist/bench/sandbox.js', { LATENCY_MS: String(latencyMs) });
    for (const [scenario, l, local] of loads) {
      log(`${scenario}: this build beside BENCH_BEFORE`);
      const now = await startLocal('gateway', node, 'dist/src/main.js', sandbox, local);
      const before = await startLocal('before', node, BEFORE!, sandbox, local);
      const [a, b] = await compare([now, before], sandbox, l);
      rows.push({ scenario, system: 'gateway (this build, beside BENCH_BEFORE)', sample: a!, peakRssMb: peakRssMb(now.pid) });
      rows.push({ scenario, system: 'gateway (BENCH_BEFORE)', sample: b!, toBefore: a!.rps / b!.rps, peakRssMb: peakRssMb(before.pid) });
      await Promise.all([now.stop(), before.stop()]);
    }
    await sandbox.stop();
  }
}

/** Where an answer comes from without a call: the cache, or SUNAT's register kept by the gateway (the sandbox's). */
type Local = 'cache' | 'register';

/** A gateway whose answers come from `local`: with the register, started once it has imported the sandbox's (a directory of its own). */
async function startLocal(name: string, node: string, file: string, sandbox: Proc, local: Local | undefined): Promise<Proc> {
  if (local !== 'register') return start(name, node, file, gatewayEnv(sandbox, local === 'cache' ? { CACHE: 'on' } : {}));
  const dir = mkdtempSync(join(tmpdir(), `bench-padron-${name}-`));
  const proc = await start(name, node, file, gatewayEnv(sandbox, { PADRON: `${sandbox.url}/__sandbox/padron/`, PADRON_DIR: dir }));
  for (let i = 0; ; i++) {
    const health = (await (await fetch(`${proc.url}/health`)).json()) as { padron?: { state: string } };
    if (health.padron?.state === 'ready') break;
    if (i > 600) throw new Error(`${name}: the register was never imported`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { ...proc, stop: () => proc.stop().finally(() => rmSync(dir, { recursive: true, force: true })) };
}

async function runOn(node: string, log: (m: string) => void): Promise<Row[]> {
  const rows: Row[] = [];

  if (BEFORE) {
    await beforeRows(rows, node, log);
    if (ONLY_BEFORE) return rows;
  }

  // Phase 1: the upstream answers at once.
  let s = await systems(node, 0);
  log('(a) one contribuyente, 50 connections, full load');
  await threeWay(
    rows,
    '(a) contribuyente, 50 conn',
    s,
    { body: BODIES.contribuyente, connections: 50 },
    '>= 0.8 of Mercurius',
    (g, m) => g.rps >= 0.8 * m.rps,
  );
  await signedInRow(rows, node, s, log);

  log('(c) 10 aliased contribuyente over 5 RUCs, each with detalle');
  const [c, cBare] = await compare([s.gateway, s.bare], s.sandbox, { body: BODIES.aliases, connections: 50 }, [
    {},
    { path: '/ten', body: BODIES.tenCalls },
  ]);
  rows.push({ scenario: '(c) 10 calls: 5 RUCs + detalle', system: 'bare proxy (the same ten calls)', sample: cBare!, toBare: 1 });
  rows.push({
    scenario: '(c) 10 calls: 5 RUCs + detalle',
    system: 'gateway',
    sample: c!,
    toBare: c!.rps / cBare!.rps,
    target: `exactly 10 upstream calls/op, >= ${C_BEFORE_ISSUE_22} of the bare proxy's same ten calls`,
    met: c!.upstreamPerOp === 10 && c!.rps >= C_BEFORE_ISSUE_22 * cBare!.rps,
  });

  log('(d) licencia, (e) validarComprobantes with 100 receipts');
  const [d] = await compare([s.gateway], s.sandbox, { body: BODIES.licencia, connections: 50 });
  rows.push({ scenario: '(d) licencia', system: 'gateway', sample: d! });
  const [e] = await compare([s.gateway], s.sandbox, { body: BODIES.batch, connections: 50 });
  rows.push({ scenario: '(e) 100 receipts', system: 'gateway', sample: e! });
  await s.stop();

  // (f) on a fresh gateway, so that its peak RSS is its own.
  s = await systems(node, 0);
  await load(s.gateway, s.sandbox, { body: BODIES.contribuyente, connections: 50 }, WARMUP_SECONDS);
  log('(f) 1,000 connections held open');
  const f = summarize([await load(s.gateway, s.sandbox, { body: BODIES.contribuyente, connections: 1000 }, SECONDS)]);
  const rssF = peakRssMb(s.gateway.pid);
  rows.push({
    scenario: '(f) 1,000 connections',
    system: 'gateway',
    sample: f,
    peakRssMb: rssF,
    target: 'peak RSS <= 300 MB, no failed request',
    met: rssF <= 300 && f.failed === 0,
  });
  await s.stop();

  // Phase 2: the upstream answers in 20 ms; a fixed, unsaturating rate: the latency each adds.
  s = await systems(node, 20);
  log('(b) one contribuyente at 300 req/s, upstream 20 ms');
  const [b, bBare] = await compare([s.gateway, s.bare], s.sandbox, { body: BODIES.contribuyente, connections: 50, rate: 300 });
  rows.push({ scenario: '(b) 300 req/s, upstream 20 ms', system: 'bare proxy', sample: bBare!, toBare: 1 });
  rows.push({
    scenario: '(b) 300 req/s, upstream 20 ms',
    system: 'gateway',
    sample: b!,
    toBare: b!.rps / bBare!.rps,
    target: 'p50 <= bare + 1 ms, p99 <= bare + 5 ms',
    met: b!.p50 <= bBare!.p50 + 1 && b!.p99 <= bBare!.p99 + 5,
  });
  // (h), as many callers (16 tokens) and as one BFF holding the company's one token.
  for (const tokens of [16, 1]) {
    log(`(h) upstream 20 ms, 200 connections, ${tokens} token(s)`);
    await threeWay(
      rows,
      `(h) upstream 20 ms, 200 conn, ${tokens} token${tokens > 1 ? 's' : ''}`,
      s,
      { body: BODIES.contribuyente, connections: 200, tokens },
      '>= 0.8 of Mercurius, nothing failed',
      (g, m) => g.rps >= 0.8 * m.rps && g.failed === 0,
    );
  }
  await s.stop();

  // Phase 3: the upstream answers in 250 ms, as the real one can, with a thousand callers waiting.
  for (const tokens of [16, 1]) {
    s = await systems(node, 250);
    log(`(i) upstream 250 ms, 1,000 connections, ${tokens} token(s)`);
    await threeWay(
      rows,
      `(i) upstream 250 ms, 1,000 conn, ${tokens} token${tokens > 1 ? 's' : ''}`,
      s,
      { body: BODIES.contribuyente, connections: 1000, tokens },
      '>= 0.9 of Mercurius, p50 <= Mercurius + 10 ms, nothing failed, peak RSS <= 300 MB',
      (g, m, rss) => g.rps >= 0.9 * m.rps && g.p50 <= m.p50 + 10 && g.failed === 0 && rss <= 300,
    );
    await s.stop();
  }

  // Phase 4: (a) with the cache on, every operation a hit.
  s = await systems(node, 0, 'on');
  log('(g) (a) with the cache on');
  const [g] = await compare([s.gateway], s.sandbox, { body: BODIES.contribuyente, connections: 50 });
  rows.push({ scenario: '(g) (a) with cache hits', system: 'gateway', sample: g!, peakRssMb: peakRssMb(s.gateway.pid) });
  await s.stop();
  return rows;
}

function table(rows: Row[]): string {
  const ratio = (r: number | undefined) => (r === undefined ? '' : r.toFixed(2));
  return [
    '| scenario | system | good req/s | ÷ bare proxy | ÷ Mercurius | ÷ before | p50 ms | p99 ms | CPU µs/op | upstream calls/op | failed | peak RSS MB | target | met |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
    ...rows.map(
      (r) =>
        `| ${[
          r.scenario,
          r.system,
          r.sample.rps,
          ratio(r.toBare),
          ratio(r.toMercurius),
          r.toBefore === undefined ? '' : `${r.toBefore.toFixed(2)} (this build ÷ before)`,
          r.sample.p50,
          r.sample.p99,
          r.sample.cpuUs,
          r.sample.upstreamPerOp,
          r.sample.failed,
          r.peakRssMb === undefined ? '' : r.peakRssMb.toFixed(0),
          r.target ?? '',
          r.met === undefined ? '' : r.met ? 'met' : 'MISSED',
        ].join(' | ')} |`,
    ),
  ].join('\n');
}

async function main() {
  const started = Date.now();
  const log = (m: string) => process.stderr.write(`${m}\n`);
  const runs: { node: string; rows: Row[] }[] = [];
  for (const node of nodes()) {
    log(`== ${node.label}`);
    runs.push({ node: node.label, rows: await runOn(node.bin, log) });
  }
  const report = {
    at: new Date().toISOString(),
    seconds: SECONDS,
    reps: REPS,
    durationSeconds: Math.round((Date.now() - started) / 1000),
    runs,
  };
  mkdirSync('bench/results', { recursive: true });
  const json = JSON.stringify(report, null, 2);
  writeFileSync(`bench/results/${report.at.replace(/[:.]/g, '-')}.json`, json);
  // A comparison with the build before is not the bench's latest result.
  if (!ONLY_BEFORE) writeFileSync('bench/results/latest.json', json);
  for (const run of runs) console.log(`\n### ${run.node}\n\n${table(run.rows)}`);
  console.log(`\n${report.durationSeconds} s, ${REPS} runs of ${SECONDS} s each, medians shown; bench/results/latest.json`);
}

process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
main().catch(async (error: unknown) => {
  console.error(error);
  await stopAll();
  process.exit(1);
});
