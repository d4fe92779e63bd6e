/**
 * The processes a bench run starts (sandbox, gateway, Mercurius, bare proxy), each on a chosen
 * Node binary, each stopped by its own PID; and what /proc says of them (CPU time, peak RSS).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Proc {
  name: string;
  url: string;
  pid: number;
  stop(): Promise<void>;
  /** What it has written so far (its log). */
  output(): string;
}

const running = new Set<Proc>();

/**
 * The Node flags of `npm run start:prod`, read from package.json so that the bench runs the
 * gateway exactly as production starts it.
 */
function productionNodeFlags(): string[] {
  const script = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts['start:prod'] ?? '';
  // `exec` hands npm's shell over to node, so that signals reach node itself; production is production.
  const words = script.trim().split(/\s+/);
  if (words[0] !== 'NODE_ENV=production' || words[1] !== 'exec' || words[2] !== 'node' || words.at(-1) !== 'dist/src/main.js')
    throw new Error(`start:prod is not "NODE_ENV=production exec node [flags] dist/src/main.js": ${script}`);
  return words.slice(3, -1);
}

/**
 * Starts one compiled entry point on `node` (`npm run bench` builds first: the gateway runs as
 * it runs in production, `npm run start:prod`, with its Node flags and without tsx's loader)
 * and waits for its "ready: <url>" line.
 *
 * Its output goes to a file, as a production log would, not through a pipe into this process:
 * read here, the gateway's line per operation cost the load generator's process a third of a
 * core on this 2-core machine, taken from the systems under test. The gateway still formats
 * and writes every line.
 */
export async function start(name: string, node: string, file: string, env: Record<string, string>): Promise<Proc> {
  const logFile = join(tmpdir(), `bench-${name}-${process.pid}-${Date.now()}.log`);
  const fd = openSync(logFile, 'w');
  const flags = file.endsWith('dist/src/main.js') ? productionNodeFlags() : [];
  const child: ChildProcess = spawn(node, [...flags, file], { env: { PATH: process.env['PATH'], ...env }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const url = await new Promise<string>((resolve, reject) => {
    const poll = setInterval(() => {
      const match = /ready: (http:\/\/[\d.:]+)/.exec(readFileSync(logFile, 'utf8'));
      if (match) {
        clearInterval(poll);
        resolve(match[1]!);
      }
    }, 50);
    child.once('exit', (code) => {
      clearInterval(poll);
      reject(new Error(`${name} exited ${code}: ${readFileSync(logFile, 'utf8').slice(-2000)}`));
    });
  });
  const proc: Proc = {
    name,
    url,
    pid: child.pid!,
    output: () => readFileSync(logFile, 'utf8'),
    async stop() {
      running.delete(proc);
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        process.kill(child.pid!, 'SIGTERM');
        const killer = setTimeout(() => child.exitCode === null && process.kill(child.pid!, 'SIGKILL'), 5000);
        await exited;
        clearTimeout(killer);
      }
      rmSync(logFile, { force: true });
    },
  };
  running.add(proc);
  return proc;
}

export const stopAll = async () => {
  await Promise.all([...running].map((p) => p.stop()));
};

/** Peak resident set size of a process so far, in MB (VmHWM). */
export function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

/** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** CPU time a process has used so far, user and system, in microseconds. */
export function cpuMicros(pid: number): number {
  // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / TICKS_PER_SECOND;
}
