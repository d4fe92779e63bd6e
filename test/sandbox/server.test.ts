import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LICENCES, TAXPAYERS } from '../../src/sandbox/data.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { RECEIPT_BODY } from '../helpers.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({
    tokens: [
      { token: 'pro', plan: 'pro', quota: 1000 },
      { token: 'free', plan: 'free', quota: 100 },
      { token: 'two', plan: 'pro', quota: 2 },
    ],
  });
});
afterAll(() => sandbox.close());
beforeEach(() => sandbox.reset());

async function post(path: string, body: unknown, token?: string) {
  const res = await fetch(sandbox.url + path, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('the sandbox follows rest-api.md', () => {
  it('has at least a dozen taxpayers, companies and natural persons, and several licences', () => {
    expect(TAXPAYERS.length).toBeGreaterThanOrEqual(12);
    expect(TAXPAYERS.some((t) => t.ruc.startsWith('20'))).toBe(true);
    expect(TAXPAYERS.some((t) => t.ruc.startsWith('10'))).toBe(true);
    expect(LICENCES.length).toBeGreaterThanOrEqual(3);
  });

  it('answers with the success envelope', async () => {
    const { status, json } = await post('/ruc', { ruc: '20100123453' }, 'pro');
    expect(status).toBe(200);
    expect(json).toMatchObject({ success: true, code: 'found', data: { ruc: '20100123453' } });
    expect(typeof json['time']).toBe('number');
  });

  it('answers 401 without a token and for an unknown one', async () => {
    expect((await post('/ruc', { ruc: '20100123453' })).status).toBe(401);
    expect((await post('/ruc', { ruc: '20100123453' }, 'nope')).json).toMatchObject({ success: false, retryable: false });
  });

  it('answers 400 invalid_input for a bad RUC and a missing num_licencia, with the spec messages', async () => {
    expect((await post('/ruc', { ruc: '1' }, 'pro')).json).toMatchObject({ code: 'invalid_input', message: 'El RUC es incorrecto' });
    expect((await post('/licencia-conducir', {}, 'pro')).json).toMatchObject({
      code: 'invalid_input',
      message: 'El parámetro num_licencia es requerido',
    });
  });

  it('refuses the licence lookup on the free plan with 403', async () => {
    expect((await post('/licencia-conducir', { num_licencia: 'Q46779354' }, 'free')).status).toBe(403);
  });

  it('refuses more than 100 receipts with the spec message', async () => {
    const { status, json } = await post(
      '/validacion-multiple-cpe',
      { comprobantes: Array.from({ length: 101 }, () => RECEIPT_BODY) },
      'pro',
    );
    expect(status).toBe(400);
    expect(json['message']).toBe('Enviar máximo 100 comprobantes por consulta.');
  });

  it('keeps a quota per token: a batch larger than what is left is 429 naming both numbers, and costs nothing', async () => {
    const { status, json } = await post('/validacion-multiple-cpe', { comprobantes: [RECEIPT_BODY, RECEIPT_BODY, RECEIPT_BODY] }, 'two');
    expect(status).toBe(429);
    expect(json).toMatchObject({ code: 'quota_exceeded', retryable: false });
    expect(json['message']).toMatch(/2.*3/);
    expect(sandbox.quotaOf('two')).toBe(2);
    await post('/licencia-conducir', { num_licencia: 'Q46779354' }, 'two');
    expect(sandbox.quotaOf('two')).toBe(0);
    expect((await post('/ruc', { ruc: '20100123453' }, 'two')).status).toBe(429);
  });

  it('serves the legacy /api prefix and records every call', async () => {
    await post('/api/ruc-sunat', { ruc: '20100123453' }, 'pro');
    expect(sandbox.callsTo('/ruc-sunat')).toHaveLength(1);
    expect(sandbox.calls[0]).toMatchObject({ method: 'POST', path: '/api/ruc-sunat', body: { ruc: '20100123453' }, status: 200 });
  });
});

describe('the call record', () => {
  it('keeps the last maxRecorded calls, and counts them all', async () => {
    const short = await startSandbox({ maxRecorded: 5 });
    try {
      for (let i = 0; i < 8; i++) {
        await fetch(`${short.url}/ruc`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer sandbox-pro' },
          body: JSON.stringify({ ruc: TAXPAYERS[i]!.ruc }),
        });
      }
      expect(short.calls.map((c) => (c.body as { ruc: string }).ruc)).toEqual(TAXPAYERS.slice(3, 8).map((t) => t.ruc));
      expect(short.callCount).toBe(8);
    } finally {
      await short.close();
    }
  });
});
