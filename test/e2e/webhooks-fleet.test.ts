import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { DAY1, DAY2, FLAGS1, FLAGS2, ruc } from '../fixtures/changes.js';
import { startReceiver, until, type Receiver } from '../fixtures/receiver.js';
import { mirrorOf } from '../fixtures/register.js';
import { signalGroup } from '../processes.js';
import { post, spawnGateway, startRedis, startStack, TOKEN, type RedisServer, type SpawnedGateway, type Stack } from '../helpers.js';

/**
 * A fleet: gateways sharing a real redis-server, each with its own PADRON_DIR over the same
 * loopback mirror. Each imports the next day and makes its messages; the receiver gets each
 * message once. Then gateways started as `npm start` does, one killed with a message pending:
 * the next delivers it, with the same webhook-id.
 */
const CREATE = `mutation($url: String!, $rucs: [String!]!) { crearSuscripcion(url: $url, rucs: $rucs) { secreto suscripcion { id } } }`;
type Created = { secreto: string; suscripcion: { id: string } };

let sandbox: Sandbox;
let redis: RedisServer;
let receiver: Receiver;
const dirs: string[] = [];
const dir = () => {
  const made = mkdtempSync(join(tmpdir(), 'webhooks-fleet-'));
  dirs.push(made);
  return made;
};
let failing = true;

