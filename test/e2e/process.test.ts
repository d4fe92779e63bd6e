import { execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { slowLookup } from '../helpers.js';
import { spawnTracked } from '../processes.js';

/**
 * The gateway started as people start it (npm start, npm run start:prod, node as a unit file's
 * ExecStart runs it), each in a process group of its own, and stopped as a terminal, systemd or
 * npm stop it: a signal to the whole group, or to npm alone. One process each, however started.
 */

interface Started {
  child: ChildProcess;
  url: string;
  output: () => string;
  /** What it wrote to stdout, and to stderr, apart. */
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

const ROOT = new URL('../../', import.meta.url).pathname;

/** Starts `command` in a new process group and waits until it is ready. */
async function start(command: string, args: string[], env: Record<string, string>): Promise<Started> {
  const child = spawnTracked(command, args, {
    cwd: ROOT,
    env: { PATH: process.env['PATH'], HOME: process.env['HOME'], PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => ((output += c), (stdout += c)));
  child.stderr!.on('data', (c: Buffer) => ((output += c), (stderr += c)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  while (!output.includes('GraphQL gateway ready')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`did not start: ${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const url = /GraphQL gateway ready: (http:\/\/[^"\s]+)/.exec(output)![1]!;
  return { child, url, output: () => output, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Every process of the group whose leader is `pid`. */
function groupOf(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '-g', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((p) => p > 0);
  } catch {
    return [];
  }
}

/** The command line of `pid` ('' once it is gone). */
function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

let sandbox: Sandbox;
const started: Started[] = [];
beforeAll(async () => {
  sandbox = await startSandbox({ slowMs: 1500 });
});
afterAll(async () => {
  for (const s of started) for (const pid of groupOf(s.child.pid!)) if (alive(pid)) process.kill(pid, 'SIGKILL');
  await sandbox.close();
});

const SHUTDOWN_TIMEOUT_MS = 5000;
const MODES: { name: string; command: string; args: string[]; env: Record<string, string>; build?: boolean }[] = [
  { name: 'npm start', command: 'npm', args: ['start', '--silent'], env: {} },
  { name: 'node with WORKERS=1', command: process.execPath, args: ['--import', 'tsx', 'src/main.ts'], env: { WORKERS: '1' } },
  { name: 'npm run start:prod', command: 'npm', args: ['run', 'start:prod', '--silent'], env: {}, build: true },
];
const STOPS: { name: string; send: (s: Started) => void; modes: string[] }[] = [
  { name: 'Ctrl-C (SIGINT to the process group)', send: (s) => process.kill(-s.child.pid!, 'SIGINT'), modes: MODES.map((m) => m.name) },
  {
    name: "systemd's stop (SIGTERM to every process)",
    send: (s) => process.kill(-s.child.pid!, 'SIGTERM'),
    modes: [MODES[0]!.name, MODES[2]!.name],
  },
  { name: 'SIGTERM to npm alone, forwarded', send: (s) => s.child.kill('SIGTERM'), modes: [MODES[0]!.name, MODES[2]!.name] },
];

// Each test starts and stops its own gateway: they run side by side, so that the file takes one stop's time, not seven.
describe.concurrent('stopping: the operation in flight completes, the exit is 0, and no process is left', () => {
  beforeAll(() => {
    // start:prod runs the build: made afresh once for this file, so that it is this code's.
    if (MODES.some((m) => m.build)) execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT });
  }, 120_000);

  for (const stop of STOPS) {
    for (const mode of MODES.filter((m) => stop.modes.includes(m.name))) {
      it(`${mode.name}, on ${stop.name}`, async () => {
        const s = await start(mode.command, mode.args, {
          UPSTREAM_URL: sandbox.url,
          SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
          ...mode.env,
        });
        started.push(s);
        // One gateway process (beside npm when npm started it, and tsx's esbuild service): no workers.
        const pids = groupOf(s.child.pid!);
        const gateways = pids.filter((pid) => /src\/main\.(ts|js)/.test(commandOf(pid)));
        expect(gateways).toHaveLength(1);
        const inFlight = slowLookup(s.url);
        await new Promise((r) => setTimeout(r, 400));
        const signalled = Date.now();
        stop.send(s);
        const res = await inFlight;
        expect(res.status).toBe(200);
        expect(await res.json()).toMatchObject({ data: { contribuyente: { nombreORazonSocial: 'EMPRESA DE RESPUESTA LENTA S.A.C.' } } });
        expect(await s.exited).toBe(0);
        expect(Date.now() - signalled).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
        await new Promise((r) => setTimeout(r, 200));
        expect(pids.filter(alive)).toEqual([]);
        // Every line it printed is JSON, from the first (no Node warning before it) to the last.
        const lines = s.stdout().split('\n').filter(Boolean);
        expect(lines.length).toBeGreaterThan(2);
        for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
        // Nothing on stderr but what npm itself may say of this machine's npm configuration.
        expect(
          s
            .stderr()
            .split('\n')
            .filter((l) => l && !l.startsWith('npm warn')),
        ).toEqual([]);
      }, 60_000);
    }
  }
});

describe.concurrent('a port already in use', () => {
  let taken: Server;
  let port: number;
  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    port = (taken.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => taken.close(() => r())));

  it('is one clear line naming the port and a non-zero exit', async () => {
    const child = spawnTracked(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'], PORT: String(port), HOST: '127.0.0.1', UPSTREAM_URL: sandbox.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (c: Buffer) => (output += c));
    child.stderr!.on('data', (c: Buffer) => (output += c));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).not.toBe(0);
    const lines = output.split('\n').filter((l) => l.includes(String(port)) && /in use/.test(l));
    expect(lines).toEqual([
      `Cannot listen on 127.0.0.1:${port}: port ${port} is already in use (EADDRINUSE). Stop the other process, or set PORT to a free port.`,
    ]);
    expect(output).not.toMatch(/at .*\(node:/); // no stack trace
  }, 30_000);

  it('is the last thing said with the built-in sandbox too: no banner or warning after it', async () => {
    const child = spawnTracked(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'], PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (c: Buffer) => (output += c));
    child.stderr!.on('data', (c: Buffer) => (output += c));
    expect(await new Promise<number | null>((resolve) => child.once('exit', resolve))).not.toBe(0);
    expect(output.trim().split('\n').at(-1)).toContain(`port ${port} is already in use`);
    expect(output).not.toContain('SANDBOX');
  }, 30_000);
});
