import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContribuyenteDocument } from '../../operations/generated.js';
import { startStack, TOKEN, type Stack } from '../helpers.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ env: { MAX_CONCURRENT_REQUESTS: '3' }, sandbox: { latencyMs: 100 } });
});
afterAll(() => stack.close());

describe('MAX_CONCURRENT_REQUESTS', () => {
  it('handles at most that many requests at once and answers every one of the rest in turn', async () => {
    stack.sandbox.reset();
    const rucs = ['20100123453', '20501234568', '20602345671', '20603456786', '20484567892', '20555678909', '20136789016', '20457890126'];
    const answers = await Promise.all(rucs.map((ruc) => stack.gql(ContribuyenteDocument, { ruc })));
    expect(answers.map((a) => a.body.data?.contribuyente?.ruc)).toEqual(rucs);
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(8);
    expect(stack.sandbox.peakInFlight).toBe(3);
  });

  it('gives no slot to a client that left while waiting', async () => {
    const url = new URL(stack.url);
    // Fill the three slots, queue two more whose clients leave at once.
    const busy = ['20100123453', '20501234568', '20602345671'].map((ruc) => stack.gql(ContribuyenteDocument, { ruc }));
    for (let i = 0; i < 2; i++) {
      const req = request({
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: '/graphql',
        agent: false,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      });
      req.on('error', () => undefined);
      req.end(JSON.stringify({ query: '{ contribuyente(ruc: "20603456786") { ruc } }' }));
      setTimeout(() => req.destroy(), 20);
    }
    await Promise.all(busy);
    await new Promise((r) => setTimeout(r, 50));
    // All three slots are free again: three more run side by side.
    stack.sandbox.reset();
    await Promise.all(['20484567892', '20555678909', '20136789016'].map((ruc) => stack.gql(ContribuyenteDocument, { ruc })));
    expect(stack.sandbox.peakInFlight).toBe(3);
  });
});
