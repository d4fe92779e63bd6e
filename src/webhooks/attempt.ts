import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';
import type { PrivateNetworks } from '../config/webhooks.js';
import { guardedLookup, mayReach, plainAllowed } from './address.js';
import type { Mensaje } from './types.js';

/** What a receiver answers is read to this many bytes at most, and never shown. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** One attempt's outcome: delivered (2xx), gone (410: the subscription ends), or to retry; `status` null when none came. */
export interface Attempt {
  outcome: 'delivered' | 'gone' | 'retry';
  status: number | null;
  /** Why it failed, in words that hold no URL, secret or answer. */
  error?: string;
}

/** The sockets deliveries go through: names resolved as each connects, and refused there when the rule forbids where they lead. */
export class Deliverer {
  readonly #agents: Record<'tls' | 'plain', Agent>;

  constructor(
    private readonly rule: PrivateNetworks,
    private readonly timeoutMs: number,
  ) {
    const agent = (plain: boolean) =>
      new Agent({
        connect: { lookup: guardedLookup(rule, plain), timeout: timeoutMs },
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        connections: 64,
      });
    this.#agents = { tls: agent(false), plain: agent(true) };
  }

  /** POSTs the message to the URL, signed with the secret (Standard Webhooks), at most WEBHOOK_TIMEOUT_MS; never follows a redirect. */
  async send(message: Mensaje, url: string, secret: string): Promise<Attempt> {
    try {
      return await this.#send(message, new URL(url), secret);
    } catch (error) {
      return { outcome: 'retry', status: null, error: reasonOf(error) };
    }
  }

  async #send(message: Mensaje, target: URL, secret: string): Promise<Attempt> {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'registro-peru-gateway-webhooks' };
    // Credentials in the URL go as Basic auth: undici refuses a URL that carries them.
    if (target.username || target.password) {
      headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64')}`;
      target.username = target.password = '';
    }
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    // A socket to an IP skips the lookup: the rule is checked here instead.
    if (isIP(literal) && (!mayReach(literal, this.rule) || (target.protocol === 'http:' && !plainAllowed([literal], this.rule)))) {
      return { outcome: 'retry', status: null, error: 'address denied by WEBHOOK_PRIVATE_NETWORKS' };
    }
    const at = new Date();
    headers['webhook-id'] = message.id;
    headers['webhook-timestamp'] = String(Math.floor(at.getTime() / 1000));
    headers['webhook-signature'] = new Webhook(secret).sign(message.id, at, message.body);
    const answer = await request(target, {
      method: 'POST',
      headers,
      body: message.body,
      dispatcher: this.#agents[target.protocol === 'http:' ? 'plain' : 'tls'],
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    await answer.body.dump({ limit: MAX_ANSWER_BYTES }).catch(() => undefined);
    const status = answer.statusCode;
    return { outcome: status >= 200 && status < 300 ? 'delivered' : status === 410 ? 'gone' : 'retry', status };
  }

  close(): Promise<void> {
    return Promise.all([this.#agents.tls.close(), this.#agents.plain.close()]).then(() => undefined);
  }
}

/** A failure named by its kind only: an error's message may carry the URL. */
function reasonOf(error: unknown): string {
  const e = error as { name?: string; code?: string; cause?: { code?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timed out';
  return e.code ?? e.cause?.code ?? e.name ?? 'failed';
}
