import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PadronRefused } from '../../src/padron/search.js';
import { SearchThreads } from '../../src/padron/search-threads.js';

/** The threads' own promises (test/padron/search.test.ts runs every search on them): refusals stay typed, a failure fails its search alone. */
const threads = new SearchThreads(2);
const dir = mkdtempSync(join(tmpdir(), 'threads-'));
afterAll(async () => {
  await threads.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('search threads', () => {
  it('answer a search the search refuses with PadronRefused, and one over an index that is not there with an error, then go on', async () => {
    const asked = { dir, name: 'v-none', filter: {}, first: 10, after: undefined };
    await expect(threads.run({ ...asked, texto: 'ab' })).rejects.toBeInstanceOf(PadronRefused);
    const missing = await threads.run({ ...asked, texto: 'comercial' }).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(Error);
    expect(missing).not.toBeInstanceOf(PadronRefused);
    await expect(threads.run({ ...asked, texto: 'ab' })).rejects.toBeInstanceOf(PadronRefused);
  });

  it('run at a nice value of 10, the event loop at the process’s: a lookup never waits for a search’s core', async () => {
    // Two searches side by side start both threads: each is a task of this process with its own nice value.
    const asked = { dir, name: 'v-none', texto: 'comercial', filter: {}, first: 10, after: undefined };
    await Promise.allSettled([threads.run(asked), threads.run(asked)]);
    const nice = (tid: string) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
    const tasks = readdirSync('/proc/self/task');
    expect(nice(String(process.pid))).toBe(0);
    expect(tasks.map(nice).filter((n) => n === 10)).toHaveLength(2);
  });

  it('refuse searches once closed', async () => {
    const closed = new SearchThreads(1);
    await closed.close();
    await expect(closed.run({ dir, name: 'v-none', texto: 'comercial', filter: {}, first: 10, after: undefined })).rejects.toThrow(
      /closed/,
    );
  });
});
