import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeStore, StagedChanges, type Cambio } from '../../src/padron/change-store.js';
import { messagesOf, watched } from '../../src/webhooks/messages.js';
import { rucOf, subscriptions } from './publish-subscriptions.js';

/**
 * A day of changes becomes messages in bounded memory (issue 52): read from the change store a
 * batch at a time, each subscription a slice of its RUCs at a time, never the whole day at once.
 * The day is published by a process of its own under a heap smaller than the day held whole.
 */

const DAY = '2026-11-20';
const CHANGES = 400_000;
/** The day as one Map of its changes took about 100 MB of heap here. */
const HEAP_MB = 64;

let root: string;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'publish-'));
  const store = await ChangeStore.open(root);
  const staged = new StagedChanges(join(root, 'staged'));
  for (let i = 0; i < CHANGES; i++) staged.add(rucOf(i), 'CONDICION', 'HABIDO', 'NO HABIDO');
  staged.end();
  await store.commit(DAY, staged);
  staged.discard();
  await store.close();
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a day of changes made into messages', () => {
  it(`fits a ${HEAP_MB} MB heap with ${CHANGES.toLocaleString('en')} changes, and makes the messages the whole day would`, async () => {
    const markers = mkdtempSync(join(tmpdir(), 'publish-marker-'));
    writeFileSync(join(markers, 'webhooks-published'), '2026-11-19');
    let ids: string[];
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [`--max-old-space-size=${HEAP_MB}`, '--import', 'tsx', 'test/webhooks/publish-day.ts', root, markers],
        { maxBuffer: 16 * 1024 * 1024 },
      );
      ids = JSON.parse(stdout) as string[];
    } finally {
      rmSync(markers, { recursive: true, force: true });
    }
    // The same messages, part for part, as made from the whole day at once (here, with no heap limit).
    const store = await ChangeStore.open(root);
    const day = new Map<string, Cambio[]>();
    for await (const batch of store.batchesOf(DAY)) for (const c of batch) day.set(c.ruc, [...(day.get(c.ruc) ?? []), c]);
    await store.close();
    const subs = subscriptions();
    const expected: string[] = [];
    for (const id of await subs.ids()) {
      const sub = (await subs.get(id))!;
      expected.push(...messagesOf(id, DAY, watched({ tipos: sub.tipos, rucs: await subs.rucsOf(id) }, day)).map((m) => m.id));
    }
    expect(ids).toEqual(expected);
    expect(expected).toHaveLength(1 + 50);
  }, 120_000);
});
