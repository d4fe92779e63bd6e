import { getDirectiveValues, responsePathAsArray, type GraphQLResolveInfo } from 'graphql';
import type { ClientGone } from './client-gone.js';
import type { Turns } from '../data/turns.js';

/** How long a streamed list waits with its socket taking nothing before the answer is cut (nginx's `send_timeout` is 60 s). */
export const STREAM_IDLE_MS = 30_000;

/**
 * How far the writer of an incremental answer has got with each streamed list, so that a list is
 * read at its reader's pace. Yoga pulls an answer's next part only once the socket has taken the
 * last one (whatwg-node waits for `drain`), while graphql-tools' executor completes a streamed
 * list's items as fast as they resolve: without a pace, a slow reader's whole list waits in memory
 * (docs/performance.md, issue 52).
 */
export class StreamPace {
  /** Items of each streamed list (by its response path) the writer has pulled. */
  readonly #pulled = new Map<string, number>();
  readonly #waiting = new Set<{ list: string; items: number; resolve: (reached: boolean) => void }>();
  /** The item lists of the part pulled last, written by the time the next is pulled. */
  #lastPart: unknown[][] = [];
  #closed = false;
  /** While a list waits: looks every STREAM_IDLE_MS at whether the socket took anything since (`#taken` bytes then). */
  #idle: NodeJS.Timeout | undefined;
  #taken = 0;

