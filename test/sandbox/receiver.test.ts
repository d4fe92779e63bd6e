import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import type { Received } from '../../src/sandbox/receiver.js';

/** The sandbox's webhook receiver: it keeps what it gets, answers what `?estado=` asks, and keeps no credential. */
let sandbox: Sandbox;
const told: Received[] = [];
beforeAll(async () => {
  sandbox = await startSandbox({ onDelivery: (d) => told.push(d) });
});
afterAll(() => sandbox.close());

describe('the sandbox’s receiver', () => {
  it('takes a delivery, answers 200 or the status asked for, and lists what it took', async () => {
    const send = (path: string) =>
      fetch(`${sandbox.url}/__sandbox/webhooks/${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': 'msg_1',
          'webhook-timestamp': '1',
          'webhook-signature': 'v1,x',
          authorization: 'Basic c2VjcmV0bw==',
        },
        body: '{"type":"padron.cambios"}',
      });
    expect((await send('recibir')).status).toBe(200);
    expect((await send('recibir?estado=503')).status).toBe(503);
    const listed = (await (await fetch(`${sandbox.url}/__sandbox/webhooks`)).json()) as Received[];
    expect(listed.map((d) => [d.path, d.status, d.headers['webhook-id'], d.body])).toEqual([
      ['/__sandbox/webhooks/recibir', 200, 'msg_1', '{"type":"padron.cambios"}'],
      ['/__sandbox/webhooks/recibir?estado=503', 503, 'msg_1', '{"type":"padron.cambios"}'],
    ]);
    expect(JSON.stringify(listed)).not.toContain('c2VjcmV0bw');
    expect(listed[0]!.headers.authorization).toBe('***');
    expect(told).toHaveLength(2);
    expect(sandbox.deliveries).toHaveLength(2);
  });

  it('publishes its register’s second day on POST /__sandbox/padron/siguiente-dia, dated later', async () => {
    const before = await fetch(`${sandbox.url}/__sandbox/padron/padron_reducido_ruc.zip`);
    const answer = (await (await fetch(`${sandbox.url}/__sandbox/padron/siguiente-dia`, { method: 'POST' })).json()) as {
      publicadoEn: string;
      cambios: Record<string, string>;
    };
    const after = await fetch(`${sandbox.url}/__sandbox/padron/padron_reducido_ruc.zip`);
    expect(Date.parse(after.headers.get('last-modified')!)).toBeGreaterThan(Date.parse(before.headers.get('last-modified')!));
    expect(Date.parse(answer.publicadoEn)).toBe(Date.parse(after.headers.get('last-modified')!));
    expect(answer.cambios).toEqual({
      CONDICION: '20100123453',
      AGENTE_DE_RETENCION: '20100123453',
      DIRECCION: '20611111119',
      SALIDA: '20633333336',
      ALTA: '20699999998',
    });
    expect(Buffer.from(await after.arrayBuffer()).equals(Buffer.from(await before.arrayBuffer()))).toBe(false);
  });
});
