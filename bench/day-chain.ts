/**
 * `npm run bench:day-chain`: SUNAT's worst day end to end, in a gateway as the Dockerfile and the
 * Kubernetes manifest run it (`dist/src/main.js`, `NODE_OPTIONS=--max-old-space-size=256`): a
 * register of 1.5 M rows imported, then a next register in which every row's condición changed
 * (1.5 M changes, under the 2 M cap) imported, compared and recorded, its changes told to two
 * subscriptions (a signed receiver on loopback, checked with standardwebhooks), and the gateway
 * stopped and started again, which must neither die nor tell the day again. Where the machine lets
 * it make a memory cgroup (v1, as here), the gateway runs in one of the manifest's 512 MiB, which
 * the kernel enforces as Kubernetes does (page cache counted, and reclaimed before anything is
 * killed). Figures: each step's time, the gateway's peak RSS (its own anonymous pages, and its
 * file pages: the register's mapped index), the cgroup's peak use and its OOM kills. What the
 * receiver must get is worked out here from the lines written, apart from the code.
 *
 *   BENCH_CHAIN_LINES=300001 npm run bench:day-chain   (a smaller register)
 *   BENCH_CHAIN_LINES=2100001 npm run bench:day-chain  (a day past the cap: refused, logged, nothing told)
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { lineAt, rucAt, writeRegister } from './padron-register.js';
import { start, stopAll, type Proc } from './procs.js';
import { MAX_CHANGES } from '../src/padron/change-store.js';
import { SANDBOX_TOKEN } from '../src/sandbox/data.js';

const LINES = Number(process.env['BENCH_CHAIN_LINES'] ?? 1_500_001);
const ROWS = LINES - 1;
const PAST_CAP = ROWS > MAX_CHANGES;
const HEAP_MB = 256;
const LIMIT_MB = 512;
/** The big subscription's RUCs (a request body of about 140 KB, under MAX_BODY_BYTES). */
const WATCHED = Array.from({ length: 10_000 }, (_, k) => Math.floor((k * ROWS) / 10_000));
const FEW = [0, Math.floor(ROWS / 2), ROWS - 1];

/** What a row's condición is in the first register, read from its line as written. */
const condicionOf = (i: number) => lineAt(i, ROWS).split('|')[3]!;
/** And in the next, as bench/padron-register.ts flips it: HABIDO turns NO HABIDO, anything else HABIDO. */
const flip = (condicion: string) => (condicion === 'HABIDO' ? 'NO HABIDO' : 'HABIDO');

/** A memory cgroup (v1) limited to LIMIT_MB, when this machine lets one be made; undefined otherwise. */
function memoryCgroup() {
  const dir = `/sys/fs/cgroup/memory/bench-day-chain-${process.pid}`;
  try {
    if (!existsSync('/sys/fs/cgroup/memory/cgroup.procs')) return undefined;
    mkdirSync(dir);
    writeFileSync(join(dir, 'memory.limit_in_bytes'), String(LIMIT_MB * 2 ** 20));
    // No swap to spill into, as a container has none.
    if (existsSync(join(dir, 'memory.memsw.limit_in_bytes')))
      writeFileSync(join(dir, 'memory.memsw.limit_in_bytes'), String(LIMIT_MB * 2 ** 20));
  } catch {
    return undefined;
  }
  const read = (file: string) => readFileSync(join(dir, file), 'utf8');
  return {
    add: (pid: number) => writeFileSync(join(dir, 'cgroup.procs'), String(pid)),
    peakMb: () => Math.round(Number(read('memory.max_usage_in_bytes')) / 2 ** 20),
    oomKills: () => Number(/oom_kill (\d+)/.exec(read('memory.oom_control'))?.[1] ?? 0),
    remove: () => rmdirSync(dir),
  };
}

const cgroup = memoryCgroup();
const root = mkdtempSync(join(tmpdir(), 'bench-day-chain-'));
const servers: Server[] = [];
const serve = async (handler: Parameters<typeof createServer>[1]) => {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};
const seconds = (since: number) => Math.round((performance.now() - since) / 100) / 10;
const status = (pid: number, field: 'VmRSS' | 'RssAnon') =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

