import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Cambio, ChangeStore } from '../padron/change-store.js';
import type { Recorded } from '../padron/changes.js';
import type { LiveChanges } from './live.js';
import { messagesOf, watched } from './messages.js';
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
    await make(fresh.fecha, fresh.again, next, to, logger);
    return void (await mark(marker, `${last}#${next}`));
  }
  for (const fecha of known ? dates : dates.filter((d) => d >= fresh!.fecha)) {
    await make(fecha, await changes.ofDate(fecha), 0, to, logger, fecha === fresh?.fecha);
    await mark(marker, fecha);
  }
}

/** One date's messages (of its `rev`th later register), each subscription's work its own turn of the event loop. */
async function make(fecha: string, byRuc: Map<string, Cambio[]>, rev: number, to: Targets, logger: Logger, live = rev > 0): Promise<void> {
  if (live && to.live) for (const list of byRuc.values()) for (const cambio of list) to.live.publish(cambio);
  let made = 0;
  for (const id of await to.store.ids()) {
    await setImmediate();
    const sub = await to.store.get(id);
    const cambios = sub ? watched({ tipos: sub.tipos, rucs: await to.store.rucsOf(id) }, byRuc) : [];
    if (!cambios.length) continue;
    const messages = messagesOf(id, fecha, cambios, new Date(), rev);
    await to.outbox.add(messages);
    made += messages.length;
  }
  logger.info(
    { webhooks: { fecha, rev, changes: [...byRuc.values()].reduce((n, l) => n + l.length, 0), messages: made } },
    'webhooks: messages made',
  );
}

async function mark(path: string, fecha: string): Promise<void> {
  await writeFile(`${path}.tmp`, fecha);
  await rename(`${path}.tmp`, path);
}
