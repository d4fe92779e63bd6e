import { hash } from 'node:crypto';
import type { Cambio } from '../padron/change-store.js';
import type { CambioEnviado, Mensaje, Suscripcion } from './types.js';

/** Changes one message carries at most (the contract's). */
export const MAX_PER_MESSAGE = 1000;

/** A message's id: the same on every instance that makes it from the same register, so a fleet makes it once. */
const messageId = (sub: string, fecha: string, rev: number, part: number) =>
  `msg_${hash('sha256', rev ? `${sub}|${fecha}|r${rev}|${part}` : `${sub}|${fecha}|${part}`, 'base64url').slice(0, 27)}`;

/** A message's place among its subscription's: dates in order, then a date's later registers (`rev`), then parts. */
export const seqOf = (fecha: string, part: number, rev = 0) => Number(fecha.replaceAll('-', '')) * 1_000_000 + rev * 10_000 + part;

/** The changes of one date a subscription watches (its RUCs sorted, once each), in RUC and type order; `byRuc` holds that date's changes. */
export function watched(
  sub: Pick<Suscripcion, 'tipos'> & { rucs: readonly string[] },
  byRuc: ReadonlyMap<string, Cambio[]>,
): CambioEnviado[] {
  const tipos = sub.tipos ? new Set(sub.tipos) : undefined;
  // The smaller side is walked: a subscription of 100,000 RUCs against a quiet day, or a few RUCs against a busy one.
  const rucs =
    sub.rucs.length <= byRuc.size
      ? sub.rucs
      : [...byRuc.keys()].filter(
          (
            (set) => (r: string) =>
              set.has(r)
          )(new Set(sub.rucs)),
        );
  const found: CambioEnviado[] = [];
  for (const ruc of rucs) {
    for (const c of byRuc.get(ruc) ?? [])
      if (!tipos || tipos.has(c.tipo)) found.push({ ruc, tipo: c.tipo, antes: c.antes, despues: c.despues });
  }
  return found;
}

/**
 * A subscription's messages for one date (`rev`: that date's later register, 1 for the second): its
 * changes split by MAX_PER_MESSAGE, each body fixed as it will be signed.
 */
export function messagesOf(sub: string, fecha: string, cambios: CambioEnviado[], now = new Date(), rev = 0): Mensaje[] {
  const messages: Mensaje[] = [];
  for (let part = 0; part * MAX_PER_MESSAGE < cambios.length; part++)
    messages.push(messageOf(sub, fecha, cambios.slice(part * MAX_PER_MESSAGE, (part + 1) * MAX_PER_MESSAGE), part, now, rev));
  return messages;
}

/** Part `part` of a subscription's messages for one date: `slice`, its changes (at most MAX_PER_MESSAGE). */
export function messageOf(sub: string, fecha: string, slice: CambioEnviado[], part: number, now: Date, rev: number): Mensaje {
  const body = JSON.stringify({ type: 'padron.cambios', timestamp: now.toISOString(), data: { suscripcion: sub, fecha, cambios: slice } });
  return { id: messageId(sub, fecha, rev, part), sub, fecha, seq: seqOf(fecha, part, rev), body };
}

/**
 * A subscription's messages made as its changes come, in order: each part goes out once full, so a
 * subscription of many RUCs on a busy day never holds all its changes at once. The same parts, ids
 * and bodies as `messagesOf` over the whole list.
 */
export class MessageWriter {
  #pending: CambioEnviado[] = [];
  #part = 0;

  constructor(
    readonly sub: string,
    readonly fecha: string,
    readonly rev: number,
    readonly now: Date,
  ) {}

  /** The messages `cambios` (the next in order) complete. */
  push(cambios: readonly CambioEnviado[]): Mensaje[] {
    this.#pending.push(...cambios);
    const full: Mensaje[] = [];
    while (this.#pending.length >= MAX_PER_MESSAGE) full.push(this.#next(this.#pending.splice(0, MAX_PER_MESSAGE)));
    return full;
  }

  /** The last message, if changes are left. */
  end(): Mensaje[] {
    return this.#pending.length ? [this.#next(this.#pending.splice(0))] : [];
  }

  #next(slice: CambioEnviado[]): Mensaje {
    return messageOf(this.sub, this.fecha, slice, this.#part++, this.now, this.rev);
  }
}