try {
  let t = performance.now();
  const first = new Date(Date.now() - 2 * 86_400_000);
  const next = new Date(Date.now() - 86_400_000);
  await writeRegister(join(root, 'day1'), LINES, first, 'ruc', 1);
  await writeRegister(join(root, 'day2'), LINES, next, 'ruc', 'all');
  console.log(`two registers of ${ROWS.toLocaleString('en')} rows written in ${seconds(t)} s`);

  // The mirror serves the first register, then the next one, each with its own date.
  let day: { dir: string; at: Date } = { dir: 'day1', at: first };
  const mirror = await serve((req, res) => {
    try {
      const zip = readFileSync(join(root, day.dir, (req.url ?? '/').slice(1)));
      res.writeHead(200, { 'content-length': zip.length, 'last-modified': day.at.toUTCString() }).end(zip);
    } catch {
      res.writeHead(404).end();
    }
  });
  // The receiver verifies every signature; it keeps each message once, by its id.
  const secrets = new Map<string, string>();
  const messages = new Map<string, { suscripcion: string; cambios: { ruc: string; tipo: string; antes: string; despues: string }[] }>();
  let deliveries = 0;
  const receiver = await serve((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      deliveries++;
      const body = Buffer.concat(chunks).toString('utf8');
      const name = (req.url ?? '').slice(1);
      const payload = new Webhook(secrets.get(name)!).verify(body, {
        'webhook-id': String(req.headers['webhook-id']),
        'webhook-timestamp': String(req.headers['webhook-timestamp']),
        'webhook-signature': String(req.headers['webhook-signature']),
      }) as { data: { suscripcion: string; cambios: { ruc: string; tipo: string; antes: string; despues: string }[] } };
      messages.set(String(req.headers['webhook-id']), { suscripcion: name, cambios: payload.data.cambios });
      res.writeHead(200).end();
    });
  });
  const { startSandbox } = await import('../src/sandbox/server.js');
  const sandbox = await startSandbox();

  const env = {
    NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}`,
    PORT: '0',
    HOST: '127.0.0.1',
    UPSTREAM_URL: sandbox.url,
    PADRON: `${mirror}/`,
    PADRON_DIR: join(root, 'padron'),
    PADRON_REFRESH_MS: '2000',
    WEBHOOK_PRIVATE_NETWORKS: 'allow',
  };
  let peakMb = 0;
  let peakAnonMb = 0;
  const watch = (gateway: Proc) => {
    cgroup?.add(gateway.pid);
    return setInterval(() => {
      peakMb = Math.max(peakMb, status(gateway.pid, 'VmRSS'));
      peakAnonMb = Math.max(peakAnonMb, status(gateway.pid, 'RssAnon'));
    }, 100);
  };
  const health = async (gateway: Proc) =>
    ((await (await fetch(`${gateway.url}/health`)).json()) as { padron: { rows: number; date: string | null } }).padron;
  const until = async (what: string, check: () => Promise<boolean> | boolean, withinMs: number) => {
    for (const deadline = Date.now() + withinMs; !(await check()); await new Promise((r) => setTimeout(r, 200)))
      if (Date.now() > deadline) throw new Error(`never: ${what}`);
  };

  t = performance.now();
  let gateway = await start('gateway', process.execPath, 'dist/src/main.js', env);
  let sampling = watch(gateway);
  await until('the first register imported', async () => (await health(gateway)).rows === ROWS, 600_000);
  const firstDate = (await health(gateway)).date;
  console.log(`first register imported in ${seconds(t)} s, peak RSS ${Math.round(peakMb)} MB`);

  const gql = async (query: string, variables: Record<string, unknown>) => {
    const res = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SANDBOX_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    return (await res.json()) as { data?: { crearSuscripcion: { suscripcion: { id: string }; secreto: string } }; errors?: unknown };
  };
  for (const [name, rows] of [
    ['many', WATCHED],
    ['few', FEW],
  ] as const) {
    const made = await gql(
      'mutation($url: String!, $rucs: [String!]!) { crearSuscripcion(url: $url, rucs: $rucs) { suscripcion { id } secreto } }',
      {
        url: `${receiver}/${name}`,
        rucs: rows.map((i) => rucAt(i, ROWS)),
      },
    );
    if (!made.data) throw new Error(`crearSuscripcion: ${JSON.stringify(made.errors)}`);
    secrets.set(name, made.data.crearSuscripcion.secreto);
  }

  // The next register: compared, recorded, told.
  t = performance.now();
  peakMb = 0;
  peakAnonMb = 0;
  day = { dir: 'day2', at: next };
  const expected = PAST_CAP ? 0 : Math.ceil(WATCHED.length / 1000) + 1;
  await until('the next register imported', async () => (await health(gateway)).date !== firstDate, 600_000);
  const imported = seconds(t);
  if (!PAST_CAP) await until(`${expected} messages received`, () => messages.size >= expected, 600_000);
  const told = seconds(t);
  const peakNext = { rssMb: Math.round(peakMb), anonMb: Math.round(peakAnonMb) };
  console.log(
    `next register imported in ${imported} s, its changes told in ${told} s, peak RSS ${peakNext.rssMb} MB (${peakNext.anonMb} anonymous)`,
  );
  const capLogged = gateway.output().includes(`more than ${MAX_CHANGES} changes`);

  // What the receiver got, against what was written: every watched RUC once, its condición flipped.
  const got = new Map<string, string>();
  for (const { suscripcion, cambios } of messages.values())
    for (const c of cambios) got.set(`${suscripcion} ${c.ruc} ${c.tipo} ${c.antes} ${c.despues}`, '');
  const want = [...WATCHED.map((i) => ['many', i] as const), ...FEW.map((i) => ['few', i] as const)].map(
    ([name, i]) => `${name} ${rucAt(i, ROWS)} CONDICION ${condicionOf(i)} ${flip(condicionOf(i))}`,
  );
  const missing = PAST_CAP ? [] : want.filter((key) => !got.has(key));
  if (missing.length > 0 || (PAST_CAP ? got.size !== 0 : got.size !== want.length))
    throw new Error(
      `the receiver got ${got.size} changes, ${missing.length} of those expected missing (${missing.slice(0, 3).join('; ')})`,
    );

  // Stopped and started again: it comes up, stays up, and tells the day no more.
  clearInterval(sampling);
  await gateway.stop();
  t = performance.now();
  peakMb = 0;
  peakAnonMb = 0;
  const ids = messages.size;
  gateway = await start('gateway-again', process.execPath, 'dist/src/main.js', env);
  sampling = watch(gateway);
  await until('the register in use again', async () => (await health(gateway)).rows === ROWS, 120_000);
  const readyS = seconds(t);
  await new Promise((r) => setTimeout(r, 20_000));
  await health(gateway);
  const restart = { readyS, peakRssMb: Math.round(peakMb), peakAnonMb: Math.round(peakAnonMb), newMessages: messages.size - ids };
  clearInterval(sampling);
  if (restart.newMessages !== 0) throw new Error(`the restarted gateway told ${restart.newMessages} messages again under new ids`);
  console.log(`restarted: up in ${restart.readyS} s and 20 s more, peak RSS ${restart.peakRssMb} MB, no message again`);
  await gateway.stop();
  await sandbox.close();

  const result = {
    at: new Date().toISOString(),
    node: process.version,
    rows: ROWS,
    heapMb: HEAP_MB,
    pastCap: PAST_CAP,
    capLogged,
    next: { importedS: imported, toldS: told, peakRssMb: peakNext.rssMb, peakAnonMb: peakNext.anonMb, messages: messages.size, deliveries },
    restart,
    cgroup: cgroup ? { limitMb: LIMIT_MB, peakMb: cgroup.peakMb(), oomKills: cgroup.oomKills() } : 'none could be made here',
    // The gateway's own memory within the limit: what the kernel cannot take back (its mapped file pages it can).
    withinLimit: Math.max(peakNext.anonMb, restart.peakAnonMb) < LIMIT_MB && (!cgroup || cgroup.oomKills() === 0),
  };
  console.log(JSON.stringify(result, null, 2));
  writeFileSync(`bench/results/day-chain-${result.at.replace(/[:.]/g, '-')}.json`, `${JSON.stringify(result, null, 2)}\n`);
  if (PAST_CAP && !capLogged) throw new Error('a day past the cap was not logged');
  if (!result.withinLimit) throw new Error(`over ${LIMIT_MB} MB: ${JSON.stringify(result)}`);
} finally {
  await stopAll();
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
  rmSync(root, { recursive: true, force: true });
  cgroup?.remove();
}
