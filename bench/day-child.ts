/**
 * Makes the pending day's messages of a change store under the heap its parent gives it
 * (`--max-old-space-size`), for bench/day.ts: a subscription of a few RUCs, one of WATCHED RUCs,
 * one of a RUC that did not change. Prints what it took: the time, the messages, and its peak RSS.
 *
 *   node --max-old-space-size=256 dist/bench/day-child.js <store dir> <marker dir> <watched>
 */
import { readFileSync } from 'node:fs';
import pino from 'pino';
import { ChangeStore } from '../src/padron/change-store.js';
import { publishPending } from '../src/webhooks/publish.js';
import type { Mensaje, SubscriptionStore, Suscripcion } from '../src/webhooks/types.js';
import { rucAtDay } from './day-rucs.js';

const [root, markers, watchedText] = process.argv.slice(2) as [string, string, string];
const watched = Number(watchedText);
const sub = (id: string) => ({ id, owner: 'bench', url: `https://x.example/${id}` }) as unknown as Suscripcion;
const subs = new Map<string, string[]>([
  ['few', [rucAtDay(3), rucAtDay(5), rucAtDay(7)].sort()],
  ['many', Array.from({ length: watched }, (_, i) => rucAtDay(i * 11)).sort()],
  ['none', ['20999999991']],
]);
const store = {
  ids: async () => [...subs.keys()],
  get: async (id: string) => (subs.has(id) ? sub(id) : undefined),
  rucsOf: async (id: string) => subs.get(id) ?? [],
} as unknown as SubscriptionStore;
const made: Record<string, number> = {};
const outbox = {
  add: async (messages: Mensaje[]) => {
    for (const m of messages) made[m.sub] = (made[m.sub] ?? 0) + 1;
  },
  close: async () => {},
};
const changes = await ChangeStore.open(root);
const started = performance.now();
await publishPending(changes, { store, outbox }, markers, pino({ level: 'silent' }));
const durationMs = Math.round(performance.now() - started);
await changes.close();
const peakRssMb = Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 1024);
process.stdout.write(JSON.stringify({ durationMs, made, peakRssMb }));
