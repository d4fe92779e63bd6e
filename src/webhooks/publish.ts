import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Cambio, ChangeStore } from '../padron/change-store.js';
import type { Recorded } from '../padron/changes.js';
import type { LiveChanges } from './live.js';
import { MessageWriter, watched } from './messages.js';
import type { Outbox, SubscriptionStore } from './types.js';

/** Beside the register: the last date (and its later register, `#n`) this instance made messages of, so that a restart makes the rest. */
const MARKER = 'webhooks-published';

type Targets = { store: SubscriptionStore; outbox: Outbox; live?: LiveChanges | undefined };

/**
 * Makes the messages of every date the change store holds past this instance's marker, in date
 * order, and moves the marker past each once its messages are in the outbox: a crash between
 * the two repeats that date's messages, which the outbox refuses as known. The first time there
 * is no marker: the changes already kept are no one's news, and only later ones are sent. A
 * second register of a date already sent (`fresh.again`) sends its own changes, as that date's
 * next messages.
 */
export async function publishPending(changes: ChangeStore, to: Targets, dir: string, logger: Logger, fresh?: Recorded): Promise<void> {
  const marker = join(dir, MARKER);
  const [last, rev = '0'] = (
    await readFile(marker, 'utf8').then(
      (s) => s.trim(),
      () => '\n',
    )
  ).split('#');
  const known = last !== '\n';
  const dates = changes.dates(known ? last : '');
  if (!known && fresh === undefined) return void (await mark(marker, dates.at(-1) ?? ''));
  if (fresh?.again && fresh.fecha === last) {
    const next = Number(rev) + 1;
    await make(fresh.fecha, inMemory(fresh.again), next, to, logger);
    return void (await mark(marker, `${last}#${next}`));
  }
  for (const fecha of known ? dates : dates.filter((d) => d >= fresh!.fecha)) {
    await make(fecha, stored(changes, fecha), 0, to, logger, fecha === fresh?.fecha);
    await mark(marker, fecha);
  }
}

/** One date's changes as the messages are made from them: all of them a batch at a time, or some RUCs' alone. */
interface DayChanges {
  batches(): AsyncIterable<readonly Cambio[]>;
  ofRucs(rucs: readonly string[]): ReadonlyMap<string, Cambio[]>;
}

/** A date's changes in the change store: never the whole day in memory (a day may hold 2,000,000). */
const stored = (changes: ChangeStore, fecha: string): DayChanges => ({
  batches: () => changes.batchesOf(fecha),
  ofRucs: (rucs) => changes.ofRucsOn(fecha, rucs),
});

/** A later register's own changes, held (at most MAX_AGAIN of them: src/padron/changes.ts). */
const inMemory = (byRuc: ReadonlyMap<string, Cambio[]>): DayChanges => ({
  batches: async function* () {
    yield [...byRuc.keys()].sort().flatMap((ruc) => byRuc.get(ruc)!);
  },
  ofRucs: (rucs) => new Map(rucs.flatMap((ruc) => (byRuc.has(ruc) ? [[ruc, byRuc.get(ruc)!] as const] : []))),
});

/** RUCs of one subscription whose changes are read at once: a slice's changes held, never a big subscription's whole day. */
const RUCS_AT_ONCE = 5_000;

/**
 * One date's messages (of its `rev`th later register): the live feeds told of every change, then each subscription's
 * changes, read a slice of its RUCs at a time, made into messages as they fill, each slice its own turn of the event loop.
 */
async function make(fecha: string, day: DayChanges, rev: number, to: Targets, logger: Logger, live = rev > 0): Promise<void> {
  let changes = 0;
  for await (const batch of day.batches()) {
    changes += batch.length;
    if (live && to.live) for (const cambio of batch) to.live.publish(cambio);
  }
  let made = 0;
  const now = new Date();
  for (const id of await to.store.ids()) {
    await setImmediate();
    const sub = await to.store.get(id);
    if (!sub) continue;
    const rucs = [...new Set(await to.store.rucsOf(id))].sort();
    const writer = new MessageWriter(id, fecha, rev, now);
    const add = async (byRuc: ReadonlyMap<string, Cambio[]>, of: readonly string[]) => {
      const messages = writer.push(watched({ tipos: sub.tipos, rucs: of }, byRuc));
      if (messages.length) await to.outbox.add(messages);
      made += messages.length;
      await setImmediate();
    };
    // The smaller side is walked: a few RUCs' own changes on a busy day, or a quiet day's changes against many RUCs.
    if (rucs.length <= changes) {
      for (let from = 0; from < rucs.length; from += RUCS_AT_ONCE) {
        const slice = rucs.slice(from, from + RUCS_AT_ONCE);
        await add(day.ofRucs(slice), slice);
      }
    } else {
      const watching = new Set(rucs);
      for await (const batch of day.batches()) {
        const picked = new Map<string, Cambio[]>();
        for (const c of batch) if (watching.has(c.ruc)) picked.set(c.ruc, [...(picked.get(c.ruc) ?? []), c]);
        await add(picked, [...picked.keys()]);
      }
    }
    const last = writer.end();
    if (last.length) await to.outbox.add(last);
    made += last.length;
  }
  logger.info({ webhooks: { fecha, rev, changes, messages: made } }, 'webhooks: messages made');
}

async function mark(path: string, fecha: string): Promise<void> {
  await writeFile(`${path}.tmp`, fecha);
  await rename(`${path}.tmp`, path);
}
