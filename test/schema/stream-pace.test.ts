import { createServer, get, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { takingTurns } from '../../src/data/turns.js';
import { ClientGone } from '../../src/schema/client-gone.js';
import { LONG_STREAMS, paced, STREAM_IDLE_MS, StreamPace, StreamPlaces } from '../../src/schema/stream-pace.js';

/** A response of a loopback server, to a client that waits for it: the client leaves when it is destroyed. */
let server: Server;
const responses: ((res: ServerResponse) => void)[] = [];
beforeAll(async () => {
  server = createServer((_req, res) => responses.shift()!(res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});
const response = () =>
  new Promise<ServerResponse>((resolve) => {
    responses.push(resolve);
    get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`).on('error', () => undefined);
  });
const LIST = JSON.stringify(['contribuyentes']);
/** A part of the answer as graphql-tools' executor hands it to the writer: `items` of the list, from `at`. */
const partOf = (at: number, items: unknown[]) => ({ incremental: [{ items, path: ['contribuyentes', at] }], hasNext: true });
const settle = () => new Promise((r) => setImmediate(r));

afterEach(() => void vi.useRealTimers());

describe('a streamed list read at its reader pace', () => {
  it('reads a part only once the writer has pulled every item before it, and stops when the client leaves', async () => {
    const res = await response();
    const pace = new StreamPace(new ClientGone(res));
    const read: number[] = [];
    const release = vi.fn();
    const items = paced(
      1000,
      async (i) => {
        read.push(i);
        return i;
      },
      { pace, release, list: LIST, initial: 10, turns: takingTurns(1) },
    )[Symbol.asyncIterator]();
    // The executor takes the first part's 100 items, then asks for more: none is read until the writer pulls.
    for (let i = 0; i < 100; i++) expect(await items.next()).toEqual({ value: i, done: false });
    const next = items.next();
    await settle();
    expect(read.length).toBe(100);
    pace.pulled(partOf(10, new Array(89)));
    await settle();
    expect(read.length).toBe(100);
    pace.pulled(partOf(99, [99]));
    expect(await next).toEqual({ value: 100, done: false });
    expect(read.length).toBe(200);
    // The client leaves while the list waits: it ends, reads nothing more, and gives its place back.
    for (let i = 101; i < 200; i++) await items.next();
    const waiting = items.next();
    res.destroy();
    expect(await waiting).toEqual({ value: undefined, done: true });
    expect(read.length).toBe(200);
    expect(release).toHaveBeenCalledOnce();
  });

  it('answers a failed item with its Error, and goes on', async () => {
    const release = vi.fn();
    const got: unknown[] = [];
    for await (const item of paced(3, (i) => (i === 1 ? Promise.reject(new Error('RUC inválido')) : Promise.resolve(i)), {
      pace: undefined,
      release,
      list: LIST,
      initial: 0,
      turns: takingTurns(1),
    }))
      got.push(item);
    expect(got).toEqual([0, new Error('RUC inválido'), 2]);
    expect(release).toHaveBeenCalledOnce();
  });

  it('empties the items of the part written before, which the executor would keep until the stream ends', async () => {
    const pace = new StreamPace(new ClientGone(await response()));
    const first = [{ ruc: '20100123453' }, { ruc: '20501234568' }];
    pace.pulled(partOf(0, first));
    expect(first).toHaveLength(2);
    const second = [{ ruc: '10123456789' }];
    pace.pulled(partOf(2, second));
    expect(first).toEqual([]);
    expect(second).toHaveLength(1);
  });

  it(`cuts off a reader whose socket takes nothing for ${STREAM_IDLE_MS / 1000} s, not one whose socket takes a little`, async () => {
    const res = await response();
    const pace = new StreamPace(new ClientGone(res));
    vi.useFakeTimers();
    const reached = pace.reached(LIST, 100);
    // A slow reader: a few bytes taken within each period, never a whole part.
    for (let period = 0; period < 3; period++) {
      vi.advanceTimersByTime(STREAM_IDLE_MS / 2);
      res.write('x');
      vi.advanceTimersByTime(STREAM_IDLE_MS / 2);
      expect(res.destroyed).toBe(false);
    }
    // Then nothing for a whole period.
    vi.advanceTimersByTime(STREAM_IDLE_MS);
    expect(res.destroyed).toBe(true);
    vi.useRealTimers();
    expect(await reached).toBe(false);
  });

  it('ends a list, and gives its place back, when its answer is written whole without it (an error ended the answer)', async () => {
    const res = await response();
    const release = vi.fn();
    const items = paced(1000, async (i) => i, {
      pace: new StreamPace(new ClientGone(res)),
      release,
      list: LIST,
      initial: 0,
      turns: takingTurns(1),
    })[Symbol.asyncIterator]();
    for (let i = 0; i < 100; i++) await items.next();
    const waiting = items.next();
    res.end('{"errors":[]}');
    expect(await waiting).toEqual({ value: undefined, done: true });
    expect(release).toHaveBeenCalledOnce();
  });
});

describe('places for long streamed lists', () => {
  it(`holds ${LONG_STREAMS.max} at once, ${LONG_STREAMS.perCaller} a caller, each given back once`, () => {
    const places = new StreamPlaces();
    const own = Array.from({ length: LONG_STREAMS.perCaller }, () => places.take('a'));
    expect(own.every((release) => release !== undefined)).toBe(true);
    expect(places.take('a')).toBeUndefined();
    const others = Array.from({ length: LONG_STREAMS.max - LONG_STREAMS.perCaller }, (_, i) => places.take(`caller ${i}`));
    expect(others.every((release) => release !== undefined)).toBe(true);
    expect(places.take('b')).toBeUndefined();
    own[0]!();
    own[0]!();
    expect(places.take('a')).toBeDefined();
    expect(places.take('c')).toBeUndefined();
  });
});
