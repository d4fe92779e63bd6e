import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { open, readFile, rm, stat, utimes } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

/** The file saying which gateway uses a PADRON_DIR: two on one directory delete each other's indexes. */
const LOCK = 'lock';
/** The holder touches its lock this often; one untouched for STALE_MS is a holder gone (another host's, say). */
const TOUCH_EVERY_MS = 30_000;
const STALE_MS = 120_000;

interface Holder {
  host: string;
  pid: number;
  id: string;
}

/** Directories this process holds: a lock naming our own pid but none of these is a previous life's, left by a kill. */
const held = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the holder written in a lock is gone: its process is not running on this host, or it has stopped touching the lock. */
function gone(holder: Holder | undefined, touchedMs: number, dir: string): boolean {
  if (Date.now() - touchedMs > STALE_MS) return true;
  if (!holder) return false;
  if (holder.host !== hostname()) return false;
  return holder.pid === process.pid ? !held.has(dir) : !alive(holder.pid);
}

/** A PADRON_DIR held by this gateway, until `release`. */
export class DirLock {
  readonly #timer: NodeJS.Timeout;

  private constructor(
    readonly dir: string,
    readonly id: string,
  ) {
    held.add(dir);
    this.#timer = setInterval(() => void utimes(join(dir, LOCK), new Date(), new Date()).catch(() => undefined), TOUCH_EVERY_MS);
    this.#timer.unref();
  }

  /** The lock of `dir`, taken; or who holds it (`host` and `pid`), when a gateway that is still there does. */
  static async take(dir: string): Promise<DirLock | { heldBy: string }> {
    const path = join(dir, LOCK);
    const id = randomBytes(8).toString('hex');
    const mine: Holder = { host: hostname(), pid: process.pid, id };
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const handle = await open(path, 'wx');
        await handle.writeFile(JSON.stringify(mine));
        await handle.close();
        return new DirLock(dir, id);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const { holder, touchedMs } = await readLock(path);
      if (!gone(holder, touchedMs, dir)) return { heldBy: holder ? `pid ${holder.pid} on ${holder.host}` : 'another gateway' };
      await rm(path, { force: true });
    }
    return { heldBy: 'another gateway, starting at the same moment' };
  }

  /** Gives the directory up, if the lock is still this one's. */
  release(): void {
    clearInterval(this.#timer);
    held.delete(this.dir);
    const path = join(this.dir, LOCK);
    try {
      if ((JSON.parse(readFileSync(path, 'utf8')) as Holder).id === this.id) rmSync(path, { force: true });
    } catch {
      // Gone already, taken over as stale, or on a directory since made read-only: nothing to remove.
    }
  }
}

async function readLock(path: string): Promise<{ holder: Holder | undefined; touchedMs: number }> {
  const touchedMs = await stat(path).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  try {
    return { holder: JSON.parse(await readFile(path, 'utf8')) as Holder, touchedMs };
  } catch {
    // Half-written (a holder starting this very moment) or unreadable: a lock of nobody's only once it is old.
    return { holder: undefined, touchedMs };
  }
}
