import type { Logger } from 'pino';
import type { WebhookSettings } from '../config/webhooks.js';
import type { Metrics } from '../telemetry/metrics.js';
import type { Deliverer } from './attempt.js';
import type { Entrega, Mensaje, SubscriptionStore } from './types.js';

/** A message's attempts so far: how many, and when the first was made (its retries end WEBHOOK_RETRY_FOR_MS after). */
export interface Tries {
  intentos: number;
  primerMs?: number | undefined;
}

/** An attempt's end for the queue: settled (delivered, failed for good, or its subscription gone), or to try again at `retryAt`. */
export type Settled = { settled: true } | { settled: false; retryAt: number; tries: Tries };

/** When to try again after `tries` failed attempts: each wait doubles the one before, none past WEBHOOK_RETRY_FOR_MS from the first. */
export function nextTry(
  tries: Required<Tries>,
  nowMs: number,
  settings: Pick<WebhookSettings, 'retryFirstMs' | 'retryForMs'>,
): number | undefined {
  const at = nowMs + settings.retryFirstMs * 2 ** (tries.intentos - 1);
  return at - tries.primerMs <= settings.retryForMs ? at : undefined;
}

/** Attempts under way at once on each instance, whichever queue holds them: a slow receiver holds one of them, never the others' turn. */
export const AT_ONCE = 32;

/** What an attempt needs besides the subscription's store. */
export interface DeliveryDeps {
  deliverer: Deliverer;
  settings: WebhookSettings;
  logger: Logger;
  metrics?: Metrics | undefined;
}

/** One attempt at a message, whichever queue holds it: its outcome noted on the subscription (`ultimaEntrega`), never its answer. */
export async function deliver(message: Mensaje, tries: Tries, deps: DeliveryDeps & { store: SubscriptionStore }): Promise<Settled> {
  const { store, deliverer, settings, logger, metrics } = deps;
  const sub = await store.get(message.sub);
  // A subscription deleted meanwhile takes its messages with it.
  if (!sub) return { settled: true };
  const now = Date.now();
  const done = { intentos: tries.intentos + 1, primerMs: tries.primerMs ?? now };
  const result = await deliverer.send(message, sub.url, sub.secret);
  const retryAt = result.outcome === 'retry' ? nextTry(done, Date.now(), settings) : undefined;
  const estado: Entrega['estado'] = result.outcome === 'delivered' ? 'ENTREGADA' : retryAt ? 'REINTENTANDO' : 'FALLIDA';
  const entrega: Entrega = {
    webhookId: message.id,
    fecha: message.fecha,
    estado,
    intentos: done.intentos,
    codigoHttp: result.status,
    en: new Date(now).toISOString(),
  };
  const said = {
    webhook: {
      suscripcion: sub.id,
      webhookId: message.id,
      fecha: message.fecha,
      estado,
      intentos: done.intentos,
      codigoHttp: result.status,
      error: result.error,
    },
  };
  metrics?.webhookAttempt(
    result.outcome === 'gone' ? 'gone' : estado === 'ENTREGADA' ? 'delivered' : estado === 'FALLIDA' ? 'failed' : 'retry',
  );
  if (result.outcome === 'gone') {
    await store.remove(sub.id, sub.owner);
    logger.info(said, 'webhook: the receiver answered 410; its subscription is deleted');
    return { settled: true };
  }
  await store.record(sub.id, entrega);
  if (estado === 'ENTREGADA') logger.info(said, 'webhook: delivered');
  else logger.warn(said, estado === 'FALLIDA' ? 'webhook: failed for good' : 'webhook: attempt failed; retried later');
  return retryAt ? { settled: false, retryAt, tries: done } : { settled: true };
}