beforeAll(async () => {
  sandbox = await startSandbox();
  redis = await startRedis();
  receiver = await startReceiver((path) => (path === '/pending' && failing ? 503 : 200));
});
afterAll(async () => {
  await receiver?.close();
  await redis?.stop();
  await sandbox?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const ready = (url: string) =>
  until(
    async () => ((await (await fetch(`${url}/health`)).json()) as { padron?: { state: string } }).padron?.state === 'ready',
    `${url} ready`,
    45_000,
  );

describe('two instances sharing REDIS_URL', () => {
  let a: Stack;
  let b: Stack;
  let mirror: Awaited<ReturnType<typeof mirrorOf>>;
  let sub: Created;

  beforeAll(async () => {
    mirror = await mirrorOf(DAY1, FLAGS1);
    const env = () => ({
      PADRON: mirror.url,
      PADRON_DIR: dir(),
      PADRON_REFRESH_MS: '1000',
      REDIS_URL: redis.url,
      CACHE_KEY_SECRET: 'a-secret-shared-by-the-fleet',
      WEBHOOK_PRIVATE_NETWORKS: 'allow',
    });
    [a, b] = await Promise.all([startStack({ sharedSandbox: sandbox, env: env() }), startStack({ sharedSandbox: sandbox, env: env() })]);
    await Promise.all([ready(a.url), ready(b.url)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    mirror?.server.close();
  });

  it('share the subscriptions: made on one, listed and changed on the other', async () => {
    const created = await a.gql(CREATE, { url: `${receiver.url}/fleet`, rucs: [ruc(5), ruc(9)] });
    expect(created.body.errors).toBeUndefined();
    sub = (created.body.data as { crearSuscripcion: Created }).crearSuscripcion;
    const listed = await b.gql('{ suscripciones { id rucs } }');
    expect(listed.body.data).toEqual({ suscripciones: [{ id: sub.suscripcion.id, rucs: [ruc(5), ruc(9)] }] });
    const changed = await b.gql(`mutation($id: ID!) { cambiarSuscripcion(id: $id, agregar: ["${ruc(8)}"]) { rucs } }`, {
      id: sub.suscripcion.id,
    });
    expect(changed.body.errors).toBeUndefined();
  });

  it('deliver each message once between them, though both import the day and make it', async () => {
    await mirror.set(DAY2, FLAGS2);
    const made = (s: Stack) => s.logs.some((l) => l.includes('webhooks: messages made') && l.includes('"messages":1'));
    await until(() => made(a) && made(b), 'both instances made the day’s message', 30_000);
    await until(() => receiver.to('/fleet').length > 0, 'a delivery');
    // Both made the message before it went out; once the queue holds no job of it (none waiting, put off or under way),
    // no instance has a delivery left to make: what the receiver holds then is all it will ever get.
    const queue = new Queue('entregas', { connection: { url: redis.url }, prefix: '{wh}' });
    try {
      await until(
        async () =>
          Object.values(await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children')).every((n) => n === 0),
        'the queue holding no job',
        30_000,
      );
    } finally {
      await queue.close();
    }
    const taken = receiver.to('/fleet');
    expect(taken).toHaveLength(1);
    const event = new Webhook(sub.secreto).verify(taken[0]!.body, taken[0]!.headers) as { data: { cambios: { ruc: string }[] } };
    expect(event.data.cambios.map((c) => c.ruc)).toEqual([ruc(5), ruc(8), ruc(8), ruc(9)]);
    for (const s of [a, b]) {
      await until(async () => {
        const body = (await s.gql('{ suscripciones { ultimaEntrega { estado webhookId } } }')).body.data as {
          suscripciones: { ultimaEntrega: { estado: string; webhookId: string } | null }[];
        };
        return (
          body.suscripciones[0]?.ultimaEntrega?.estado === 'ENTREGADA' &&
          body.suscripciones[0].ultimaEntrega.webhookId === taken[0]!.headers['webhook-id']
        );
      }, 'ultimaEntrega on both');
    }
  });
});

describe('Redis away', () => {
  it('answers the subscriptions REGISTER_UNAVAILABLE, retryable, serves the rest, and takes them again once it is back', async () => {
    const mirror = await mirrorOf(DAY1, FLAGS1);
    const stack = await startStack({
      sharedSandbox: sandbox,
      env: { REDIS_URL: redis.url, PADRON: mirror.url, PADRON_DIR: dir(), WEBHOOK_PRIVATE_NETWORKS: 'allow' },
    });
    try {
      await redis.stop();
      const refused = (await stack.gql('{ suscripciones { id } }')).body;
      expect(refused.errors?.map((e) => e.extensions)).toEqual([{ code: 'REGISTER_UNAVAILABLE', retryable: true }]);
      expect(JSON.stringify(refused)).not.toContain('ECONNREFUSED');
      expect((await stack.gql('{ __typename }')).body).toEqual(expect.objectContaining({ data: { __typename: 'Query' } }));
      await redis.start();
      await until(async () => (await stack.gql('{ suscripciones { id } }')).body.errors === undefined, 'the subscriptions back with Redis');
    } finally {
      await stack.close();
      mirror.server.close();
    }
  }, 60_000);
});

describe('a gateway killed with a message pending', () => {
  let first: SpawnedGateway | undefined;
  let second: SpawnedGateway | undefined;
  afterAll(async () => {
    for (const g of [first, second]) if (g && g.child.exitCode === null) signalGroup(g.child, 'SIGKILL');
  });

  it('loses it not: the next instance on the same Redis delivers it, with the same webhook-id', async () => {
    const mirror = await mirrorOf(DAY1, FLAGS1);
    try {
      const env = {
        UPSTREAM_URL: sandbox.url,
        PADRON: mirror.url,
        PADRON_REFRESH_MS: '1000',
        REDIS_URL: redis.url,
        CACHE_KEY_SECRET: 'a-secret-shared-by-the-fleet',
        WEBHOOK_PRIVATE_NETWORKS: 'allow',
        WEBHOOK_RETRY_FIRST_MS: '3000',
      };
      first = await spawnGateway({ ...env, PADRON_DIR: dir() });
      const base = first.url.replace(/\/graphql$/, '');
      await ready(base);
      const created = (await (
        await post(first.url, { query: CREATE, variables: { url: `${receiver.url}/pending`, rucs: [ruc(3)] } })
      ).json()) as { data: { crearSuscripcion: Created } };
      const { secreto } = created.data.crearSuscripcion;
      await mirror.set(DAY2, FLAGS2);
      await until(() => receiver.to('/pending').length === 1, 'the first, failed attempt', 30_000);
      // Killed between attempts, its message waiting in Redis for its retry (killed mid-attempt, another takes the job once its lock lapses).
      const queue = new Queue('entregas', { connection: { url: redis.url }, prefix: '{wh}' });
      try {
        const id = receiver.to('/pending')[0]!.headers['webhook-id']!;
        await until(async () => (await queue.getJobState(id)) === 'delayed', 'the message put off to its retry');
      } finally {
        await queue.close();
      }
      signalGroup(first.child, 'SIGKILL');
      await first.exited;
      failing = false;
      // A new instance with a directory of its own: its first register is its baseline, so the message can only come from Redis.
      second = await spawnGateway({ ...env, PADRON_DIR: dir() });
      await until(() => receiver.to('/pending').length === 2, 'the pending message delivered by the next instance', 30_000);
      const [failed, delivered] = receiver.to('/pending');
      expect(delivered!.headers['webhook-id']).toBe(failed!.headers['webhook-id']);
      expect(delivered!.body).toBe(failed!.body);
      expect(new Webhook(secreto).verify(delivered!.body, delivered!.headers)).toMatchObject({
        data: { cambios: [{ ruc: ruc(3), tipo: 'NOMBRE' }] },
      });
      const output = first.output() + second.output();
      expect(output).not.toContain(secreto.slice(6));
      expect(output).not.toContain(TOKEN);
      await second.stop();
    } finally {
      mirror.server.close();
    }
  }, 120_000);
});
