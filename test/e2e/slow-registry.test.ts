import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { postOnce, spawnGateway, type SpawnedGateway } from '../helpers.js';

/**
 * A registry that takes seconds to answer (public clients of the service wait 5 to 12 s) is still
 * paid once: identical lookups on every worker of one instance wait for the one call in flight,
 * however long it lasts, and get its answer as it comes.
 */
describe('WORKERS=4, default settings otherwise: a registry answering in seconds', () => {
  let sandbox: Sandbox;
  let gateway: SpawnedGateway | undefined;
  beforeAll(async () => {
    sandbox = await startSandbox();
    gateway = await spawnGateway({ UPSTREAM_URL: sandbox.url, WORKERS: '4' }, 4);
  });
  afterAll(async () => {
    await gateway?.stop();
    await sandbox?.close();
  });

  /** `n` identical lookups of `ruc`, each on a connection of its own; the slowest answer's time. */
  async function identical(ruc: string, n: number) {
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: n }, () =>
        postOnce(gateway!.url, 'query($r: String!) { contribuyente(ruc: $r) { ruc } }', { r: ruc }).then((a) => ({
          ...a,
          ms: performance.now() - started,
        })),
      ),
    );
    return { answers, slowestMs: Math.max(...answers.map((a) => a.ms)) };
  }

  it('200 identical lookups against a 4.5 s registry make one call, and all answer within a second of it', async () => {
    sandbox.setFaults({ latencyMs: 4500 });
    const { answers, slowestMs } = await identical('20100123453', 200);
    sandbox.setFaults({});
    expect(answers.filter((a) => a.body.errors).map((a) => a.body.errors)).toEqual([]);
    expect(sandbox.callsTo('/ruc')).toHaveLength(1);
    expect(answers.reduce((sum, a) => sum + (a.body.extensions?.cost?.['queries'] ?? 0), 0)).toBe(1);
    expect(slowestMs).toBeLessThan(4500 + 1500);
  });

  it('the same at the time-out’s edge: a call answered just before UPSTREAM_TIMEOUT_MS (10 s) is still the only one', async () => {
    sandbox.reset();
    sandbox.setFaults({ latencyMs: 9300 });
    const { answers, slowestMs } = await identical('20501234568', 100);
    sandbox.setFaults({});
    expect(answers.filter((a) => a.body.errors).map((a) => a.body.errors)).toEqual([]);
    expect(sandbox.callsTo('/ruc')).toHaveLength(1);
    expect(slowestMs).toBeLessThan(9300 + 1500);
  });
});
