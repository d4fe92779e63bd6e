import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync, readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { UpstreamClient } from '../../src/upstream/client.js';
import { MissingTokenError, UpstreamHttpError, UpstreamInvalidResponseError, UpstreamUnavailableError } from '../../src/upstream/errors.js';
import { TRIGGERS } from '../../src/sandbox/data.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';

let sandbox: Sandbox;
let client: UpstreamClient;
beforeAll(async () => {
  sandbox = await startSandbox({ slowMs: 1000 });
  // One call per lookup and no breaker here: those have tests of their own.
  client = new UpstreamClient({
    baseUrl: sandbox.url,
    timeoutMs: 200,
    retries: 0,
    breaker: { failurePercent: 50, minCalls: 1_000_000, windowMs: 10_000, cooldownMs: 10_000 },
  });
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
});
beforeEach(() => sandbox.reset());

describe('the REST client alone (no GraphQL)', () => {
  it('imports nothing from graphql anywhere in src/upstream', () => {
    const dir = new URL('../../src/upstream/', import.meta.url);
    for (const file of readdirSync(dir)) {
      expect(readFileSync(new URL(file, dir), 'utf8'), file).not.toMatch(/from ['"]graphql/);
    }
  });

  it('returns the parsed record', async () => {
    await expect(client.lookup('ruc', '20100123453', { token: 'sandbox-pro' })).resolves.toMatchObject({
      ruc: '20100123453',
      nombre_o_razon_social: 'COMERCIAL ANDINA S.A.C.',
    });
  });

  it('makes no call without a token', async () => {
    await expect(client.lookup('ruc', '20100123453', { token: undefined })).rejects.toBeInstanceOf(MissingTokenError);
    await expect(client.validarComprobantes([], { token: '' })).rejects.toBeInstanceOf(MissingTokenError);
    expect(sandbox.calls).toHaveLength(0);
  });

  it('turns an error envelope into UpstreamHttpError with status, code, retryable and message', async () => {
    const error = await client.lookup('ruc', TRIGGERS.notFound.ruc, { token: 'sandbox-pro' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect(error).toMatchObject({
      code: 'UPSTREAM_HTTP_ERROR',
      kind: 'http',
      status: 404,
      upstreamCode: 'document_not_found',
      upstreamRetryable: false,
      upstreamMessage: 'El RUC no existe',
      path: '/ruc',
    });
  });

  it('tries again a call that could not be sent (a refused connection), and counts it as free', async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const calls: { attempt: number; status: number | undefined; queries: number }[] = [];
    const refusing = new UpstreamClient({ baseUrl: `http://127.0.0.1:${closed}`, retries: 2, onCall: (c) => calls.push(c) });
    const error = await refusing.lookup('ruc', '20100123453', { token: 't' }).catch((e: unknown) => e);
    await refusing.close();
    expect(error).toMatchObject({ reason: 'network', sent: false, unprocessed: true });
    expect(calls.map((c) => [c.attempt, c.status, c.queries])).toEqual([
      [1, undefined, 0],
      [2, undefined, 0],
      [3, undefined, 0],
    ]);
  });

  it('never tries again a call that timed out after it was sent, and counts it as spent', async () => {
    const calls: { attempt: number; queries: number }[] = [];
    const retrying = new UpstreamClient({ baseUrl: sandbox.url, timeoutMs: 200, retries: 2, onCall: (c) => calls.push(c) });
    const error = await retrying.lookup('ruc', TRIGGERS.slow.ruc, { token: 'sandbox-pro' }).catch((e: unknown) => e);
    await retrying.close();
    expect(error).toMatchObject({ reason: 'timeout', sent: true, unprocessed: false });
    expect(calls.map((c) => [c.attempt, c.queries])).toEqual([[1, 1]]);
    expect(sandbox.callsTo('/ruc')).toHaveLength(1);
  });

  it('turns 503, HTML 502, a reset and a time-out into UpstreamUnavailableError with its reason', async () => {
    const reasons = await Promise.all(
      [TRIGGERS.unavailable.ruc, TRIGGERS.badGateway.ruc, TRIGGERS.reset.ruc, TRIGGERS.slow.ruc].map((ruc) =>
        client.lookup('ruc', ruc, { token: 'sandbox-pro' }).catch((e: unknown) => e),
      ),
    );
    for (const e of reasons) expect(e).toBeInstanceOf(UpstreamUnavailableError);
    expect(reasons.map((e) => (e as UpstreamUnavailableError).reason)).toEqual(['status', 'status', 'network', 'timeout']);
    expect((reasons[0] as UpstreamUnavailableError).upstreamRetryable).toBe(true);
  });

  it('turns a billed answer it cannot use into UpstreamInvalidResponseError, after one call', async () => {
    const cases = [
      [TRIGGERS.brokenBody.ruc, 'not_json', true],
      [TRIGGERS.noContent.ruc, 'not_json', true],
      [TRIGGERS.otherDocument.ruc, 'other_document', false],
      [TRIGGERS.redirect.ruc, 'redirect', false],
    ] as const;
    for (const [ruc, reason, retryable] of cases) {
      sandbox.reset();
      const error = await client.lookup('ruc', ruc, { token: 'sandbox-pro' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UpstreamInvalidResponseError);
      expect(error).toMatchObject({ reason, retryable });
      expect(sandbox.callsTo('/ruc')).toHaveLength(1);
    }
  });

  it('turns a record that breaks the schema into UpstreamInvalidResponseError naming fields, not values', async () => {
    const error = await client.lookup('ruc', TRIGGERS.badRecord.ruc, { token: 'sandbox-pro' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamInvalidResponseError);
    expect((error as UpstreamInvalidResponseError).issues.join()).toMatch(/ruc|nombre_o_razon_social/);
  });

  it('checks its options in the constructor', () => {
    expect(() => new UpstreamClient({ baseUrl: 'not a url' })).toThrow(TypeError);
    expect(() => new UpstreamClient({ baseUrl: 'ftp://x' })).toThrow(/http or https/);
    expect(() => new UpstreamClient({ baseUrl: 'https://user:pw@x' })).toThrow(/credentials/);
    expect(() => new UpstreamClient({ baseUrl: 'https://x', timeoutMs: 0 })).toThrow(/timeoutMs/);
  });

  it('reuses keep-alive connections for calls one after another', async () => {
    const fresh = new UpstreamClient({ baseUrl: sandbox.url });
    for (let i = 0; i < 5; i++) await fresh.lookup('ruc', '20100123453', { token: 'sandbox-pro' });
    await fresh.close();
    expect(sandbox.calls).toHaveLength(5);
    // undici may open a second socket while the first is being released; never one per call.
    expect(new Set(sandbox.calls.map((c) => c.remotePort)).size).toBeLessThanOrEqual(2);
  });
});

describe('time-outs under garbage collection', () => {
  it('still fire when the heap is collected while the call waits', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const timed = new UpstreamClient({ baseUrl: sandbox.url, timeoutMs: 200, retries: 0 });
    const call = timed.lookup('ruc', TRIGGERS.slow.ruc, { token: 'sandbox-pro' }).catch((e: unknown) => e);
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setTimeout(r, 20));
      gc();
    }
    const error = await call;
    await timed.close();
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    // The sandbox's record would have come after it: a time-out, not an answer, ended the wait.
    expect((error as UpstreamUnavailableError).reason).toBe('timeout');
  });
});

describe('an answer larger than maxResponseBytes', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: true, code: 'found', data: { ruc: '20100123453', nombre_o_razon_social: 'x'.repeat(10_000) } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('is refused instead of being read whole (billed: not retried)', async () => {
    const small = new UpstreamClient({ baseUrl: url, maxResponseBytes: 1000 });
    const error = await small.lookup('ruc', '20100123453', { token: 't' }).catch((e: unknown) => e);
    await small.close();
    expect(error).toBeInstanceOf(UpstreamInvalidResponseError);
    expect(error).toMatchObject({ reason: 'too_large', retryable: false });
  });
});

describe('an answer whose body stops half-way', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      // Headers and the start of the body, then nothing: only the call's own time-out can end
      // the wait (undici's per-phase timers are off, see src/upstream/origin.ts).
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"success":true,"code":"found","data":{"ruc":"2010');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });

  it('ends at the time-out, cut short after a 200 (billed), and is not retried', async () => {
    let calls = 0;
    server.on('request', () => calls++);
    const timed = new UpstreamClient({ baseUrl: url, timeoutMs: 200, retries: 2 });
    const started = Date.now();
    const error = await timed.lookup('ruc', '20100123453', { token: 't' }).catch((e: unknown) => e);
    await timed.close();
    expect(error).toBeInstanceOf(UpstreamInvalidResponseError);
    expect(error).toMatchObject({ reason: 'cut_short', retryable: true, status: 200 });
    expect(calls).toBe(1);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('an answer no reading survives', () => {
  let server: Server;
  let url: string;
  // 5,000 nested lists in a receipt's notes: JSON.parse reads them, JSON.stringify runs out of stack.
  const deep = '['.repeat(5000) + ']'.repeat(5000);
  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        `{"success":true,"data":{"cantidad_de_comprobantes":1,"comprobantes":[{"serie_documento":"F001","numero_documento":"1","observaciones":[${deep}]}]}}`,
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('is UpstreamInvalidResponseError (billed), never a bare exception', async () => {
    const deepClient = new UpstreamClient({ baseUrl: url });
    const error = await deepClient.validarComprobantes([], { token: 't' }).catch((e: unknown) => e);
    await deepClient.close();
    expect(error).toBeInstanceOf(UpstreamInvalidResponseError);
    expect(error).toMatchObject({ reason: 'record', status: 200 });
  });
});
