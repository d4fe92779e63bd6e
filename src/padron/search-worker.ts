import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { join } from 'node:path';
import type { RootDatabase } from 'lmdb';
import { namesOf, openIndex, type Version } from './versions.js';
import { search, PadronRefused } from './search.js';
import type { SearchAsked, SearchAnswered } from './search-threads.js';

/**
 * A search thread (./search-threads.ts): the index a search names, opened here read-only once and
 * kept until another is named or the thread is told to let it go; each search run to its end.
 */
type Opened = { path: string; name: string; db: RootDatabase<string, string>; names: Version['names'] };
let open: Opened | undefined;

async function indexOf(dir: string, name: string): Promise<Opened> {
  const path = join(dir, name);
  if (open?.path === path) return open;
  await release();
  const db = await openIndex(path, true);
  return (open = { path, name, db, names: namesOf(db) });
}

async function release(): Promise<void> {
  const closing = open;
  open = undefined;
  await closing?.db.close();
}

async function answer(asked: SearchAsked): Promise<SearchAnswered> {
  try {
    const index = await indexOf(asked.dir, asked.name);
    if (!index.names) return { id: asked.id, error: 'the index has no name index' };
    const page = search({ version: index.name, db: index.db, names: index.names }, asked.texto, asked.filter, asked.first, asked.after);
    return { id: asked.id, page };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return error instanceof PadronRefused
      ? { id: asked.id, refused: error.refusal, args: { ...error.args } }
      : { id: asked.id, error: message };
  }
}

/**
 * This thread yields the cores to the event loop: a search waits a moment for a lookup or a request's parsing, never
 * the other way round. Linux keeps a nice value per thread, and setpriority takes the thread's id (/proc/thread-self
 * names it); elsewhere, or where refused, the thread runs as the process does.
 */
const SEARCH_NICE = 10;
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), SEARCH_NICE);
} catch {
  // Not Linux, or a sandbox that forbids it: searches share the cores evenly.
}

// One message at a time, in order: a search is synchronous, and an index is let go only between them.
let queue = Promise.resolve();
parentPort!.on('message', (message: SearchAsked | 'release') => {
  queue = queue.then(async () => {
    if (message === 'release') return release();
    parentPort!.postMessage(await answer(message));
  });
});
