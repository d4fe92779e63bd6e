import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ContribuyenteDocument, LicenciaDocument } from '../../operations/generated/graphql.js';
import { TRIGGERS } from '../../src/sandbox/data.js';
import type { FaultKind } from '../../src/sandbox/server.js';
import { startStack, type Stack } from '../helpers.js';

const cost = (body: { extensions?: Record<string, unknown> }) => body.extensions?.['cost'] as Record<string, number>;

let stack: Stack;
beforeAll(async () => {
  // The default retries (2) and the cache on: neither may make a billed answer cost twice.
  stack = await startStack({ env: { CACHE: 'on', UPSTREAM_TIMEOUT_MS: '1000' } });
});
afterAll(() => stack.close());
afterEach(() => {
  stack.sandbox.setFaults({});
  stack.sandbox.reset();
});

/** One lookup of `ruc`: its one error, the calls the sandbox saw and what the caller was told it spent. */
async function lookupOnce(ruc: string) {
  const quotaBefore = stack.sandbox.quotaOf('sandbox-pro')!;
  const { body } = await stack.gql(ContribuyenteDocument, { ruc });
  expect(body.errors).toHaveLength(1);
  return {
    code: body.errors![0]!.extensions?.['code'],
    retryable: body.errors![0]!.extensions?.['retryable'],
    calls: stack.sandbox.callsTo('/ruc').length,
    billed: quotaBefore - stack.sandbox.quotaOf('sandbox-pro')!,
    cost: cost(body),
  };
}

describe('a billed answer is never asked for again', () => {
  const triggers: [keyof typeof TRIGGERS, boolean][] = [
    ['brokenBody', true],
    ['noContent', true],
    ['badRecord', false],
    ['otherDocument', false],
  ];
  for (const [trigger, retryable] of triggers) {
    it(`a 2xx ${trigger} is one call, one query, UPSTREAM_ERROR with retryable ${retryable}`, async () => {
      const seen = await lookupOnce(TRIGGERS[trigger].ruc);
      expect(seen).toMatchObject({ code: 'UPSTREAM_ERROR', retryable, calls: 1, billed: 1 });
      expect(seen.cost).toMatchObject({ queries: 1, upstreamCalls: 1, cacheHits: 0, staleHits: 0 });
    });
  }

  const faults: [FaultKind, boolean][] = [
    ['notJson', true],
    ['truncated', true],
    ['oversized', false],
    ['badRecord', false],
  ];
  for (const [fault, retryable] of faults) {
    it(`a 2xx ${fault} body (injected) is one call, one query, UPSTREAM_ERROR with retryable ${retryable}`, async () => {
      stack.sandbox.setFaults({ rates: { [fault]: 1 } });
      const seen = await lookupOnce('20100123453');
      expect(seen).toMatchObject({ code: 'UPSTREAM_ERROR', retryable, calls: 1, billed: 1 });
      expect(seen.cost).toMatchObject({ queries: 1, upstreamCalls: 1 });
    });
  }

  it('a 3xx is not followed nor retried: UPSTREAM_ERROR, not retryable', async () => {
    const seen = await lookupOnce(TRIGGERS.redirect.ruc);
    expect(seen).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: false, calls: 1, billed: 0 });
    expect(seen.cost).toMatchObject({ queries: 0, upstreamCalls: 1 });
  });

  it("another document's record is never shown nor cached: asked again, it is called again", async () => {
    const { body } = await stack.gql(LicenciaDocument, { numLicencia: TRIGGERS.otherDocument.licencia });
    expect(body.data).toEqual({ licencia: null });
    expect(JSON.stringify(body)).not.toContain('ROSA');
    await stack.gql(LicenciaDocument, { numLicencia: TRIGGERS.otherDocument.licencia });
    expect(stack.sandbox.callsTo('/licencia-conducir')).toHaveLength(2);
  });

  it('a 503 is still retried (nothing was billed)', async () => {
    const seen = await lookupOnce(TRIGGERS.unavailable.ruc);
    expect(seen).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true, calls: 3, billed: 0 });
  });
});

describe('a body cut short after a 2xx status', () => {
  let server: Server;
  let cut: Stack;
  let calls = 0;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      calls++;
      // A 200 and half a body, then the connection dies.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"success":true,"code":"found","data":{"ruc":"2010');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cut = await startStack({ env: { UPSTREAM_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}` } });
  });
  afterAll(async () => {
    await cut.close();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('is one call and UPSTREAM_ERROR, retryable: the caller decides whether to pay again', async () => {
    const { body } = await cut.gql(ContribuyenteDocument, { ruc: '20100123453' });
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
    expect(calls).toBe(1);
    expect(cost(body)).toMatchObject({ queries: 1, upstreamCalls: 1 });
  });
});
