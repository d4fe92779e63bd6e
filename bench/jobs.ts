/**
 * `npm run bench:jobs`: a background validation of 10,000 receipts through a SUNAT double that
 * answers each in 100–300 ms, at the default pace (5 calls at once per company), with the
 * gateway run as production runs it. Figures: the job's throughput beside the pace's limit
 * (5 ÷ the double's mean delay), the gateway's peak RSS, another caller's `contribuyente` p99
 * before and during the job, and a second job's gateway killed (SIGKILL) halfway and started
 * again on the same disk: how soon it goes on, and how many receipts were asked twice.
 *
 *   BENCH_JOB_RECEIPTS=2000 npm run bench:jobs   (a smaller job, for a quick look)
 *
 * The expected summary is worked out from the lines written, apart from the gateway; every
 * process is stopped by its PID, also when a step fails.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { peakRssMb, start, stopAll, type Proc } from './procs.js';
import { BENCH_SUNAT, estadoOf } from './sunat-double.js';

const RECEIPTS = Number(process.env['BENCH_JOB_RECEIPTS'] ?? 10_000);
/** One line in twenty is a receipt repeated (a purchase register exported twice over a week, say). */
const REPEATED_EVERY = 20;
const CONCURRENCY = 5;
const TOKEN = 'bench-0';
const ISSUERS = ['20100123453', '20501234568', '20602345671', '20484567892', '20136789016'];

interface Stats {
  calls: number;
  distinct: number;
  repeated: number;
  peak: number;
  meanDelayMs: number;
  firstAt: number;
  lastAt: number;
}
type Summary = Record<'aceptados' | 'anulados' | 'autorizados' | 'noAutorizados' | 'noExisten' | 'conError', number>;

/**
 * `count` lines of a month, in shuffled order: issuers skewed (the first holds half), dates in either form, CRLF and
 * blank lines, one in REPEATED_EVERY a repeat; with the summary the double's rule gives them, counted here.
 */
function month(count: number, seed: number): { texto: string; distinct: number; expected: Summary } {
  let state = seed;
  const random = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const lines: { line: string; n: number }[] = [];
  for (let i = 0; lines.length < count; i++) {
    if (i > 0 && lines.length % REPEATED_EVERY === 0) {
      lines.push(lines[Math.floor(random() * lines.length)]!);
      continue;
    }
    const n = 1000 + i;
    const issuer = random() < 0.5 ? ISSUERS[0]! : ISSUERS[1 + Math.floor(random() * 4)]!;
    const day = String(1 + Math.floor(random() * 30)).padStart(2, '0');
    const fecha = random() < 0.5 ? `2026-10-${day}` : `${day}/10/2026`;
    lines.push({ line: `${issuer}|01|F${String(1 + (n % 9)).padStart(3, '0')}|${n}|${fecha}|${(10 + random() * 5000).toFixed(2)}`, n });
  }
  for (let i = lines.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [lines[i], lines[j]] = [lines[j]!, lines[i]!];
  }
  const expected: Summary = { aceptados: 0, anulados: 0, autorizados: 0, noAutorizados: 0, noExisten: 0, conError: 0 };
  const names: Record<string, keyof Summary> = { '0': 'noExisten', '1': 'aceptados', '2': 'anulados', '4': 'noAutorizados' };
  for (const { n } of lines) expected[names[estadoOf(n)]!]++;
  const texto = lines.map((l, i) => (i % 500 === 0 ? `\r\n${l.line}` : l.line)).join('\r\n');
  return { texto, distinct: new Set(lines.map((l) => l.line)).size, expected };
}

async function gql<T>(gateway: Proc, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: T; errors?: unknown[] };
  if (!body.data || body.errors) throw new Error(`gateway: ${JSON.stringify(body).slice(0, 500)}`);
  return body.data;
}

const CREATE = 'mutation($t: String!) { crearValidacionMasiva(texto: $t) { id total } }';
const JOB =
  '{ validacionesMasivas { id estado total validados resumen { aceptados anulados autorizados noAutorizados noExisten conError } } }';
type Job = { id: string; estado: string; total: number; validados: number; resumen: Summary };

async function jobOf(gateway: Proc, id: string): Promise<Job> {
  const { validacionesMasivas } = await gql<{ validacionesMasivas: Job[] }>(gateway, JOB);
  return validacionesMasivas.find((j) => j.id === id)!;
}

async function stats(sunat: Proc): Promise<Stats> {
  return (await (await fetch(`${sunat.url}/__stats`)).json()) as Stats;
}

