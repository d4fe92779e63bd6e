import { LRUCache } from 'lru-cache';
import { createHmac, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { WebhookSettings } from '../config/webhooks.js';
import type { RedisLink } from '../data/redis.js';
import { GraphQLError } from 'graphql';
import { refusal } from '../errors.js';
import { UpstreamError } from '../upstream/errors.js';
import type { Cambio, ChangeStore, TipoCambio } from '../padron/change-store.js';
import type { Recorded } from '../padron/changes.js';
import { isValidRuc } from '../upstream/keys.js';
import { formRefusal, placeRefusal } from './address.js';
import type { Metrics } from '../telemetry/metrics.js';
import { Deliverer } from './attempt.js';
import type { DeliveryDeps } from './delivery.js';
import { LiveChanges, MAX_FEEDS } from './live.js';
import { LocalWebhooks } from './local.js';
import { publishPending } from './publish.js';
import { RedisWebhooks } from './redis.js';
import type { Outbox, SubscriptionStore, Suscripcion } from './types.js';

/** RUCs one live feed watches: each is a listener held while it is open. */
const MAX_LIVE_RUCS = 1_000;
/** The longest URL taken. */
const MAX_URL = 2048;
/** Messages that could not be made (Redis away, say) are made again after this, not at the next import a day later. */
const RETRY_PUBLISH_MS = 60_000;

export interface WebhooksOptions {
  settings: WebhookSettings;
  logger: Logger;
  /** A fleet's Redis: subscriptions and messages there. */
  link?: RedisLink | undefined;
  redis?: { url: string; cluster: boolean } | undefined;
  /** PADRON_DIR, with the register on: where this instance's marker (and, without Redis, its subscriptions) are kept. */
  dir?: string | undefined;
  /** How long a made message's id is remembered (the changes' days). */
  keepMs: number;
  metrics?: Metrics | undefined;
}

/** The register's changes told to whom watches them: signed webhooks (subscriptions) and live GraphQL subscriptions. */
/** A token proven by one lookup opens feeds for this long without another. */
const PROVEN_FOR_MS = 3_600_000;

export class Webhooks {
  readonly live = new LiveChanges();
  /** Owners whose token the service took lately: their feeds open without another lookup. */
  readonly #proven = new LRUCache<string, true>({ max: 10_000, ttl: PROVEN_FOR_MS });
  readonly #deliverer: Deliverer;
  #backend: (SubscriptionStore & Outbox) | undefined;
  #publishing: Promise<void> = Promise.resolve();
  #ownerKey: Promise<string> | undefined;
  #closed = false;

  constructor(private readonly options: WebhooksOptions) {
    this.#deliverer = new Deliverer(options.settings.privateNetworks, options.settings.timeoutMs);
    const { link, redis, keepMs } = options;
    if (link && redis) this.#backend = new RedisWebhooks(link, { ...this.#deps(), keepMs, redis });
  }

  /**
   * The register's change store, once this instance holds PADRON_DIR (`fecha` undefined), and
   * after each import that recorded changes (`fecha`): opens the local store then, and makes the
   * messages of every date not yet made, one call after another.
   */
  readonly onChanges = (changes: ChangeStore, recorded?: Recorded): Promise<void> => {
    const { dir, logger } = this.options;
    if (!dir || this.#closed) return Promise.resolve();
    this.#publishing = this.#publishing
      .then(async () => {
        this.#backend ??= await LocalWebhooks.open(dir, { ...this.#deps(), keepMs: this.options.keepMs });
        if (this.#closed) return;
        await publishPending(changes, { store: this.#backend, outbox: this.#backend, live: this.live }, dir, logger, recorded);
      })
      .catch((error: unknown) => {
        logger.warn({ err: error }, `webhooks: the changes could not be made into messages; tried again in ${RETRY_PUBLISH_MS / 1000} s`);
        if (!this.#closed) setTimeout(() => void this.onChanges(changes), RETRY_PUBLISH_MS).unref();
      });
    return this.#publishing;
  };

  #deps(): DeliveryDeps {
    const { settings, logger, metrics } = this.options;
    return { deliverer: this.#deliverer, settings, logger, metrics };
  }

  /** Where subscriptions are kept, or why there is nowhere. */
  #store(): SubscriptionStore {
    if (this.#backend) return this.#backend;
    if (!this.options.dir) throw refusal('noSubscriptionStore');
    throw refusal('subscriptionsNotOpen');
  }

  /**
   * Whose subscriptions a request's are: the signed-in subject's (its hash), or the bearer token's
   * HMAC under a key kept with the subscriptions (so CACHE or CACHE_KEY_SECRET changed orphans none).
   */
  ownerOf(caller: { subject?: string | undefined; token?: string | undefined }): Promise<string> {
    return this.#guard(async () => {
      if (caller.subject) return `s.${caller.subject}`;
      if (!caller.token) throw refusal('subscriptionsNeedToken');
      const key = await (this.#ownerKey ??= this.#store().ownerKey());
      return `t.${createHmac('sha256', key).update(caller.token).digest('base64url')}`;
    }).catch((error: unknown) => {
      this.#ownerKey = undefined;
      throw error;
    });
  }

  /** A store's failure (Redis away, a disk error) as the caller sees it: retryable, its cause only in the log. */
  async #guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof GraphQLError || error instanceof UpstreamError) throw error;
      this.options.logger.warn({ err: error }, 'webhooks: the subscriptions store failed');
      throw refusal('subscriptionStoreDown');
    }
  }

  list(owner: string): Promise<Suscripcion[]> {
    return this.#guard(async () => {
      const store = this.#store();
      const subs = await Promise.all((await store.ids(owner)).map((id) => store.get(id)));
      return subs.filter((s): s is Suscripcion => s?.owner === owner).sort((a, b) => (a.creadaEn < b.creadaEn ? -1 : 1));
    });
  }

  /** The caller's subscription `id`; another's, or none, is NOT_FOUND alike. */
  own(owner: string, id: string): Promise<Suscripcion> {
    return this.#guard(async () => {
      const sub = /^sus_[\w-]{22}$/.test(id) ? await this.#store().get(id) : undefined;
      if (sub?.owner !== owner) throw refusal('subscriptionNotFound');
      return sub;
    });
  }

  rucsOf(id: string): Promise<string[]> {
    return this.#guard(() => this.#store().rucsOf(id));
  }

  /** A new subscription; `vouch`, for a caller that holds none yet, proves with the service that the caller is one (a made-up token is none). */
  async create(
    owner: string,
    input: { url: string; rucs: readonly string[]; tipos?: readonly TipoCambio[] | null },
    vouch?: (ruc: string) => Promise<void>,
  ): Promise<{ sub: Suscripcion; secreto: string }> {
    return this.#guard(() => this.#create(owner, input, vouch));
  }

  async #create(
    owner: string,
    input: Parameters<Webhooks['create']>[1],
    vouch?: (ruc: string) => Promise<void>,
  ): Promise<{ sub: Suscripcion; secreto: string }> {
    const store = this.#store();
    const rucs = this.#checkedRucs(input.rucs);
    // Every check before the token is proven, its address's too: a refused subscription costs no query.
    const url = this.#checkedForm(input.url);
    const held = (await store.ids(owner)).length;
    this.#underLimit(held);
    await this.#checkPlace(url);
    if (held === 0) await vouch?.(rucs[0]!);
    const secreto = `whsec_${randomBytes(32).toString('base64')}`;
    const sub: Suscripcion = {
      id: `sus_${randomBytes(16).toString('base64url')}`,
      owner,
      url: input.url,
      tipos: input.tipos?.length ? [...new Set(input.tipos)] : null,
      cuantos: rucs.length,
      creadaEn: new Date().toISOString(),
      secret: secreto,
    };
    await store.put(sub, rucs);
    // Made side by side, a caller's creations may each have seen room for one: past the limit, the newest goes again.
    if ((await store.ids(owner)).length > this.options.settings.maxPerCaller) {
      await store.remove(sub.id, owner);
      this.#underLimit(Number.POSITIVE_INFINITY);
    }
    return { sub, secreto };
  }

  #underLimit(held: number): void {
    const max = this.options.settings.maxPerCaller;
    if (held >= max) throw refusal('subscriptionsPerCaller', { max });
  }

  change(
    owner: string,
    id: string,
    input: { agregar?: readonly string[] | null; quitar?: readonly string[] | null; url?: string | null },
  ): Promise<Suscripcion> {
    return this.#guard(() => this.#change(owner, id, input));
  }

  async #change(owner: string, id: string, input: Parameters<Webhooks['change']>[2]): Promise<Suscripcion> {
    const sub = await this.own(owner, id);
    if (input.url != null) await this.#checkPlace(this.#checkedForm(input.url));
    const agregar = this.#checkedRucs(input.agregar ?? [], true);
    const quitar = new Set(this.#checkedRucs(input.quitar ?? [], true));
    const changed = agregar.length > 0 || quitar.size > 0;
    const rucs = changed ? this.#checkedRucs([...(await this.rucsOf(id)).filter((r) => !quitar.has(r)), ...agregar]) : undefined;
    const next = { ...sub, url: input.url ?? sub.url, cuantos: rucs?.length ?? sub.cuantos };
    // Deleted meanwhile (by its owner, or a 410): not made again.
    if (!(await this.#store().update(next, rucs))) throw refusal('subscriptionNotFound');
    return next;
  }

  remove(owner: string, id: string): Promise<boolean> {
    return this.#guard(async () => {
      await this.own(owner, id);
      return this.#store().remove(id, owner);
    });
  }

  /**
   * The live changes of these RUCs, as this instance's imports find them: at most WEBHOOK_MAX_PER_CALLER feeds a caller,
   * MAX_FEEDS in all, and only for a caller proven (`vouch`: one lookup the service answers, for a token not yet proven).
   */
  async watch(
    owner: string,
    rucs: readonly string[],
    tipos?: readonly TipoCambio[],
    vouch?: (ruc: string) => Promise<void>,
  ): Promise<AsyncIterableIterator<Cambio>> {
    if (rucs.length > MAX_LIVE_RUCS) throw refusal('liveRucs', { max: MAX_LIVE_RUCS });
    const checked = this.#checkedRucs(rucs);
    const max = this.options.settings.maxPerCaller;
    if (this.live.feeds(owner) >= max) throw refusal('liveFeedsPerCaller', { max });
    if (this.live.feeds() >= MAX_FEEDS) throw refusal('liveFeedsFull');
    // A feed holds a place: its token is proven first, as a first subscription's is (once; a caller with a subscription is proven).
    if (vouch && !this.#proven.has(owner)) {
      const held = await this.#guard(() => this.#store().ids(owner));
      if (held.length === 0) await vouch(checked[0]!);
      this.#proven.set(owner, true);
    }
    return this.live.watch(owner, checked, tipos);
  }

  /** RUCs checked as everywhere, once each, at most WEBHOOK_MAX_RUCS (and at least one, unless `mayBeEmpty`). */
  #checkedRucs(rucs: readonly string[], mayBeEmpty = false): string[] {
    const max = this.options.settings.maxRucs;
    if (rucs.length > max) throw refusal('subscriptionRucs', { max });
    const wrong = rucs.find((r) => !isValidRuc(r));
    if (wrong !== undefined) throw refusal('notARuc', { ruc: wrong });
    // Kept sorted: the day's messages walk them in RUC order without sorting 100,000 of them again.
    const unique = [...new Set(rucs)].sort();
    if (unique.length > max) throw refusal('subscriptionRucs', { max });
    if (!unique.length && !mayBeEmpty) throw refusal('subscriptionEmpty');
    return unique;
  }

  /** The URL parsed, and refused for what it says itself (scheme, credentials, an address written in it), asking DNS nothing. */
  #checkedForm(url: string): URL {
    const parsed = url.length <= MAX_URL && URL.canParse(url) ? new URL(url) : undefined;
    const refused = parsed
      ? formRefusal(parsed, this.options.settings.privateNetworks)
      : `una URL https:// de a lo más ${MAX_URL} caracteres`;
    if (refused) throw refusal('subscriptionUrl', { why: refused });
    return parsed!;
  }

  /** Refuses a URL whose name resolves to nothing, or to an address the rule forbids (one message for both). */
  async #checkPlace(url: URL): Promise<void> {
    const refused = await placeRefusal(url, this.options.settings.privateNetworks);
    if (refused) throw refusal('subscriptionUrl', { why: refused });
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#publishing;
    await this.#backend?.close();
    await this.#deliverer.close();
  }
}

/** A URL as shown to its owner: its credentials (sent as Basic auth) masked. */
export function shownUrl(url: string): string {
  const parsed = new URL(url);
  if (!parsed.username && !parsed.password) return url;
  parsed.username = '***';
  parsed.password = '';
  return parsed.toString();
}
