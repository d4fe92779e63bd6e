import { Repeater, SlidingBuffer } from 'graphql-yoga';
import type { Cambio, TipoCambio } from '../padron/change-store.js';

/** Changes one live subscriber may have waiting: past it the oldest are dropped, never this process's memory. */
const BUFFERED = 10_000;
/** Live feeds one instance serves at once: each holds a request's place for as long as it is open. */
export const MAX_FEEDS = 256;

type Listener = (cambio: Cambio) => void;

/** The changes this instance's imports find, pushed to the GraphQL subscriptions (SSE) watching their RUCs. */
export class LiveChanges {
  readonly #byRuc = new Map<string, Set<Listener>>();
  /** Ends each feed: a stopping gateway lets its SSE answers finish rather than wait out the drain. */
  readonly #enders = new Set<() => void>();
  /** Feeds open, by owner. */
  readonly #open = new Map<string, number>();

  get watching(): number {
    return this.#byRuc.size;
  }

  publish(cambio: Cambio): void {
    for (const listener of this.#byRuc.get(cambio.ruc) ?? []) listener(cambio);
  }

  /** Ends every feed (the gateway stops). */
  end(): void {
    for (const end of this.#enders) end();
  }

  /** Feeds open: of one owner, or in all. */
  feeds(owner?: string): number {
    return owner === undefined ? this.#enders.size : (this.#open.get(owner) ?? 0);
  }

  /** The changes of these RUCs (of these types, or all) from now on, until the caller stops reading. */
  watch(owner: string, rucs: readonly string[], tipos?: readonly TipoCambio[]): AsyncIterableIterator<Cambio> {
    const types = tipos?.length ? new Set(tipos) : undefined;
    this.#open.set(owner, this.feeds(owner) + 1);
    const closed = () => (this.feeds(owner) > 1 ? this.#open.set(owner, this.feeds(owner) - 1) : this.#open.delete(owner));
    return new Repeater<Cambio>(async (push, stop) => {
      const listener: Listener = (cambio) => void (types && !types.has(cambio.tipo) ? undefined : push(cambio));
      const set = new Set(rucs);
      for (const ruc of set) this.#byRuc.set(ruc, (this.#byRuc.get(ruc) ?? new Set()).add(listener));
      const end = () => stop();
      this.#enders.add(end);
      await stop;
      this.#enders.delete(end);
      closed();
      for (const ruc of set) {
        const listeners = this.#byRuc.get(ruc);
        listeners?.delete(listener);
        if (listeners?.size === 0) this.#byRuc.delete(ruc);
      }
    }, new SlidingBuffer(BUFFERED));
  }
}
