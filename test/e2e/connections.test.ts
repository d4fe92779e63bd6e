import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContribuyenteDocument } from '../../operations/generated/graphql.js';
import { startStack, type Stack } from '../helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let stack: Stack;
let port: number;
beforeAll(async () => {
  stack = await startStack({
    env: {
      MAX_CONCURRENT_REQUESTS: '8',
      HTTP_HEADERS_TIMEOUT_MS: '1000',
      HTTP_REQUEST_TIMEOUT_MS: '1500',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '500',
    },
  });
  port = Number(new URL(stack.url).port);
});
afterAll(() => stack.close());

/** A raw socket to the gateway, with everything it received and when it closed. */
async function open(): Promise<{ socket: Socket; received: () => string; closed: Promise<number> }> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  let received = '';
  socket.on('data', (chunk) => (received += chunk));
  socket.on('error', () => undefined);
  const openedAt = Date.now();
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - openedAt)));
  return { socket, received: () => received, closed };
}

/** Headers of a POST announcing `length` bytes of body. */
const postHead = (length: number) =>
  `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

describe('slow and idle connections starve no one', () => {
  it('with 200 stalled uploads open, /health answers at once and a query is served; each upload gets a typed 408', async () => {
    const stalled = await Promise.all(Array.from({ length: 200 }, () => open()));
    for (const s of stalled) s.socket.write(postHead(1000) + '{"query":"{ contri');
    await sleep(100);

    const started = Date.now();
    expect((await fetch(`${stack.url}/health`)).status).toBe(200);
    const { status, body } = await stack.gql(ContribuyenteDocument, { ruc: '20100123453' });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(status).toBe(200);
    expect(body.data?.contribuyente?.ruc).toBe('20100123453');

    const closedAfter = await Promise.all(stalled.map((s) => s.closed));
    expect(Math.max(...closedAfter)).toBeLessThan(1500 + 5000 + 1500);
    const answer = stalled[0]!.received();
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(answer).toContain('"code":"REQUEST_TIMEOUT"');
  }, 15_000);

  it('closes a connection whose headers never end, after HTTP_HEADERS_TIMEOUT_MS', async () => {
    const { socket, closed } = await open();
    socket.write('POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const after = await closed;
    expect(after).toBeGreaterThanOrEqual(900);
    expect(after).toBeLessThan(3500);
  });

  it('closes an idle keep-alive connection after HTTP_KEEP_ALIVE_TIMEOUT_MS', async () => {
    const { socket, received, closed } = await open();
    const body = JSON.stringify({ query: '{ __typename }' });
    socket.write(postHead(Buffer.byteLength(body)) + body);
    await sleep(200);
    expect(received()).toMatch(/^HTTP\/1\.1 200/);
    const after = await closed;
    expect(after).toBeLessThan(2500);
  });
});

describe('every GraphQL request takes the one door, with its limits', () => {
  for (const path of ['/graphql/', '//graphql', '/graphql/x']) {
    it(`answers ${path} with a typed 404, without reading a 5 MB body or running anything`, async () => {
      const res = await fetch(`${stack.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename }', padding: 'x'.repeat(5 * 1024 * 1024) }),
      });
      expect(res.status).toBe(404);
      const text = await res.text();
      expect(text.length).toBeLessThan(500);
      expect(JSON.parse(text)).toMatchObject({ errors: [{ extensions: { code: 'NOT_FOUND', retryable: false } }] });
    });
  }
});

describe('refusals with a typed body', () => {
  it('answers a 5 MB POST with its 413, which the client reads instead of a reset', async () => {
    const res = await fetch(`${stack.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }', padding: 'x'.repeat(5 * 1024 * 1024) }),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ errors: [{ extensions: { code: 'REQUEST_ENTITY_TOO_LARGE', retryable: false } }] });
  });

  it('answers a body over the limit sent in chunks (no Content-Length) with its 413 too', async () => {
    const chunks = (async function* () {
      for (let i = 0; i < 50; i++) yield new Uint8Array(64 * 1024).fill(32);
    })();
    const res = await fetch(`${stack.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: chunks as unknown as BodyInit,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ errors: [{ extensions: { code: 'REQUEST_ENTITY_TOO_LARGE' } }] });
  });

  it('answers a content type it cannot read with a typed 415, and an unknown path with a typed 404', async () => {
    const unsupported = await fetch(`${stack.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/xml', 'x-graphql-yoga-csrf': '1' },
      body: '<query/>',
    });
    expect(unsupported.status).toBe(415);
    expect(await unsupported.json()).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST', retryable: false } }] });
    const missing = await fetch(`${stack.url}/no-such-path`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ errors: [{ extensions: { code: 'NOT_FOUND', retryable: false } }] });
  });
});
