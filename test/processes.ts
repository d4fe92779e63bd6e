import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Every process a test starts goes through `spawnTracked`: in a process group of its own (so a
 * signal reaches all of it, as from a terminal or systemd), marked in its environment with this
 * run's id (so its children carry the mark too), and stopped by `stopTracked` after each file,
 * whatever its hooks did. test/global-setup.ts fails the run if a marked process outlives it.
 */
export const CHILD_MARK = 'GATEWAY_TEST_CHILD';
/** Set once per run by test/global-setup.ts; test files inherit it. */
export const RUN_ID = 'GATEWAY_TEST_RUN_ID';

const tracked = new Set<ChildProcess>();

export function spawnTracked(command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
  // The run's own TMPDIR (scripts/test.sh) goes along, so whatever a child leaves there goes with the run.
  const env = {
    ...(options.env ?? process.env),
    [CHILD_MARK]: process.env[RUN_ID] ?? 'unmarked',
    ...(process.env['TMPDIR'] ? { TMPDIR: process.env['TMPDIR'] } : {}),
  };
  const child = spawn(command, args, { ...options, env, detached: true });
  tracked.add(child);
  child.once('exit', () => {
    // The leader is gone; its group may not be (npm's child): stopTracked still sweeps it.
    if (!groupAlive(child.pid!)) tracked.delete(child);
  });
  return child;
}

/** Sends `signal` to the whole group `child` leads. */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // Already gone.
  }
}

/** Resolves true once every process of the group `child` leads has exited, false after `withinMs`. */
export async function groupGone(child: ChildProcess, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (groupAlive(child.pid!)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Kills (SIGKILL) every group this file started that is still there, and waits until each is gone. */
export async function stopTracked(): Promise<void> {
  const groups = [...tracked].map((c) => c.pid!).filter(groupAlive);
  tracked.clear();
  for (const pgid of groups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
  const deadline = Date.now() + 5000;
  while (groups.some(groupAlive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

/** Processes on this machine that carry `mark` in their environment (Linux /proc), with their command lines. */
export function markedProcesses(mark: string): { pid: number; command: string }[] {
  const found: { pid: number; command: string }[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
      if (!environ.includes(mark)) continue;
      const command = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim();
      // A zombie has no command line left: already dead, only waiting for its parent.
      if (command) found.push({ pid, command });
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
}
