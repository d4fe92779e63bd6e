import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { freePort, slowLookup, spawnGateway } from '../helpers.js';
import { signalGroup } from '../processes.js';

let sandbox: Sandbox;
const children: ChildProcess[] = [];
beforeAll(async () => {
  sandbox = await startSandbox({ slowMs: 1200 });
});
afterAll(() => sandbox.close());
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

describe('graceful shutdown', () => {
  it('on SIGTERM stops accepting, lets the operation in flight finish, and exits 0', async () => {
    const gw = await spawnGateway({ UPSTREAM_URL: sandbox.url, SHUTDOWN_TIMEOUT_MS: '5000' });
    children.push(gw.child);
    const exited = new Promise<number | null>((resolve) => gw.child.once('exit', resolve));
    const inFlight = slowLookup(gw.url);
    await new Promise((r) => setTimeout(r, 300));
    gw.child.kill('SIGTERM');
    // The listener closes right after this line; a busy machine may take a while to get there.
    const said = Date.now() + 5_000;
    while (!gw.output().includes('shutting down: no new connections') && Date.now() < said) await new Promise((r) => setTimeout(r, 20));

    // New connections are refused while the slow answer is still on its way.
    await expect(
      fetch(gw.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{__typename}"}' }),
    ).rejects.toThrow();

    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ data: { contribuyente: { nombreORazonSocial: 'EMPRESA DE RESPUESTA LENTA S.A.C.' } } });
    expect(await exited).toBe(0);
    expect(gw.output()).toContain('shutting down');
    expect(gw.output()).toContain('"msg":"stopped"');
  });

  it('ends a live feed (SSE) at once on SIGTERM: its answer finishes, the drain does not wait out SHUTDOWN_TIMEOUT_MS', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shutdown-sse-'));
    try {
      const gw = await spawnGateway({ PADRON: 'sandbox', PADRON_DIR: dir, SHUTDOWN_TIMEOUT_MS: '20000' });
      children.push(gw.child);
      const exited = new Promise<number | null>((resolve) => gw.child.once('exit', resolve));
      // The subscriptions' store opens once the register holds its directory: until then a feed is refused (retryable).
      const opened = async () => {
        const res = await fetch(gw.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer sandbox-pro' },
          body: '{"query":"{ suscripciones { id } }"}',
        });
        return ((await res.json()) as { errors?: unknown }).errors === undefined;
      };
      for (const deadline = Date.now() + 20_000; !(await opened()); await new Promise((r) => setTimeout(r, 50))) {
        if (Date.now() > deadline) throw new Error('the subscriptions never opened');
      }
      const res = await fetch(gw.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: 'Bearer sandbox-pro' },
        body: JSON.stringify({ query: 'subscription { cambiosPadron(rucs: ["20100123453"]) { ruc } }' }),
      });
      expect(res.status).toBe(200);
      const text = res.text();
      // Open, waiting for changes: nothing but the stream's start has come.
      await new Promise((r) => setTimeout(r, 500));
      const signalled = Date.now();
      gw.child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(5_000);
      const said = await text;
      expect(said).toContain('event: complete');
      expect(said).not.toContain('errors');
      expect(gw.output()).not.toContain('shutdown deadline passed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('on SIGINT with an answer slower than SHUTDOWN_TIMEOUT_MS, gives up at the deadline and still exits 0', async () => {
    const gw = await spawnGateway({ UPSTREAM_URL: sandbox.url, SHUTDOWN_TIMEOUT_MS: '200' });
    children.push(gw.child);
    const exited = new Promise<number | null>((resolve) => gw.child.once('exit', resolve));
    const inFlight = slowLookup(gw.url).catch((error: unknown) => error);
    await new Promise((r) => setTimeout(r, 200));
    const signalled = Date.now();
    gw.child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(1100);
    expect(await inFlight).toBeInstanceOf(Error);
    expect(gw.output()).toContain('shutdown deadline passed');
  });
});

describe('a drain a load balancer sees (OPS_PORT)', () => {
  {
    it('/ready says 503 as soon as the stop begins and /health 200, while the operation in flight finishes', async () => {
      const opsPort = await freePort();
      const gw = await spawnGateway({ UPSTREAM_URL: sandbox.url, SHUTDOWN_TIMEOUT_MS: '5000', OPS_PORT: String(opsPort) });
      children.push(gw.child);
      const ops = `http://127.0.0.1:${opsPort}`;
      expect((await fetch(`${ops}/ready`)).status).toBe(200);
      const inFlight = slowLookup(gw.url);
      await new Promise((r) => setTimeout(r, 300));
      signalGroup(gw.child, 'SIGTERM');
      await new Promise((r) => setTimeout(r, 200));

      const ready = await fetch(`${ops}/ready`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: 'not ready', stopping: true });
      expect((await fetch(`${ops}/health`)).status).toBe(200);

      const res = await inFlight;
      expect(res.status).toBe(200);
      expect(await gw.exited).toBe(0);
    });
  }
});

describe('SHUTDOWN_DELAY_MS', () => {
  it('keeps serving new connections, /ready already 503, for the delay; then stops accepting and exits 0', async () => {
    const opsPort = await freePort();
    const gw = await spawnGateway({ UPSTREAM_URL: sandbox.url, OPS_PORT: String(opsPort), SHUTDOWN_DELAY_MS: '1500' });
    children.push(gw.child);
    const signalled = Date.now();
    signalGroup(gw.child, 'SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    expect((await fetch(`http://127.0.0.1:${opsPort}/ready`)).status).toBe(503);
    // A new connection within the delay is still answered: the load balancer has not seen the 503 yet.
    const answer = await fetch(gw.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', connection: 'close' },
      body: '{"query":"{__typename}"}',
    });
    expect(answer.status).toBe(200);
    expect(await gw.exited).toBe(0);
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(1500);
  });
});
