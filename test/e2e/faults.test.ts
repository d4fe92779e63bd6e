import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ContribuyentesDocument, EjemploDocument, ValidarComprobantesDocument } from '../../operations/generated/graphql.js';
import type { FaultKind } from '../../src/sandbox/server.js';
import { RECEIPT, startStack, type Stack } from '../helpers.js';

let stack: Stack;
beforeAll(async () => {
  // One call per field and no breaker, so that each fault shows on every field it touches.
  // A time-out with room for a busy machine to read a 5 MB body; the latency test sets its own.
  stack = await startStack({ env: { UPSTREAM_RETRIES: '0', BREAKER_MIN_CALLS: '1000000', UPSTREAM_TIMEOUT_MS: '3000' } });
});
afterAll(() => stack.close());
afterEach(() => {
  stack.sandbox.setFaults({});
  stack.sandbox.reset();
});

/** A normal operation still answers: the process is serving. */
async function stillServing() {
  stack.sandbox.setFaults({});
  const { status, body } = await stack.gql(EjemploDocument, { ruc: '20100123453', numLicencia: 'Q46779354' });
  expect(status).toBe(200);
  expect(body.errors).toBeUndefined();
  expect(body.data?.licencia?.nombres).toBe('ROSA ELENA');
}

const MATRIX: [FaultKind, string, boolean][] = [
  ['unavailable', 'UPSTREAM_UNAVAILABLE', true],
  // A 500 whose envelope says retryable: false; the envelope's word wins.
  ['serverError', 'UPSTREAM_UNAVAILABLE', false],
  ['reset', 'UPSTREAM_UNAVAILABLE', true],
  // A 2xx was billed whatever its body: UPSTREAM_ERROR, retryable where asking again can help.
  ['notJson', 'UPSTREAM_ERROR', true],
  ['truncated', 'UPSTREAM_ERROR', true],
  ['oversized', 'UPSTREAM_ERROR', false],
  ['badRecord', 'UPSTREAM_ERROR', false],
];

describe('fault matrix: every field a fault touches gets the right code, and the gateway keeps serving', () => {
  for (const [kind, code, retryable] of MATRIX) {
    it(`${kind}: ${code}, retryable ${retryable}`, async () => {
      stack.sandbox.setFaults({ rates: { [kind]: 1 } });
      const lookup = await stack.gql(EjemploDocument, { ruc: '20100123453', numLicencia: 'Q46779354' });
      expect(lookup.status).toBe(200);
      expect(lookup.body.data).toEqual({ contribuyente: null, licencia: null });
      expect(lookup.body.errors?.map((e) => [e.path?.[0], e.extensions?.['code'], e.extensions?.['retryable']]).sort()).toEqual([
        ['contribuyente', code, retryable],
        ['licencia', code, retryable],
      ]);
      const batch = await stack.gql(ValidarComprobantesDocument, { comprobantes: [RECEIPT] });
      expect(batch.body.errors?.[0]?.extensions).toMatchObject({ code, retryable });
      await stillServing();
    });
  }

  it('latency under the time-out only slows answers; over it, UPSTREAM_UNAVAILABLE', async () => {
    stack.sandbox.setFaults({ latencyMs: 50 });
    const slowButFine = await stack.gql(EjemploDocument, { ruc: '20100123453', numLicencia: 'Q46779354' });
    expect(slowButFine.body.errors).toBeUndefined();
    // Well past the time-out, so that a busy machine cannot blur the two.
    const hurried = await startStack({ sharedSandbox: stack.sandbox, env: { UPSTREAM_RETRIES: '0', UPSTREAM_TIMEOUT_MS: '300' } });
    try {
      stack.sandbox.setFaults({ latencyMs: 1500 });
      const late = await hurried.gql(EjemploDocument, { ruc: '20100123453', numLicencia: 'Q46779354' });
      expect(late.body.errors?.map((e) => e.extensions?.['code'])).toEqual(['UPSTREAM_UNAVAILABLE', 'UPSTREAM_UNAVAILABLE']);
    } finally {
      await hurried.close();
    }
    await stillServing();
  });

  it('an error rate fails some fields and not others, each failure typed', async () => {
    stack.sandbox.setFaults({ rates: { unavailable: 0.5 } });
    const rucs = ['20100123453', '20501234568', '20602345671', '20603456786', '20484567892', '20555678909', '20136789016', '20457890126'];
    let ok = 0;
    let failed = 0;
    for (let i = 0; i < 5; i++) {
      const { body } = await stack.gql(ContribuyentesDocument, { rucs });
      ok += body.data!.contribuyentes.filter(Boolean).length;
      failed += body.errors?.length ?? 0;
      for (const e of body.errors ?? []) expect(e.extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });
    }
    expect(ok + failed).toBe(40);
    expect(ok).toBeGreaterThan(0);
    expect(failed).toBeGreaterThan(0);
    await stillServing();
  });
});
