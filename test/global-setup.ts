import { randomUUID } from 'node:crypto';
import { CHILD_MARK, RUN_ID, markedProcesses } from './processes.js';

/**
 * One id for this run, inherited by every test file and marked on every process they start
 * (test/processes.ts). At the end, any marked process still running fails the run: a test or
 * hook did not stop what it started. They are killed too, so that one bad run leaves nothing.
 */
export default function setup(): () => Promise<void> {
  const id = randomUUID();
  process.env[RUN_ID] = id;
  return async () => {
    // A process killed by the last file's clean-up may take a moment to be reaped.
    let left = markedProcesses(`${CHILD_MARK}=${id}`);
    for (let i = 0; i < 50 && left.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = markedProcesses(`${CHILD_MARK}=${id}`);
    }
    if (left.length === 0) return;
    for (const { pid } of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
    // vitest reports a teardown's error but keeps its exit code: this one fails the run.
    process.exitCode = 1;
    throw new Error(
      `Processes started by the tests were still running at the end of the run (now killed):\n${left.map((p) => `  ${p.pid} ${p.command}`).join('\n')}`,
    );
  };
}
