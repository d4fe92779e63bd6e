import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SearchRefused } from '../../src/padron/search.js';
import { SearchThreads } from '../../src/padron/search-threads.js';

/** The threads' own promises (test/padron/search.test.ts runs every search on them): refusals stay typed, a failure fails its search alone. */
const threads = new SearchThreads(2);
const dir = mkdtempSync(join(tmpdir(), 'threads-'));
afterAll(async () => {
  await threads.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('search threads', () => {
  it('answer a search the search refuses with SearchRefused, and one over an index that is not there with an error, then go on', async () => {
    const asked = { dir, name: 'v-none', filter: {}, first: 10, after: undefined };
    await expect(threads.run({ ...asked, texto: 'ab' })).rejects.toBeInstanceOf(SearchRefused);
    const missing = await threads.run({ ...asked, texto: 'comercial' }).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(Error);
    expect(missing).not.toBeInstanceOf(SearchRefused);
    await expect(threads.run({ ...asked, texto: 'ab' })).rejects.toBeInstanceOf(SearchRefused);
  });

  it('refuse searches once closed', async () => {
    const closed = new SearchThreads(1);
    await closed.close();
    await expect(closed.run({ dir, name: 'v-none', texto: 'comercial', filter: {}, first: 10, after: undefined })).rejects.toThrow(
      /closed/,
    );
  });
});
