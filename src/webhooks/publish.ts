import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { ChangeStore } from '../padron/change-store.js';
import type { LiveChanges } from './live.js';
import { messagesOf, watched } from './messages.js';
import type { Outbox, SubscriptionStore } from './types.js';

/** Beside the register: the last date whose changes this instance made messages of, so that a restart makes the rest. */
const MARKER = 'webhooks-published';

/**
 * Makes the messages of every date the change store holds past this instance's marker, in date
 * order, and moves the marker past each once its messages are in the outbox: a crash between
 * the two repeats that date's messages, which the outbox refuses as known. The first time there
 * is no marker: the changes already kept are no one's news, and only later ones are sent.
 */
export async function publishPending(
  changes: ChangeStore,
  to: { store: SubscriptionStore; outbox: Outbox; live?: LiveChanges | undefined },
  dir: string,
  logger: Logger,
  fresh?: string,
): Promise<void> {
  const marker = join(dir, MARKER);
  const last = await readFile(marker, 'utf8').then((s) => s.trim(), () => undefined);
  const dates = changes.dates(last ?? '');
  if (last === undefined && fresh === undefined) return void (await mark(marker, dates.at(-1) ?? ''));
  // Its changes are merged into the day's (the feed shows them), whose messages are made: they carry the day's ids.
  if (fresh !== undefined && fresh === last) logger.info({ webhooks: { fecha: fresh } }, 'webhooks: a second register of a date already sent; its changes are not sent');
  for (const fecha of last === undefined ? dates.filter((d) => d >= fresh!) : dates) {
    const byRuc = await changes.ofDate(fecha);
    if (fecha === fresh && to.live) for (const list of byRuc.values()) for (const cambio of list) to.live.publish(cambio);
    let made = 0;
    for (const id of await to.store.ids()) {
      // Each subscription's work is its own turn of the event loop: hundreds of them stall no request.
      await setImmediate();
      const sub = await to.store.get(id);
      const cambios = sub ? watched({ tipos: sub.tipos, rucs: await to.store.rucsOf(id) }, byRuc) : [];
      if (!cambios.length) continue;
      const messages = messagesOf(id, fecha, cambios);
      await to.outbox.add(messages);
      made += messages.length;
    }
    await mark(marker, fecha);
    logger.info({ webhooks: { fecha, changes: [...byRuc.values()].reduce((n, l) => n + l.length, 0), messages: made } }, 'webhooks: messages made');
  }
}

async function mark(path: string, fecha: string): Promise<void> {
  await writeFile(`${path}.tmp`, fecha);
  await rename(`${path}.tmp`, path);
}
