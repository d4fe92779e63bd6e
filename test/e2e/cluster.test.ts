import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { postOnce, spawnGateway, workerPids, type SpawnedGateway } from '../helpers.js';

let sandbox: Sandbox;
let gateway: SpawnedGateway;

const once = async (url: string) => (await postOnce(url, '{ contribuyente(ruc: "20100123453") { ruc } }')).status;

beforeAll(async () => {
  sandbox = await startSandbox();
  // Nothing shared, so that every operation reaches the upstream from the worker that got it.
  // Both workers listening before the first request.
  gateway = await spawnGateway({ UPSTREAM_URL: sandbox.url, WORKERS: '2', CACHE: 'off', COALESCE: 'off' }, 2);
});

afterAll(async () => {
  if (gateway.child.exitCode === null) gateway.child.kill('SIGKILL');
  await sandbox.close();
});

describe('WORKERS=2 (node:cluster)', () => {
  it('serves from two worker processes sharing one port', async () => {
    const statuses = await Promise.all(Array.from({ length: 20 }, () => once(gateway.url)));
    expect(statuses.every((s) => s === 200)).toBe(true);
    await new Promise((r) => setTimeout(r, 200));
    expect(workerPids(gateway.output()).size).toBe(2);
    expect(sandbox.callsTo('/ruc')).toHaveLength(20);
  });

  it('replaces a worker that dies and keeps serving', async () => {
    const [victim] = [...workerPids(gateway.output())];
    process.kill(victim!, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 1500));
    expect(gateway.output()).toContain('worker died; starting another');
    const statuses = await Promise.all(Array.from({ length: 10 }, () => once(gateway.url)));
    expect(statuses.every((s) => s === 200)).toBe(true);
  });

  it('stops every worker and exits 0 on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => gateway.child.once('exit', resolve));
    gateway.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(gateway.output()).toContain('shutting down the cluster');
  });
});
