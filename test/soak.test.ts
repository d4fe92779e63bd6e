import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TAXPAYERS, TRIGGERS } from '../src/sandbox/data.js';
import { startStack, type Stack } from './helpers.js';

/**
 * A bounded soak: 20,000 operations at concurrency 100 against mixed upstream faults.
 * What it shows is robustness (no unhandled rejection, no 5xx of the gateway's own, memory
 * back near where it started), not speed; speed lives in `npm run bench`.
 */
const OPERATIONS = 20_000;
const CONCURRENCY = 100;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapAfterGc = () => {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
};

const rucs = TAXPAYERS.map((t) => t.ruc);
const receipt = (i: number) => ({
  rucEmisor: rucs[i % rucs.length]!,
  codigoTipoDocumento: '01',
  serieDocumento: 'F001',
  numeroDocumento: String(i % 100_000),
  fechaDeEmision: '2026-10-01',
  total: '10.00',
});

/** A mix of what real callers send, good and bad. */
function operation(i: number): { query: string; variables?: Record<string, unknown> } {
  switch (i % 8) {
    case 0:
      return {
        query: 'query($r: String!) { contribuyente(ruc: $r) { ruc nombreORazonSocial detalle { actividadesEconomicas } } }',
        variables: { r: rucs[i % rucs.length] },
      };
    case 1:
      return { query: 'query($r: [String!]!) { contribuyentes(rucs: $r) { ruc estado } }', variables: { r: rucs.slice(0, 1 + (i % 6)) } };
    case 2:
      return { query: 'query($n: String!) { licencia(numLicencia: $n) { nombres } }', variables: { n: i % 2 ? 'Q46779354' : 'Q72345678' } };
    case 3:
      return {
        query: 'mutation($c: [ComprobanteInput!]!) { validarComprobantes(comprobantes: $c) { cantidadDeComprobantes } }',
        variables: { c: [receipt(i), receipt(i + 1)] },
      };
    case 4:
      return { query: `{ contribuyente(ruc: "${[TRIGGERS.notFound.ruc, TRIGGERS.rejected.ruc, '123'][i % 3]}") { ruc } }` };
    case 5:
      return { query: '{ contribuyente(ruc: "20100123453") { rucc } }' };
    case 6:
      return { query: '{ contribuyente(ruc: ' };
    default:
      return {
        query: 'query($r: String!) { contribuyenteDetalle(ruc: $r) { tipoContribuyente } }',
        variables: { r: rucs[(i * 7) % rucs.length] },
      };
  }
}

let stack: Stack;
let client: Pool;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  // Every operation reaches the upstream: no call in flight is shared.
  stack = await startStack({ env: { LOG_LEVEL: 'warn', BREAKER_COOLDOWN_MS: '300', UPSTREAM_TIMEOUT_MS: '500', COALESCE: 'off' } });
  client = new Pool(stack.url, { connections: CONCURRENCY });
  process.on('unhandledRejection', onUnhandled);
});
afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await client.close();
  await stack.close();
});

async function run(from: number, count: number, statuses: Map<number, number>) {
  let next = from;
  const end = from + count;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < end) {
        const i = next++;
        const res = await client.request({
          method: 'POST',
          path: '/graphql',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${i % 50 === 0 ? 'sandbox-free' : 'sandbox-pro'}` },
          body: JSON.stringify(operation(i)),
        });
        await res.body.dump();
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      }
    }),
  );
}

describe('soak under mixed faults', () => {
  it(
    `${OPERATIONS} operations at concurrency ${CONCURRENCY}: no unhandled rejection, no gateway 5xx, memory back near baseline`,
    { timeout: 120_000 },
    async () => {
      // Warm up (JIT, pools, lazy modules) before taking the baseline.
      await run(0, 1000, new Map());
      stack.sandbox.reset();
      const baseline = heapAfterGc();

      stack.sandbox.setFaults({
        latencyMs: 1,
        rates: { unavailable: 0.04, serverError: 0.02, reset: 0.02, notJson: 0.02, truncated: 0.02, badRecord: 0.02, oversized: 0.002 },
      });
      const statuses = new Map<number, number>();
      const started = Date.now();
      await run(1000, OPERATIONS, statuses);
      const seconds = (Date.now() - started) / 1000;
      stack.sandbox.setFaults({});
      // The sandbox's record (its last 10,000 calls) lives in this heap too: count the calls, then drop it.
      const upstreamCalls = stack.sandbox.callCount;
      stack.sandbox.reset();

      const after = heapAfterGc();
      const total = [...statuses.values()].reduce((a, b) => a + b, 0);
      console.log(
        `soak: ${total} operations in ${seconds.toFixed(1)} s; statuses ${JSON.stringify(Object.fromEntries(statuses))}; upstream calls ${upstreamCalls}; heap ${(baseline / 1e6).toFixed(1)} MB -> ${(after / 1e6).toFixed(1)} MB`,
      );

      expect(total).toBe(OPERATIONS);
      expect(unhandled).toEqual([]);
      expect([...statuses.keys()].filter((s) => s >= 500)).toEqual([]);
      expect(after).toBeLessThan(baseline + 10 * 1024 * 1024);
      expect(upstreamCalls).toBeGreaterThan(OPERATIONS / 2); // the upstream really was exercised
    },
  );
});
