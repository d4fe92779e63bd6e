import type { Cambio, TipoCambio } from '../padron/change-store.js';

export type EstadoEntrega = 'ENTREGADA' | 'REINTENTANDO' | 'FALLIDA';

/** A subscription's last delivery attempt, as `ultimaEntrega` shows it. */
export interface Entrega {
  webhookId: string;
  /** The message's register date. */
  fecha: string;
  estado: EstadoEntrega;
  intentos: number;
  /** The receiver's status, or null when none came (a time-out, a refused connection). */
  codigoHttp: number | null;
  /** ISO 8601 time of the attempt. */
  en: string;
}

/** A subscription as kept: its owner and secret never leave the gateway but in the signature (the secret, once, at creation). */
export interface Suscripcion {
  id: string;
  /** The caller's key: the token's keyed hash, or the signed-in subject's hash; never the token. */
  owner: string;
  /** The receiver's URL as given, credentials included (sent as Basic auth, never shown). */
  url: string;
  tipos: TipoCambio[] | null;
  /** How many RUCs it watches: the list itself is kept apart (up to WEBHOOK_MAX_RUCS), read only where needed. */
  cuantos: number;
  creadaEn: string;
  /** whsec_ and the key's base64. */
  secret: string;
  ultimaEntrega?: Entrega | undefined;
}

/** A change as a message carries it. */
export type CambioEnviado = Pick<Cambio, 'ruc' | 'tipo' | 'antes' | 'despues'>;

/** One message: a subscription's changes of one register date, at most MAX_PER_MESSAGE of them. */
export interface Mensaje {
  /** The webhook-id, the same on every attempt and on every instance that makes it. */
  id: string;
  sub: string;
  fecha: string;
  /** The message's place among the subscription's: its date, then its part of that date. */
  seq: number;
  /** The body, as signed: fixed at creation so that every retry sends the same bytes. */
  body: string;
}

/** Where subscriptions are kept: Redis (a fleet's) or PADRON_DIR (one instance's). */
export interface SubscriptionStore {
  ids(owner?: string): Promise<string[]>;
  get(id: string): Promise<Suscripcion | undefined>;
  rucsOf(id: string): Promise<string[]>;
  /** Creates one, with its RUCs. */
  put(sub: Suscripcion, rucs: readonly string[]): Promise<void>;
  /** Replaces one that still exists (false when it does not); its RUCs too when given. */
  update(sub: Suscripcion, rucs?: readonly string[]): Promise<boolean>;
  /** The key callers' tokens are hashed with: random, made once, kept with the subscriptions. */
  ownerKey(): Promise<string>;
  remove(id: string, owner: string): Promise<boolean>;
  /** Notes an attempt's outcome on the subscription, if it still exists. */
  record(id: string, entrega: Entrega): Promise<void>;
}

/** Where messages wait for delivery, and who delivers them. */
export interface Outbox {
  /** Adds messages not yet known (one already made, on this instance or another, is not made again). */
  add(messages: Mensaje[]): Promise<void>;
  close(): Promise<void>;
}
