import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ContribuyentesDocument, MismoRucDeVariasFormasDocument } from '../../operations/generated/graphql.js';
import { TAXPAYERS } from '../../src/sandbox/data.js';
import { startStack, type Stack } from '../helpers.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());
beforeEach(() => stack.sandbox.reset());

const bodies = (path: string) => stack.sandbox.callsTo(path).map((c) => c.body);

describe('each distinct key reaches the upstream once per operation', () => {
  it('aliases, fragments, list repeats and detalle next to contribuyenteDetalle: one /ruc and one /ruc-sunat', async () => {
    const { body } = await stack.gql(MismoRucDeVariasFormasDocument, { ruc: '20100123453' });
    expect(body.errors).toBeUndefined();
    expect(body.data?.contribuyentes).toHaveLength(3);
    expect(body.data?.segundo?.detalle?.ruc).toBe('20100123453');
    expect(bodies('/ruc')).toEqual([{ ruc: '20100123453' }]);
    expect(bodies('/ruc-sunat')).toEqual([{ ruc: '20100123453' }]);
    expect(stack.sandbox.calls).toHaveLength(2);
  });

  it('keys are trimmed before they are compared', async () => {
    await stack.gql(`{ a: contribuyente(ruc: " 20100123453") { ruc } b: contribuyente(ruc: "20100123453 ") { ruc }
      c: licencia(numLicencia: "Q46779354") { nombres } d: licencia(numLicencia: " Q46779354 ") { nombres } }`);
    expect(bodies('/ruc')).toEqual([{ ruc: '20100123453' }]);
    expect(bodies('/licencia-conducir')).toEqual([{ num_licencia: 'Q46779354' }]);
  });

  it('licence numbers that differ only in case are one key: one call, in capitals, and estimated once', async () => {
    const { body } = await stack.gql(
      `{ a: licencia(numLicencia: "Q46779354") { nombres } b: licencia(numLicencia: "q46779354") { nombres } }`,
    );
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({ a: { nombres: 'ROSA ELENA' }, b: { nombres: 'ROSA ELENA' } });
    expect(bodies('/licencia-conducir')).toEqual([{ num_licencia: 'Q46779354' }]);
    expect(body.extensions?.['cost']).toMatchObject({ estimated: 2, queries: 2, upstreamCalls: 1 });
  });

  it('repeats inside contribuyentes(rucs) cost one call per distinct RUC', async () => {
    const rucs = ['20100123453', '10467793549', '20100123453', '10467793549', '20100123453'];
    const { body } = await stack.gql(ContribuyentesDocument, { rucs });
    expect(body.data?.contribuyentes.map((c) => c?.ruc)).toEqual(rucs);
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(2);
  });

  it('a failing key is asked once, however often it appears', async () => {
    await stack.gql(`{ a: contribuyente(ruc: "20999999990") { ruc } b: contribuyente(ruc: "20999999990") { ruc } }`);
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(1);
  });

  it('loaders do not outlive the request: the next operation asks again', async () => {
    await stack.gql(`{ contribuyente(ruc: "20100123453") { ruc } }`);
    await stack.gql(`{ contribuyente(ruc: "20100123453") { ruc } }`);
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(2);
  });
});

describe('bounded concurrency', () => {
  let slow: Stack;
  beforeAll(async () => {
    slow = await startStack({ sandbox: { latencyMs: 60 }, env: { UPSTREAM_CONCURRENCY: '3' } });
  });
  afterAll(() => slow.close());

  it('a list of every sample RUC makes one call each, never more than UPSTREAM_CONCURRENCY at once', async () => {
    const rucs = TAXPAYERS.map((t) => t.ruc);
    const { body } = await slow.gql(ContribuyentesDocument, { rucs });
    expect(body.data?.contribuyentes.every((c) => c !== null)).toBe(true);
    expect(slow.sandbox.callsTo('/ruc')).toHaveLength(TAXPAYERS.length);
    expect(slow.sandbox.peakInFlight).toBe(3);
  });
});
