import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { freePort, postOnce, spawnGateway, type SpawnedGateway } from '../helpers.js';
import { spawnTracked } from '../processes.js';

/**
 * OPS_PORT: /metrics and /ready on a port of their own, so that scraping cannot slow GraphQL;
 * the GraphQL port keeps only /health.
 */
let sandbox: Sandbox;
let gateway: SpawnedGateway;
let ops: string;

beforeAll(async () => {
  sandbox = await startSandbox({ record: false });
  const port = await freePort();
  gateway = await spawnGateway({ UPSTREAM_URL: sandbox.url, OPS_PORT: String(port) });
  ops = `http://127.0.0.1:${port}`;
  // The operations port says when it is listening.
  for (let i = 0; i < 100 && !gateway.output().includes('operations endpoints ready'); i++) await new Promise((r) => setTimeout(r, 50));
});
afterAll(async () => {
  await gateway?.stop();
  await sandbox?.close();
});

const base = () => gateway.url.replace(/\/graphql$/, '');

describe('npm start with OPS_PORT', () => {
  it('serves /metrics, /ready and /health on the operations port, and only /health on the GraphQL port', async () => {
    await postOnce(gateway.url, '{ contribuyente(ruc: "20100123453") { ruc } }');
    const metrics = await fetch(`${ops}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/gateway_operations_total\{[^}]*\} [1-9]/);
    const ready = await fetch(`${ops}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', upstream: [{ reachable: true }] });
    expect((await fetch(`${ops}/health`)).status).toBe(200);
    for (const path of ['/metrics', '/ready']) {
      const res = await fetch(base() + path);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toMatchObject({ errors: [{ extensions: { code: 'NOT_FOUND' } }] });
    }
    expect((await fetch(`${base()}/health`)).status).toBe(200);
    expect((await fetch(`${ops}/graphql`)).status).toBe(404);
  });

  it('keeps GraphQL answering as fast while 3,000 scrapes hit the operations port', async () => {
    /** CachedLookups one after another until `until` settles: their p99, in ms. */
    const p99While = async (until: Promise<unknown>) => {
      let going = true;
      void until.finally(() => (going = false));
      const latencies: number[] = [];
      while (going || latencies.length < 20) {
        const started = performance.now();
        const answer = await postOnce(gateway.url, '{ contribuyente(ruc: "20100123453") { ruc } }');
        latencies.push(performance.now() - started);
        expect(answer.body.data).toEqual({ contribuyente: { ruc: '20100123453' } });
      }
      return latencies.sort((a, b) => a - b)[Math.floor(latencies.length * 0.99)]!;
    };
    const quiet = await p99While(new Promise((r) => setTimeout(r, 1500)));
    // The scrapes come from a process of their own, as a Prometheus server's would.
    const flood = spawnTracked(process.execPath, ['test/fixtures/get-flood.mjs', `${ops}/metrics`, '3000', '100'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let printed = '';
    flood.stdout!.on('data', (c: Buffer) => (printed += c));
    const scraped = await p99While(new Promise((r) => flood.once('exit', r)));
    expect(JSON.parse(printed)).toEqual({ 200: 3000 });
    console.log(`lookups' p99: ${quiet.toFixed(1)} ms quiet, ${scraped.toFixed(1)} ms during 3,000 scrapes`);
    expect(scraped).toBeLessThan(Math.max(100, 4 * quiet));
  }, 60_000);
});