  constructor(private readonly answer: ClientGone) {
    // Over, however: written whole (an error can end an answer with its streams unread), or the client gone.
    answer.onClosed(() => {
      this.#closed = true;
      for (const waiter of this.#waiting) waiter.resolve(false);
      this.#waiting.clear();
      this.#watch();
    });
  }

  /**
   * Resolves true once the writer has pulled `items` of the list, false once the answer is over.
   * A reader whose socket takes nothing for STREAM_IDLE_MS while a list waits is cut off: it would
   * hold its stream's place, and what the stream keeps, for as long as it likes.
   */
  reached(list: string, items: number): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    if ((this.#pulled.get(list) ?? 0) >= items) return Promise.resolve(true);
    return new Promise((resolve) => {
      this.#waiting.add({ list, items, resolve });
      this.#watch();
    });
  }

  /** Watches the socket while a list waits, and only then. */
  #watch(): void {
    if (this.#waiting.size === 0) {
      clearInterval(this.#idle);
      this.#idle = undefined;
      return;
    }
    if (this.#idle) return;
    this.#taken = this.answer.written;
    this.#idle = setInterval(() => {
      const taken = this.answer.written;
      if (taken > this.#taken) this.#taken = taken;
      else this.answer.cut();
    }, STREAM_IDLE_MS);
    this.#idle.unref();
  }

  /**
   * Told of every part of the answer as its writer pulls it: counts the items of each streamed list
   * in it. The part before it has been written by then, and its items are emptied: graphql-tools'
   * executor hands over the very lists its stream records keep, each record holding the one before
   * it until the stream ends, so a long list read slowly would otherwise stay whole in memory.
   */
  pulled(part: unknown): void {
    for (const items of this.#lastPart) items.length = 0;
    this.#lastPart = [];
    if (typeof part !== 'object' || part === null || !('incremental' in part) || !Array.isArray(part.incremental)) return;
    for (const entry of part.incremental) {
      if (typeof entry !== 'object' || entry === null || !('items' in entry) || !Array.isArray(entry.items)) continue;
      if (!('path' in entry) || !Array.isArray(entry.path)) continue;
      this.#lastPart.push(entry.items);
      const list = JSON.stringify(entry.path.slice(0, -1));
      const pulled = (this.#pulled.get(list) ?? 0) + entry.items.length;
      this.#pulled.set(list, pulled);
      for (const waiter of this.#waiting) {
        if (waiter.list !== list || waiter.items > pulled) continue;
        this.#waiting.delete(waiter);
        waiter.resolve(true);
      }
    }
    this.#watch();
  }
}

/** Each request's pace, made when a streamed list of it first asks (keyed by its context, which the executor's hooks see too). */
const paces = new WeakMap<object, StreamPace>();

/** The pace of the request whose context this is; undefined without a response to pace (a context built for a test). */
export function paceOf(context: { readonly clientGone: ClientGone | undefined }): StreamPace | undefined {
  let pace = paces.get(context);
  if (!pace && context.clientGone) paces.set(context, (pace = new StreamPace(context.clientGone)));
  return pace;
}

/** The most long streamed lists under way at once, every caller's, and one caller's: each keeps its records until it ends. */
export const LONG_STREAMS = { max: 8, perCaller: 2 } as const;

/**
 * Places for long streamed lists. graphql-tools' executor keeps a record for every item of a
 * stream until the stream ends (each holds the one before it), about a kilobyte an item: a slow
 * reader's list grows in memory as it is read, so how many run at once is bounded, and a caller
 * holds at most its share (docs/performance.md, issue 52).
 */
export class StreamPlaces {
  #taken = 0;
  readonly #byCaller = new Map<string, number>();

  /** A place for the caller's stream, and how to give it back (once); undefined when every place or the caller's share is taken. */
  take(caller: string | undefined): (() => void) | undefined {
    const key = caller ?? '';
    const held = this.#byCaller.get(key) ?? 0;
    if (this.#taken >= LONG_STREAMS.max || held >= LONG_STREAMS.perCaller) return undefined;
    this.#taken++;
    this.#byCaller.set(key, held + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.#taken--;
      const left = (this.#byCaller.get(key) ?? 1) - 1;
      if (left > 0) this.#byCaller.set(key, left);
      else this.#byCaller.delete(key);
    };
  }
}

/** The pace a streamed list of this request made, if any. */
export const madePace = (context: object): StreamPace | undefined => paces.get(context);

/** The list a resolver answers, as the incremental answer's parts name it. */
export const listOf = (info: GraphQLResolveInfo): string => JSON.stringify(responsePathAsArray(info.path));

/** How many items of the list go in the first answer when it is streamed (`@stream(initialCount)`); undefined when it is not. */
export function streamedAfter(info: GraphQLResolveInfo): number | undefined {
  const directive = info.schema.getDirective('stream');
  const field = info.fieldNodes[0];
  if (!directive || !field) return undefined;
  const stream = getDirectiveValues(directive, field, info.variableValues);
  if (!stream || stream['if'] === false) return undefined;
  return typeof stream['initialCount'] === 'number' ? stream['initialCount'] : 0;
}

export interface PacedList {
  /** Undefined: read without waiting for a writer (a context built without a response). */
  readonly pace: StreamPace | undefined;
  /** Given back when the list ends, however it ends. */
  readonly release: () => void;
  /** The list, as `listOf` names it. */
  readonly list: string;
  /** Items in the first answer (`@stream(initialCount)`), which the writer pulls with it rather than as items. */
  readonly initial: number;
  /** Where each part waits for its turn among every request's. */
  readonly turns: Turns;
}

/** A streamed list's items read at once: what a slow reader's request holds, twice (one part being written, one read). */
const STREAMED_PART = 100;

/**
 * A streamed list's items, a part at a time, each part read once the answer's writer has pulled
 * every item before it, in its turn among every request's parts: the list read at its reader's
 * pace, stopped when the client leaves. An async iterable, which graphql-tools' executor
 * pulls an item at a time (an array's items it takes all at once, whatever the reader).
 * A failed item is its Error, which execution fails alone (graphql-js's `completeValue` throws an
 * Error item at that item's path); Pothos types a list's items as records only, hence the overload.
 */
export function paced<T>(length: number, at: (i: number) => Promise<T>, how: PacedList): AsyncIterable<T>;
export async function* paced<T>(length: number, at: (i: number) => Promise<T>, how: PacedList): AsyncIterable<T | Error> {
  const { pace, release, list, initial, turns } = how;
  const part = STREAMED_PART;
  try {
    for (let from = 0; from < length; from += part) {
      if (pace && !(await pace.reached(list, from - initial))) return;
      await turns.run(async () => undefined);
      const items = Array.from({ length: Math.min(part, length - from) }, (_, k) => at(from + k).catch(asError));
      for (const item of items) yield await item;
    }
  } finally {
    release();
  }
}

const asError = (reason: unknown): Error => (reason instanceof Error ? reason : new Error(String(reason)));
