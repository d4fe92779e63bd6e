import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { Deliverer } from '../../src/webhooks/attempt.js';
import { messagesOf } from '../../src/webhooks/messages.js';
import { startReceiver, type Receiver } from '../fixtures/receiver.js';

/** One attempt against a receiver on loopback: signed, bounded, and refused where the rule forbids, as it connects. */
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const [message] = messagesOf('sus_AAAAAAAAAAAAAAAAAAAAAA', '2026-11-28', [
  { ruc: '20100123453', tipo: 'CONDICION', antes: 'HABIDO', despues: 'NO HABIDO' },
]);
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver((path) => (path === '/redirect' ? 302 : path === '/hang' ? 'hang' : path === '/big' ? 299 : 200));
});
afterAll(() => receiver.close());

describe('Deliverer', () => {
  it('POSTs the body signed as Standard Webhooks', async () => {
    const deliverer = new Deliverer('allow', 2_000);
    expect(await deliverer.send(message!, `${receiver.url}/ok`, SECRET)).toEqual({ outcome: 'delivered', status: 200 });
    const [taken] = receiver.to('/ok');
    expect(new Webhook(SECRET).verify(taken!.body, taken!.headers)).toEqual(JSON.parse(message!.body));
    await deliverer.close();
  });

  it('refuses, as it connects, a name that resolves to loopback under deny, and sends nothing', async () => {
    const deliverer = new Deliverer('deny', 2_000);
    const before = receiver.taken.length;
    const port = new URL(receiver.url).port;
    expect(await deliverer.send(message!, `https://localhost:${port}/x`, SECRET)).toMatchObject({
      outcome: 'retry',
      status: null,
      error: 'EADDRNOTALLOWED',
    });
    expect(await deliverer.send(message!, `https://127.0.0.1:${port}/x`, SECRET)).toMatchObject({ outcome: 'retry', status: null });
    // Plain http in the sandbox reaches loopback only.
    expect(await new Deliverer('loopback', 2_000).send(message!, `http://localhost:${port}/x`, SECRET)).toMatchObject({
      outcome: 'delivered',
    });
    expect(receiver.taken.length).toBe(before + 1);
    await deliverer.close();
  });

  it('does not follow a redirect, bounds what it reads of the answer, and gives up on one that never comes', async () => {
    const deliverer = new Deliverer('allow', 500);
    expect(await deliverer.send(message!, `${receiver.url}/redirect`, SECRET)).toEqual({ outcome: 'retry', status: 302 });
    expect(await deliverer.send(message!, `${receiver.url}/big`, SECRET)).toEqual({ outcome: 'delivered', status: 299 });
    const started = Date.now();
    expect(await deliverer.send(message!, `${receiver.url}/hang`, SECRET)).toEqual({ outcome: 'retry', status: null, error: 'timed out' });
    expect(Date.now() - started).toBeLessThan(2_000);
    await deliverer.close();
  });
});
