import { hash } from 'node:crypto';
import type { Cambio } from '../padron/change-store.js';
import type { CambioEnviado, Mensaje, Suscripcion } from './types.js';

/** Changes one message carries at most (the contract's). */
export const MAX_PER_MESSAGE = 1000;

/** A message's id: the same on every instance that makes it from the same register, so a fleet makes it once. */
const messageId = (sub: string, fecha: string, part: number) => `msg_${hash('sha256', `${sub}|${fecha}|${part}`, 'base64url').slice(0, 27)}`;

/** A message's place among its subscription's: dates in order, then parts. */
export const seqOf = (fecha: string, part: number) => Number(fecha.replaceAll('-', '')) * 10_000 + part;

/** The changes of one date a subscription watches (its RUCs sorted, once each), in RUC and type order; `byRuc` holds that date's changes. */
export function watched(sub: Pick<Suscripcion, 'tipos'> & { rucs: readonly string[] }, byRuc: ReadonlyMap<string, Cambio[]>): CambioEnviado[] {
  const tipos = sub.tipos ? new Set(sub.tipos) : undefined;
  // The smaller side is walked: a subscription of 100,000 RUCs against a quiet day, or a few RUCs against a busy one.
  const rucs = sub.rucs.length <= byRuc.size ? sub.rucs : [...byRuc.keys()].filter(((set) => (r: string) => set.has(r))(new Set(sub.rucs)));
  const found: CambioEnviado[] = [];
  for (const ruc of rucs) {
    for (const c of byRuc.get(ruc) ?? []) if (!tipos || tipos.has(c.tipo)) found.push({ ruc, tipo: c.tipo, antes: c.antes, despues: c.despues });
  }
  return found;
}

/** A subscription's messages for one date: its changes split by MAX_PER_MESSAGE, each body fixed as it will be signed. */
export function messagesOf(sub: string, fecha: string, cambios: CambioEnviado[], now = new Date()): Mensaje[] {
  const messages: Mensaje[] = [];
  for (let part = 0; part * MAX_PER_MESSAGE < cambios.length; part++) {
    const slice = cambios.slice(part * MAX_PER_MESSAGE, (part + 1) * MAX_PER_MESSAGE);
    const body = JSON.stringify({ type: 'padron.cambios', timestamp: now.toISOString(), data: { suscripcion: sub, fecha, cambios: slice } });
    messages.push({ id: messageId(sub, fecha, part), sub, fecha, seq: seqOf(fecha, part), body });
  }
  return messages;
}
