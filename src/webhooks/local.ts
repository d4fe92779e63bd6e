import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { RootDatabase } from 'lmdb';
import { AT_ONCE, deliver, type DeliveryDeps, type Tries } from './delivery.js';
import type { Entrega, Mensaje, Outbox, SubscriptionStore, Suscripcion } from './types.js';

/** How often the outbox looks for messages come due. */
const TICK_MS = 250;
/** Subscriptions a tick looks at, at most: the places are shared among those. */
const SCANNED_A_TICK = 10_000;

interface Pending {
  message: Mensaje;
  tries: Tries;
  /** Epoch ms of its next attempt. */
  dueMs: number;
}

const subKey = (id: string) => `s/${id}`;
const rucsKey = (id: string) => `r/${id}`;
const entregaKey = (id: string) => `e/${id}`;
const ownerKey = (owner: string, id: string) => `o/${owner}/${id}`;
const pendingKey = (sub: string, seq: number) => `m/${sub}/${String(seq).padStart(14, '0')}`;
const knownKey = (id: string) => `k/${id}`;

/**
 * One instance's subscriptions and messages (no REDIS_URL), in an LMDB environment under
 * PADRON_DIR (`webhooks`), written through to disk: a restart loses none. A subscription's
 * messages go one at a time in their order; different subscriptions' go side by side.
 */
