import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rucAt, writeRegister } from '../../bench/padron-register.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { postOnce, spawnGateway, TOKEN, type SpawnedGateway } from '../helpers.js';

/**
 * Slow readers of a long @stream, against a gateway started as `npm start` starts it, with a
 * register of its own: 50 clients of 10 tokens ask for 10,000 of its RUCs each and read the
 * answer a byte a second (after its first kilobyte). The gateway reads a list's next part only
 * once its writer has taken the last, streams at most 8 long lists at once (2 a caller), and
 * refuses the rest, typed: its memory holds, and another caller's lookups stay fast.
 * Before: 2.6 GB of RSS and lookups' p99 20 s; with a 256 MB heap, the gateway died.
 */
const LINES = 20_001;
const READERS = 50;
const RUCS = Array.from({ length: 10_000 }, (_, i) => rucAt(i * 2, LINES - 1));
const FIELDS =
  'ruc nombreORazonSocial estado condicion ubigeo direccion direccionCompleta departamento provincia distrito fuente consultadoEn ' +
  'esAgenteDeRetencion esBuenContribuyente esAgenteDePercepcion esAgenteDePercepcionCombustible';
const STREAMED = `query($rucs: [String!]!) { contribuyentes(rucs: $rucs) @stream(initialCount: 10) { ${FIELDS} } }`;
/** The memory the project's Kubernetes manifest gives a gateway. */
const LIMIT_BYTES = 512 * 2 ** 20;

let sandbox: Sandbox;
let root: string;
let mirror: Server;
let gateway: SpawnedGateway;

beforeAll(async () => {
  sandbox = await startSandbox();
  root = mkdtempSync(join(tmpdir(), 'stream-readers-'));
  await writeRegister(join(root, 'files'), LINES);
  mirror = createServer((req, res) => {
    try {
      res
        .writeHead(200, { 'last-modified': new Date(Date.now() - 60_000).toUTCString() })
        .end(readFileSync(join(root, 'files', (req.url ?? '/').slice(1))));
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => mirror.listen(0, '127.0.0.1', r));
  const mirrorUrl = `http://127.0.0.1:${(mirror.address() as { port: number }).port}/`;
  gateway = await spawnGateway({
    UPSTREAM_URL: sandbox.url,
    PADRON: mirrorUrl,
    PADRON_DIR: join(root, 'padron'),
    ...(process.env['GW_NODE_OPTIONS'] ? { NODE_OPTIONS: process.env['GW_NODE_OPTIONS'] } : {}),
  });
  const health = gateway.url.replace(/\/graphql$/, '/health');
  for (const deadline = Date.now() + 60_000; ;) {
    const { padron } = (await (await fetch(health)).json()) as { padron: { state: string } };
    if (padron.state === 'ready') break;
    if (Date.now() > deadline) throw new Error('the register was never ready');
    await new Promise((r) => setTimeout(r, 50));
  }
}, 120_000);
afterAll(async () => {
  if (process.env['GW_DEBUG']) console.log(gateway?.output().slice(-3000));
  await gateway?.stop();
  mirror?.closeAllConnections();
  mirror?.close();
  await sandbox?.close();
  rmSync(root, { recursive: true, force: true });
});

/** The gateway's resident memory now, from the kernel. */
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

/** A client that sends the streamed query, reads the first kilobyte of its answer, then a byte a second. */
function slowReader(url: URL, token: string): { socket: Socket; head: Promise<string> } {
  const body = JSON.stringify({ query: STREAMED, variables: { rucs: RUCS } });
  const socket = connect(Number(url.port), url.hostname);
  socket.write(
    `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Type: application/json\r\nAccept: multipart/mixed\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  socket.on('error', () => undefined);
  const head = new Promise<string>((resolve) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.length < 1024) return;
      socket.off('data', onData);
      socket.pause();
      const tick = setInterval(() => socket.read(1), 1000);
      socket.once('close', () => clearInterval(tick));
      resolve(text);
    };
    socket.on('data', onData);
    socket.once('close', () => resolve(text));
  });
  return { socket, head };
}

describe('slow readers of a long @stream', () => {
  it(`${READERS} readers of 10,000 RUCs at a byte a second keep the gateway under 512 MB, and another caller fast`, async () => {
    const pid = gateway.child.pid!;
    const url = new URL(gateway.url);
    const before = rssOf(pid);
    sandbox.reset();
    const readers = Array.from({ length: READERS }, (_, i) => slowReader(url, `${TOKEN}-${i % 10}`));
    let peak = before;
    const sampling = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 100);
    const times: number[] = [];
    try {
      // Another caller's lookups meanwhile, one after the other, for 20 s.
      for (const end = Date.now() + 20_000; Date.now() < end;) {
        const started = performance.now();
        const { body } = await postOnce(gateway.url, 'query($r: String!) { contribuyente(ruc: $r) { ruc fuente } }', {
          r: rucAt(times.length % (LINES - 1), LINES - 1),
        });
        times.push(performance.now() - started);
        expect(body).toMatchObject({ data: { contribuyente: { fuente: 'PADRON' } } });
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      clearInterval(sampling);
      for (const r of readers) r.socket.destroy();
    }
    times.sort((a, b) => a - b);
    const p99 = times[Math.floor(times.length * 0.99)]!;
    console.log(`RSS ${(before / 2 ** 20).toFixed(0)} MB before, peak ${(peak / 2 ** 20).toFixed(0)} MB; lookups p99 ${p99.toFixed(1)} ms`);
    expect(peak).toBeLessThan(LIMIT_BYTES);
    expect(p99).toBeLessThan(500);
    // 8 streamed (their first items came), 42 refused at once, typed; no call was made for any of it.
    const heads = await Promise.all(readers.map((r) => r.head));
    expect(heads.filter((h) => h.includes('"hasNext":true')).length).toBe(8);
    expect(heads.filter((h) => h.includes('"code":"OVERLOADED"') && h.includes('"retryable":true')).length).toBe(READERS - 8);
    expect(sandbox.calls).toEqual([]);

    // The readers gone, their places are free: a reader that reads gets the whole list, in order.
    const res = await fetch(gateway.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: 'multipart/mixed' },
      body: JSON.stringify({ query: STREAMED, variables: { rucs: RUCS } }),
    });
    const rucs = [...(await res.text()).matchAll(/"ruc":"(\d{11})"/g)].map((m) => m[1]);
    expect(rucs).toEqual(RUCS);
  }, 90_000);

  it('gives a long list its place back when an error ends its answer before the list is read', async () => {
    // A field that cannot be null fails (bad dates), so the answer is that error alone, and the streamed list goes unread.
    const query =
      'query($rucs: [String!]!) { a: contribuyentes(rucs: $rucs) @stream(initialCount: 0) { ruc } ' +
      'b: tiposDeCambio(desde: "ayer", hasta: "hoy") { fecha } }';
    const ask = async () => {
      const res = await fetch(gateway.url, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}-ended`, 'content-type': 'application/json', accept: 'multipart/mixed' },
        body: JSON.stringify({ query, variables: { rucs: RUCS.slice(0, 600) } }),
      });
      return res.text();
    };
    // More than a caller's two places, one after the other: each answer gave its place back (before, the third was OVERLOADED).
    for (let i = 0; i < 4; i++) {
      const text = await ask();
      expect(text).toContain('"code":"INVALID_INPUT"');
      expect(text).not.toContain('OVERLOADED');
    }
  });
});
