/**
 * Publishes a change store's pending day under the heap the test gives this process
 * (`--max-old-space-size`), to the subscriptions of test/webhooks/publish.test.ts, and prints
 * the ids of the messages made, in order, as JSON.
 *
 *   node --max-old-space-size=64 --import tsx test/webhooks/publish-day.ts <store dir> <marker dir>
 */
import pino from 'pino';
import { ChangeStore } from '../../src/padron/change-store.js';
import { publishPending } from '../../src/webhooks/publish.js';
import type { Mensaje } from '../../src/webhooks/types.js';
import { subscriptions } from './publish-subscriptions.js';

const [root, markerDir] = process.argv.slice(2) as [string, string];
const store = await ChangeStore.open(root);
const ids: string[] = [];
// Only the ids kept: the outbox's own memory is not the subject.
const outbox = { add: async (m: Mensaje[]) => void ids.push(...m.map((x) => x.id)), close: async () => {} };
await publishPending(store, { store: subscriptions(), outbox }, markerDir, pino({ level: 'silent' }));
await store.close();
process.stdout.write(JSON.stringify(ids));
