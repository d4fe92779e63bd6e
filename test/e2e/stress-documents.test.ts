import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers.js';
import { spawnTracked } from '../processes.js';

/**
 * Memory bounded by what a document costs: 1,000 distinct hostile documents, with no token or
 * with made-up ones
 * (deep introspection, deep __type, 990 aliases, 250 KB of comment), sent by a process of
 * their own, leave the gateway's retained heap within 100 MB of idle, and ordinary lookups
 * meanwhile answer with a p99 under 200 ms. Before the fixes that p99 was 250 to 2,800 ms (443
 * with made-up tokens); alone it is about 50 now, and 113 was seen on Node 24 with another test
 * file running beside it in CI. The gateway runs in this process, so that its heap can be read
 * after a full collection (vitest runs with --expose-gc).
 */
const gc = (globalThis as { gc?: () => void }).gc;
const retained = () => {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
};

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ env: { CACHE: 'on', LOG_LEVEL: 'warn' } });
});
afterAll(() => stack?.close());

describe('1,000 distinct hostile documents', () => {
  for (const [who, token] of [
    ['with no token', ''],
    ['each with a made-up token', 'made-up'],
  ] as const) {
    it(`${who}: leave the retained heap within 100 MB of idle, and ordinary lookups a p99 under 200 ms`, async () => {
      expect(gc, 'vitest must run with --expose-gc').toBeTypeOf('function');
      await stack.gql('query($r: String!) { contribuyente(ruc: $r) { ruc } }', { r: '20100123453' });
      const idle = retained();

      const flood = spawnTracked(
        process.execPath,
        ['test/fixtures/hostile-flood.mjs', `${stack.url}/graphql`, '1000', '20', '0,1,2,3', token, token ? '1000' : '0'],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let printed = '';
      flood.stdout!.on('data', (c: Buffer) => (printed += c));
      const done = new Promise<number | null>((resolve) => flood.once('exit', resolve));
      let flooding = true;
      void done.then(() => (flooding = false));

      const latencies: number[] = [];
      while (flooding) {
        const started = performance.now();
        const { body } = await stack.gql('query($r: String!) { contribuyente(ruc: $r) { ruc } }', { r: '20100123453' });
        latencies.push(performance.now() - started);
        expect(body.data).toEqual({ contribuyente: { ruc: '20100123453' } });
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(await done).toBe(0);
      const statuses = JSON.parse(printed) as Record<string, number>;
      expect(Object.values(statuses).reduce((a, b) => a + b, 0)).toBe(1000);

      const grown = retained() - idle;
      latencies.sort((a, b) => a - b);
      const p99 = latencies[Math.floor(latencies.length * 0.99)]!;
      console.log(
        `${who}: retained +${(grown / 1048576).toFixed(1)} MB, p50 ${latencies[latencies.length >> 1]!.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms over ${latencies.length} lookups; ${printed.trim()}`,
      );
      expect(grown).toBeLessThan(100 * 1024 * 1024);
      expect(latencies.length).toBeGreaterThan(10);
      expect(p99).toBeLessThan(200);
    }, 120_000);
  }
});

describe('new documents waiting for their turn', () => {
  it('are at most 256: past that a new one is OVERLOADED (retryable), while a known one is still answered', async () => {
    const known = 'query Conocida { __typename }';
    await stack.gql(known, undefined, { token: null });
    // 600 at once, each a document of 990 aliases that takes milliseconds to validate.
    const flood = spawnTracked(
      process.execPath,
      ['test/fixtures/hostile-flood.mjs', `${stack.url}/graphql`, '600', '600', '2', '', '5000'],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let printed = '';
    flood.stdout!.on('data', (c: Buffer) => (printed += c));
    const done = new Promise((resolve) => flood.once('exit', resolve));
    await new Promise((r) => setTimeout(r, 500));
    const { status, body } = await stack.gql(known, undefined, { token: null });
    expect(status).toBe(200);
    expect(body.data).toEqual({ __typename: 'Query' });
    await done;
    const statuses = JSON.parse(printed) as Record<string, number>;
    console.log(`new documents at once: ${printed.trim()}`);
    // Only answers and OVERLOADED refusals; how many pile up past 256 depends on how fast this
    // machine sends them (CI's Node 24 pass once sent slowly enough that none did).
    expect(Object.keys(statuses).filter((s) => s !== '200' && s !== '503')).toEqual([]);
    expect(statuses['200']).toBeGreaterThanOrEqual(257);
  }, 60_000);
});

describe('a new document taking its turn', () => {
  it('holds no turn while it waits for the upstream: 40 at once, all new, share one call (CACHE=off)', async () => {
    const uncached = await startStack({ env: { CACHE: 'off' }, sandbox: { latencyMs: 300 } });
    try {
      const query = 'query Nueva40($r: String!) { contribuyente(ruc: $r) { ruc } }';
      const started = performance.now();
      const answers = await Promise.all(Array.from({ length: 40 }, () => uncached.gql(query, { r: '20100123453' })));
      for (const a of answers) expect(a.body.data).toEqual({ contribuyente: { ruc: '20100123453' } });
      expect(uncached.sandbox.callsTo('/ruc')).toHaveLength(1);
      expect(performance.now() - started).toBeLessThan(3000);
    } finally {
      await uncached.close();
    }
  });
});
