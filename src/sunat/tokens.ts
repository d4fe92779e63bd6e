import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { SunatCalls } from './calls.js';
import { SunatCredentialsRejected, SunatUnavailable } from './errors.js';

/** A company's SUNAT API credentials: the secret is never logged, kept in clear under a key, or echoed. */
export interface SunatCredentials {
  /** The company asking: the credentials' owner, the RUC in SUNAT's path. */
  rucEmpresa: string;
  clientId: string;
  clientSecret: string;
}

/** The scope SUNAT's receipt validation is granted under. */
const SCOPE = 'https://api.sunat.gob.pe/v1/contribuyente/contribuyentes';
/** A token is asked again this long before it expires. */
const EARLY_MS = 60_000;

interface Held {
  token: Promise<string>;
  expiresAt: number;
}

/**
 * SUNAT's access tokens, one per credentials: asked once (callers at the same moment share the
 * call), kept until a minute before `expires_in` runs out, dropped when SUNAT answers 401 with it.
 * Kept under a hash of the credentials, never the secret itself.
 */
export class SunatTokens {
  /** Made-up credentials are refused and dropped at once; the kept ones are bounded all the same. */
  readonly #held = new LRUCache<string, Held>({ max: 10_000 });

  constructor(readonly calls: SunatCalls) {}

  /** A token for these credentials; SunatCredentialsRejected when SUNAT refuses them. */
  get(credentials: SunatCredentials): Promise<string> {
    const key = keyOf(credentials);
    const held = this.#held.get(key);
    if (held && held.expiresAt > Date.now()) return held.token;
    const asked: Held = { token: this.#ask(credentials), expiresAt: Number.POSITIVE_INFINITY };
    this.#held.set(key, asked);
    asked.token.then(
      () => undefined,
      () => this.#held.get(key) === asked && this.#held.delete(key),
    );
    return asked.token;
  }

  /** Drops `token` (SUNAT answered 401 with it): the next `get` asks a new one, once for all who were using it. */
  async drop(credentials: SunatCredentials, token: string): Promise<void> {
    const key = keyOf(credentials);
    const held = this.#held.get(key);
    if (held && (await held.token.catch(() => undefined)) === token && this.#held.get(key) === held) this.#held.delete(key);
  }

  async #ask(credentials: SunatCredentials): Promise<string> {
    const { clientId, clientSecret } = credentials;
    const form = new URLSearchParams({ grant_type: 'client_credentials', scope: SCOPE, client_id: clientId, client_secret: clientSecret });
    const answer = await this.calls.call(clientId, 'auth', `/v1/clientesextranet/${encodeURIComponent(clientId)}/oauth2/token/`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    const body = (typeof answer.body === 'object' && answer.body !== null ? answer.body : {}) as Record<string, unknown>;
    if (answer.status >= 400) throw new SunatCredentialsRejected(textOf(body['error_description']) ?? textOf(body['error']));
    const token = textOf(body['access_token']);
    const expiresIn = Number(body['expires_in']);
    if (answer.status !== 200 || !token) throw new SunatUnavailable(`the token service answered HTTP ${answer.status} without a token`);
    // Kept until a minute before it runs out; a token that says nothing of its life is kept five minutes.
    const lifeMs = Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn * 1000 : 5 * EARLY_MS;
    const held = this.#held.get(keyOf(credentials));
    if (held) held.expiresAt = Date.now() + Math.max(0, lifeMs - EARLY_MS);
    return token;
  }
}

/** The credentials' key: a hash, so that no map holds a secret in clear. */
const keyOf = (c: SunatCredentials) => createHash('sha256').update(c.clientId).update('\0').update(c.clientSecret).digest('base64url');

const textOf = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim().slice(0, 300) : undefined);
