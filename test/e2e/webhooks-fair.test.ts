import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { DAY1, DAY2, FLAGS1, FLAGS2, ruc } from '../fixtures/changes.js';
import { startReceiver, until, type Receiver } from '../fixtures/receiver.js';
import { mirrorOf } from '../fixtures/register.js';
import { startRedis, startStack, type RedisServer, type Stack } from '../helpers.js';

/**
 * Deliveries shared fairly between callers (issue 52): twenty signed-in subjects, ten subscriptions
 * each to a receiver that never answers, and one honest subscriber. Every subscription watches the
 * RUC that changes, so the day makes 201 messages at once; the honest one's first attempt must not
 * wait behind the others' hanging ones.
 */

const HOSTILE = 20;
const EACH = 10;
const TIMEOUT_MS = 2_000;
const CREATE = 'mutation($url: String!, $rucs: [String!]!) { crearSuscripcion(url: $url, rucs: $rucs) { suscripcion { id } } }';

describe.each([
  ['one instance', false],
  ['a fleet (REDIS_URL, BullMQ)', true],
])('deliveries between callers, %s', (_name, fleet) => {
  let sandbox: Sandbox;
  let dir: string;
  let receiver: Receiver;
  let mirror: Awaited<ReturnType<typeof mirrorOf>>;
  let stack: Stack;
  let redis: RedisServer | undefined;

  beforeAll(async () => {
    sandbox = await startSandbox();
    dir = mkdtempSync(join(tmpdir(), 'webhooks-fair-'));
    receiver = await startReceiver((path) => (path.startsWith('/hang') ? 'hang' : 204));
    mirror = await mirrorOf(DAY1, FLAGS1);
    redis = fleet ? await startRedis() : undefined;
    stack = await startStack({
      sharedSandbox: sandbox,
      env: {
        PADRON: mirror.url,
        PADRON_DIR: dir,
        PADRON_REFRESH_MS: '1000',
        WEBHOOK_PRIVATE_NETWORKS: 'allow',
        WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
        AUTH_JWKS_URL: sandbox.jwksUrl,
        UPSTREAM_TOKEN: 'sandbox-pro',
        ...(redis ? { REDIS_URL: redis.url, CACHE_KEY_SECRET: 'a-secret-shared-by-the-fleet' } : {}),
      },
    });
    await until(
      async () => ((await (await fetch(`${stack.url}/health`)).json()) as { padron: { state: string } }).padron.state === 'ready',
      'the register ready',
      30_000,
    );
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
    mirror?.server.close();
    await sandbox?.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('give an honest subscriber its first attempt within one time-out, whatever others’ hanging receivers hold', async () => {
    const watched = [ruc(1), ruc(2), ruc(3), ruc(4), ruc(5), ruc(6), ruc(7), ruc(8), ruc(9)];
    for (let s = 0; s < HOSTILE; s++) {
      const token = await sandbox.signIn(`hostile-${s}`);
      for (let i = 0; i < EACH; i++) {
        const { body } = await stack.gql(CREATE, { url: `${receiver.url}/hang/${s}/${i}`, rucs: watched }, { token });
        expect(body.errors).toBeUndefined();
      }
    }
    const honest = await sandbox.signIn('honest');
    expect((await stack.gql(CREATE, { url: `${receiver.url}/honest`, rucs: watched }, { token: honest })).body.errors).toBeUndefined();
    await mirror.set(DAY2, FLAGS2);
    // The day's messages are made when the first attempts begin: the hostile ones' arrive first.
    await until(() => receiver.taken.some((t) => t.path.startsWith('/hang')), 'the first attempts', 30_000);
    const firstHostile = Math.min(...receiver.taken.filter((t) => t.path.startsWith('/hang')).map((t) => t.atMs));
    await until(() => receiver.to('/honest').length > 0, 'the honest first attempt', 60_000);
    // At worst one hanging attempt's time-out (the places may all be taken when its message is made; the first freed is
    // its), and a busy machine's second, never behind the 200 hanging ones, 32 at a time, TIMEOUT_MS each (12.5 s and more).
    expect(receiver.to('/honest')[0]!.atMs - firstHostile).toBeLessThan(2 * TIMEOUT_MS + 1_000);
  }, 120_000);
});