/** Another caller's `contribuyente` times, from a process of its own, over `ms`. */
async function otherCaller(gateway: Proc, ms: number): Promise<{ p50: number; p99: number; max: number; count: number }> {
  const other = fork(new URL('./lookup-caller.js', import.meta.url), [gateway.url, '20100123453', TOKEN]);
  const times = await new Promise<number[]>((resolve, reject) => {
    other.once('message', (m) => resolve(m as number[]));
    other.once('error', reject);
    setTimeout(() => other.send('stop'), ms);
  });
  const sorted = times.sort((a, b) => a - b);
  const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 10) / 10;
  return { p50: at(0.5), p99: at(0.99), max: at(1), count: sorted.length };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'bench-jobs-'));
  try {
    const node = process.execPath;
    const sandbox = await start('sandbox', node, 'dist/bench/sandbox.js', { LATENCY_MS: '50' });
    const sunat = await start('sunat', node, 'dist/bench/sunat-double.js', {});
    const env = {
      NODE_ENV: 'production',
      UPSTREAM_URL: sandbox.url,
      PORT: '0',
      HOST: '127.0.0.1',
      SUNAT_API_URL: sunat.url,
      SUNAT_AUTH_URL: sunat.url,
      SUNAT_API_CLIENT_ID: BENCH_SUNAT.clientId,
      SUNAT_API_CLIENT_SECRET: BENCH_SUNAT.clientSecret,
      SUNAT_API_RUC: BENCH_SUNAT.rucEmpresa,
      TIPO_DE_CAMBIO: 'servicio',
      MAX_BODY_BYTES: String(8 * 1024 * 1024),
      PADRON_DIR: join(dir, 'one'),
    };
    // 1. A month of RECEIPTS: throughput, memory, and another caller meanwhile.
    const gateway = await start('gateway', node, 'dist/src/main.js', env);
    const before = await otherCaller(gateway, 10_000);
    const { texto, distinct, expected } = month(RECEIPTS, 7);
    const started = performance.now();
    const { crearValidacionMasiva: created } = await gql<{ crearValidacionMasiva: { id: string; total: number } }>(gateway, CREATE, {
      t: texto,
    });
    const answeredInMs = performance.now() - started;
    const during = otherCaller(gateway, 30_000);
    let job = await jobOf(gateway, created.id);
    while (job.estado !== 'TERMINADA') {
      await new Promise((r) => setTimeout(r, 500));
      job = await jobOf(gateway, created.id);
      if (job.estado === 'FALLIDA' || job.estado === 'CANCELADA') throw new Error(`job ${job.estado}`);
    }
    const meanwhile = await during;
    const rssMb = Math.round(peakRssMb(gateway.pid));
    const double = await stats(sunat);
    const seconds = (double.lastAt - double.firstAt) / 1000;
    const throughput = double.calls / seconds;
    const limit = CONCURRENCY / (double.meanDelayMs / 1000);
    const correct = job.total === RECEIPTS && job.validados === RECEIPTS && JSON.stringify(job.resumen) === JSON.stringify(expected);
    if (!correct) throw new Error(`summary ${JSON.stringify(job)} is not ${JSON.stringify(expected)}`);
    if (double.distinct !== distinct || double.repeated !== 0) throw new Error(`asked ${JSON.stringify(double)}, ${distinct} distinct`);
    await gateway.stop();

    // 2. A second month, its gateway killed halfway and started again on the same disk.
    await fetch(`${sunat.url}/__reset`, { method: 'POST' });
    const second = month(Math.min(RECEIPTS, 2_000), 11);
    const env2 = { ...env, PADRON_DIR: join(dir, 'two') };
    let killed = await start('gateway-2', node, 'dist/src/main.js', env2);
    const { crearValidacionMasiva: id2 } = await gql<{ crearValidacionMasiva: { id: string } }>(killed, CREATE, { t: second.texto });
    while ((await stats(sunat)).calls < second.distinct / 2) await new Promise((r) => setTimeout(r, 50));
    const atKill = await stats(sunat);
    process.kill(killed.pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    await killed.stop().catch(() => undefined);
    const restartedAt = Date.now();
    killed = await start('gateway-2', node, 'dist/src/main.js', env2);
    const readyInMs = Date.now() - restartedAt;
    let resumedInMs: number | undefined;
    for (;;) {
      const now = await stats(sunat);
      if (resumedInMs === undefined && now.calls > atKill.calls) resumedInMs = Date.now() - restartedAt;
      const j = await jobOf(killed, id2.id);
      if (j.estado === 'TERMINADA') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const after = await stats(sunat);
    await killed.stop();

    const result = {
      at: new Date().toISOString(),
      node: process.version,
      receipts: RECEIPTS,
      distinct,
      createAnsweredMs: Math.round(answeredInMs),
      seconds: Math.round(seconds * 10) / 10,
      throughputPerS: Math.round(throughput * 10) / 10,
      paceLimitPerS: Math.round(limit * 10) / 10,
      ofLimit: Math.round((throughput / limit) * 1000) / 10,
      peakInFlight: double.peak,
      meanDelayMs: Math.round(double.meanDelayMs),
      gatewayPeakRssMb: rssMb,
      contribuyenteBefore: before,
      contribuyenteDuring: meanwhile,
      restart: {
        receipts: second.distinct,
        askedAtKill: atKill.calls,
        readyInMs,
        resumedInMs,
        askedTwice: after.repeated,
        asked: after.calls,
      },
    };
    console.log(JSON.stringify(result, null, 2));
    writeFileSync(`bench/results/jobs-${result.at.replace(/[:.]/g, '-')}.json`, `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
