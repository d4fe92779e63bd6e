import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { DAY1, DAY2, FLAGS1, FLAGS2, ruc } from '../fixtures/changes.js';
import { startReceiver, until, type Receiver } from '../fixtures/receiver.js';
import { mirrorOf } from '../fixtures/register.js';
import { signalGroup } from '../processes.js';
import { post, spawnGateway, type SpawnedGateway } from '../helpers.js';

/**
 * One gateway without Redis, started as `npm start` does: killed (SIGKILL, no goodbye) while its
 * receiver fails, then started again on the same PADRON_DIR. Its subscription and the pending
 * message were on disk: the message is delivered, same webhook-id, same body.
 */
const CREATE = `mutation($url: String!, $rucs: [String!]!) { crearSuscripcion(url: $url, rucs: $rucs) { secreto suscripcion { id } } }`;

let sandbox: Sandbox;
let receiver: Receiver;
let dir: string;
let failing = true;
const gateways: SpawnedGateway[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
  receiver = await startReceiver(() => (failing ? 500 : 200));
  dir = mkdtempSync(join(tmpdir(), 'webhooks-restart-'));
});
afterAll(async () => {
  for (const g of gateways) if (g.child.exitCode === null && g.child.signalCode === null) signalGroup(g.child, 'SIGKILL');
  await receiver?.close();
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a gateway without REDIS_URL killed with a message pending', () => {
  it('delivers it once started again on the same PADRON_DIR, with the same webhook-id', async () => {
    const mirror = await mirrorOf(DAY1, FLAGS1);
    try {
      const env = {
        UPSTREAM_URL: sandbox.url,
        PADRON: mirror.url,
        PADRON_DIR: dir,
        PADRON_REFRESH_MS: '1000',
        WEBHOOK_PRIVATE_NETWORKS: 'allow',
        WEBHOOK_RETRY_FIRST_MS: '2000',
      };
      const first = await spawnGateway(env);
      gateways.push(first);
      const health = async (g: SpawnedGateway) =>
        ((await (await fetch(g.url.replace(/\/graphql$/, '/health'))).json()) as { padron: { state: string } }).padron.state;
      await until(async () => (await health(first)) === 'ready', 'ready', 45_000);
      const created = (await (
        await post(first.url, { query: CREATE, variables: { url: `${receiver.url}/hook`, rucs: [ruc(4), ruc(6)] } })
      ).json()) as {
        data: { crearSuscripcion: { secreto: string; suscripcion: { id: string } } };
      };
      const { secreto, suscripcion } = created.data.crearSuscripcion;
      await mirror.set(DAY2, FLAGS2);
      await until(() => receiver.taken.length === 1, 'the first, failed attempt', 30_000);
      signalGroup(first.child, 'SIGKILL');
      await first.exited;
      failing = false;
      // Another CACHE_KEY_SECRET: the subscriptions' owners are keyed apart from the cache's, and are found all the same.
      const second = await spawnGateway({ ...env, CACHE_KEY_SECRET: 'another-secret-for-the-cache' });
      gateways.push(second);
      await until(() => receiver.taken.length === 2, 'the pending message delivered after the restart', 30_000);
      const [failed, delivered] = receiver.taken;
      expect(delivered!.headers['webhook-id']).toBe(failed!.headers['webhook-id']);
      expect(delivered!.body).toBe(failed!.body);
      const event = new Webhook(secreto).verify(delivered!.body, delivered!.headers) as {
        data: { suscripcion: string; cambios: { ruc: string; tipo: string }[] };
      };
      expect(event.data.suscripcion).toBe(suscripcion.id);
      expect(event.data.cambios.map((c) => [c.ruc, c.tipo])).toEqual([
        [ruc(4), 'ESTADO'],
        [ruc(6), 'DIRECCION'],
      ]);
      // The subscription outlived the kill too, and says how its message went.
      const listed = (await (await post(second.url, { query: '{ suscripciones { id ultimaEntrega { estado intentos } } }' })).json()) as {
        data: unknown;
      };
      await until(async () => {
        const now = (await (await post(second.url, { query: '{ suscripciones { id ultimaEntrega { estado intentos } } }' })).json()) as {
          data: { suscripciones: { ultimaEntrega: { estado: string } | null }[] };
        };
        return now.data.suscripciones[0]?.ultimaEntrega?.estado === 'ENTREGADA';
      }, 'ENTREGADA');
      expect(listed.data).toMatchObject({ suscripciones: [{ id: suscripcion.id }] });
      // Nothing more: the restart made no second message of the same day.
      await new Promise((r) => setTimeout(r, 1_500));
      expect(receiver.taken).toHaveLength(2);
      expect(first.output() + second.output()).not.toContain(secreto.slice(6));
      await second.stop();
    } finally {
      mirror.server.close();
    }
  }, 120_000);
});