export class LocalWebhooks implements SubscriptionStore, Outbox {
  readonly #busy = new Set<string>();
  /** Attempts under way by owner. */
  readonly #owners = new Map<string, number>();
  #turn = 0;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  private constructor(
    private readonly db: RootDatabase,
    private readonly deps: DeliveryDeps & { keepMs: number },
  ) {}

  static async open(dir: string, deps: LocalWebhooks['deps']): Promise<LocalWebhooks> {
    const { open } = await import('lmdb');
    const local = new LocalWebhooks(open({ path: join(dir, 'webhooks'), encoding: 'json', compression: false }), deps);
    await local.#forget(Date.now() - deps.keepMs);
    local.#schedule();
    return local;
  }

  /** Forgets the ids of messages made before `before`: a register that old makes no messages any more. */
  async #forget(before: number): Promise<void> {
    await this.db.transaction(() => {
      for (const { key, value } of this.db.getRange({ start: 'k/', end: 'k/~' })) if ((value as number) < before) void this.db.remove(key);
    });
  }

  async ownerKey(): Promise<string> {
    await this.db.ifNoExists('key', () => void this.db.put('key', randomBytes(32).toString('base64')));
    return this.db.get('key') as string;
  }

  async ids(owner?: string): Promise<string[]> {
    const prefix = owner === undefined ? 's/' : `o/${owner}/`;
    return [...this.db.getKeys({ start: prefix, end: `${prefix}~` })].map((k) => String(k).slice(prefix.length));
  }

  async get(id: string): Promise<Suscripcion | undefined> {
    const sub = this.db.get(subKey(id)) as Suscripcion | undefined;
    return sub && { ...sub, ultimaEntrega: this.db.get(entregaKey(id)) as Suscripcion['ultimaEntrega'] };
  }

  async rucsOf(id: string): Promise<string[]> {
    return (this.db.get(rucsKey(id)) as string[] | undefined) ?? [];
  }

  async put(sub: Suscripcion, rucs: readonly string[]): Promise<void> {
    const { ultimaEntrega: _, ...kept } = sub;
    await this.db.transaction(() => {
      void this.db.put(subKey(sub.id), kept);
      void this.db.put(rucsKey(sub.id), rucs);
      void this.db.put(ownerKey(sub.owner, sub.id), 1);
    });
  }

  async update(sub: Suscripcion, rucs?: readonly string[]): Promise<boolean> {
    const { ultimaEntrega: _, ...kept } = sub;
    return this.db.transaction(() => {
      if (this.db.get(subKey(sub.id)) === undefined) return false;
      void this.db.put(subKey(sub.id), kept);
      if (rucs) void this.db.put(rucsKey(sub.id), rucs);
      return true;
    });
  }

  async remove(id: string, owner: string): Promise<boolean> {
    const sub = await this.get(id);
    if (!sub || sub.owner !== owner) return false;
    await this.db.transaction(() => {
      void this.db.remove(subKey(id));
      void this.db.remove(rucsKey(id));
      void this.db.remove(entregaKey(id));
      void this.db.remove(ownerKey(owner, id));
      for (const key of this.db.getKeys({ start: `m/${id}/`, end: `m/${id}/~` })) void this.db.remove(key);
    });
    return true;
  }

  async record(id: string, entrega: Entrega): Promise<void> {
    await this.db.transaction(() => {
      if (this.db.get(subKey(id)) !== undefined) void this.db.put(entregaKey(id), entrega);
    });
  }

  async add(messages: Mensaje[]): Promise<void> {
    const now = Date.now();
    await this.db.transaction(() => {
      for (const message of messages) {
        if (this.db.get(knownKey(message.id)) !== undefined || this.db.get(subKey(message.sub)) === undefined) continue;
        void this.db.put(knownKey(message.id), now);
        void this.db.put(pendingKey(message.sub, message.seq), { message, tries: { intentos: 0 }, dueMs: now } satisfies Pending);
      }
    });
    this.#tick();
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => (this.#tick(), this.#schedule()), TICK_MS);
    this.#timer.unref();
  }

  /**
   * Starts the first message of each subscription that has come due, while attempts are free: shared between owners in
   * turn, none past its share of the places, first attempts before retries. A caller's hanging receivers hold its own
   * share, never the others' turn.
   */
  #tick(): void {
    if (this.#closed || this.#busy.size >= AT_ONCE) return;
    const now = Date.now();
    const due = new Map<string, { key: string; sub: string; pending: Pending }[]>();
    let from = 'm/';
    for (let seen = 0; seen < SCANNED_A_TICK; seen++) {
      const [first] = [...this.db.getRange({ start: from, end: 'm/~', limit: 1 })];
      if (!first) break;
      const key = String(first.key);
      const sub = key.slice(2, key.indexOf('/', 2));
      // The next subscription's messages start past every key of this one's.
      from = `m/${sub}0`;
      const pending = first.value as Pending;
      if (this.#busy.has(sub) || pending.dueMs > now) continue;
      const owner = (this.db.get(subKey(sub)) as Suscripcion | undefined)?.owner ?? sub;
      due.set(owner, [...(due.get(owner) ?? []), { key, sub, pending }]);
    }
    for (const list of due.values()) list.sort((a, b) => Number(a.pending.tries.intentos > 0) - Number(b.pending.tries.intentos > 0));
    // Owners holding fewest places go first, then those with a first attempt waiting, in a turn that moves on each tick:
    // a place a hanging attempt frees goes to a caller that has none.
    const owners = [...due.keys()].sort();
    const turn = this.#turn++ % Math.max(1, owners.length);
    const held = (owner: string) => this.#owners.get(owner) ?? 0;
    const retry = (owner: string) => Number(due.get(owner)![0]!.pending.tries.intentos > 0);
    const ordered = [...owners.slice(turn), ...owners.slice(0, turn)].sort((a, b) => held(a) - held(b) || retry(a) - retry(b));
    const share = Math.max(1, Math.floor(AT_ONCE / new Set([...this.#owners.keys(), ...owners]).size));
    for (let started = true; started && this.#busy.size < AT_ONCE;) {
      started = false;
      for (const owner of ordered) {
        if (this.#busy.size >= AT_ONCE) break;
        if ((this.#owners.get(owner) ?? 0) >= share) continue;
        const next = due.get(owner)!.shift();
        if (!next) continue;
        started = true;
        this.#busy.add(next.sub);
        this.#owners.set(owner, (this.#owners.get(owner) ?? 0) + 1);
        void this.#attempt(next.key, next.pending).finally(() => {
          this.#busy.delete(next.sub);
          const left = (this.#owners.get(owner) ?? 1) - 1;
          if (left > 0) this.#owners.set(owner, left);
          else this.#owners.delete(owner);
          // A place freed is given at once, not at the next tick.
          this.#tick();
        });
      }
    }
  }

  async #attempt(key: string, pending: Pending): Promise<void> {
    try {
      const settled = await deliver(pending.message, pending.tries, { store: this, ...this.deps });
      if (this.#closed) return;
      if (settled.settled) await this.db.remove(key);
      else await this.db.put(key, { ...pending, tries: settled.tries, dueMs: settled.retryAt } satisfies Pending);
    } catch (error) {
      // Put off, not dropped: a store or a URL that fails once fails no faster than once a minute.
      this.deps.logger.warn(
        { err: error, webhook: { webhookId: pending.message.id } },
        'webhook: handling a message failed; again in a minute',
      );
      if (!this.#closed) await this.db.put(key, { ...pending, dueMs: Date.now() + 60_000 } satisfies Pending).catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.db.close();
  }
}
