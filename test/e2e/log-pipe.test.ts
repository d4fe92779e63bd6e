import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, postOnce } from '../helpers.js';
import { groupGone, signalGroup, spawnTracked } from '../processes.js';

/**
 * The log never stops the gateway: `npm start` piped into a reader that
 * leaves, before the gateway is up (`| head -n 3`) or after, still starts, serves, and on a
 * SIGTERM to the process group (as a terminal's Ctrl-C or systemd sends it) ends every process.
 */
const QUERY = 'query($ruc: String!) { contribuyente(ruc: $ruc) { ruc estado } }';
/** SHUTDOWN_TIMEOUT_MS's default, and time for npm behind the gateway. */
const STOP_WITHIN_MS = 10_000 + 5_000;

/** Asks the gateway on `port` until it answers a lookup, or `withinMs` passes. */
async function answerWhenUp(port: number, withinMs: number) {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      return await postOnce(`http://127.0.0.1:${port}/graphql`, QUERY, { ruc: '20100123453' });
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Lookups for a while, each on its own connection, so that the gateway logs many lines. */
async function lookupsFor(port: number, count: number) {
  const answers = await Promise.all(
    Array.from({ length: count }, () => postOnce(`http://127.0.0.1:${port}/graphql`, QUERY, { ruc: '20100123453' })),
  );
  return answers.filter((a) => a.status === 200 && (a.body.data?.['contribuyente'] as { ruc?: string } | undefined)?.ruc === '20100123453')
    .length;
}

/** The gateway's processes (npm and the gateway) still in the group `pgid` leads. */
function gatewayProcesses(pgid: number): string[] {
  const found: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) !== pgid) continue;
      const command = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ');
      if (/main\.ts|npm/.test(command)) found.push(command);
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

describe.concurrent('npm start with its output read by a reader that leaves', () => {
  it('before it is up (npm start 2>&1 | head -n 3): starts, serves, and ends every process on SIGTERM to the group', async () => {
    const port = await freePort();
    const child = spawnTracked('sh', ['-c', 'npm start 2>&1 | head -n 3 >/dev/null'], {
      env: { PATH: process.env['PATH'], PORT: String(port), HOST: '127.0.0.1' },
      stdio: 'ignore',
    });
    const answer = await answerWhenUp(port, 45_000);
    expect(answer.body.data).toEqual({ contribuyente: { ruc: '20100123453', estado: 'ACTIVO' } });
    // It keeps serving while its log lines have nowhere to go.
    expect(await lookupsFor(port, 200)).toBe(200);
    signalGroup(child, 'SIGTERM');
    expect(await groupGone(child, STOP_WITHIN_MS)).toBe(true);
  }, 90_000);

  it('after it is up: keeps serving, and ends every process on SIGTERM to the group', async () => {
    const port = await freePort();
    // The reader takes lines until the gateway says it is ready, closes the pipe, says so in a file, and stays.
    const gone = join(mkdtempSync(join(tmpdir(), 'reader-')), 'gone');
    const reader = `(grep -m 1 "gateway ready" >/dev/null; exec 0<&-; touch "${gone}"; sleep 60)`;
    const child = spawnTracked('sh', ['-c', `npm start 2>&1 | ${reader}`], {
      env: { PATH: process.env['PATH'], PORT: String(port), HOST: '127.0.0.1' },
      stdio: 'ignore',
    });
    await answerWhenUp(port, 45_000);
    // Every line from the moment the reader is gone meets a closed pipe.
    for (let i = 0; i < 100 && !existsSync(gone); i++) await new Promise((r) => setTimeout(r, 100));
    rmSync(dirname(gone), { recursive: true, force: true });
    expect(await lookupsFor(port, 300)).toBe(300);
    // The lines that met the closed pipe were dropped, and counted (the writes fail as they are flushed: a moment on a busy machine).
    const dropped = async () =>
      Number(/^gateway_log_lines_dropped_total (\d+)/m.exec(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text())?.[1]);
    for (let i = 0; i < 50 && (await dropped()) === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await dropped()).toBeGreaterThan(0);
    signalGroup(child, 'SIGTERM');
    expect(await groupGone(child, STOP_WITHIN_MS)).toBe(true);
  }, 90_000);

  it('into a reader that stays but never reads (a full pipe), ignoring SIGTERM: keeps serving, and every gateway process ends on SIGTERM', async () => {
    const port = await freePort();
    const child = spawnTracked('sh', ['-c', "npm start 2>&1 | (trap '' TERM; sleep 120)"], {
      env: { PATH: process.env['PATH'], PORT: String(port), HOST: '127.0.0.1' },
      stdio: 'ignore',
    });
    await answerWhenUp(port, 45_000);
    // Far more than a pipe holds (64 KB): the rest waits in memory, bounded, or is dropped.
    expect(await lookupsFor(port, 400)).toBe(400);
    expect(await lookupsFor(port, 400)).toBe(400);
    signalGroup(child, 'SIGTERM');
    const deadline = Date.now() + STOP_WITHIN_MS;
    while (gatewayProcesses(child.pid!).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(gatewayProcesses(child.pid!)).toEqual([]);
    signalGroup(child, 'SIGKILL');
  }, 90_000);
});
