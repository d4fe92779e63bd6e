import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TAXPAYERS } from '../../src/sandbox/data.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import {
  postBodyOnce,
  postOnce,
  spawnGateway,
  startRedis,
  unknownRucs,
  untilReady,
  type RedisServer,
  type SpawnedGateway,
} from '../helpers.js';
import { createHash } from 'node:crypto';
import { startIdentityProvider } from '../idp.js';

/**
 * REDIS_CLUSTER=on over a real Redis Cluster on loopback ports (three primaries, three
 * replicas, Debian's redis-server and redis-cli --cluster create), with three instances
 * started as `npm start` starts them.
 */
const run = promisify(execFile);
const QUERY = 'query($r: String!) { contribuyente(ruc: $r) { ruc } }';

let dir: string;
let nodes: RedisServer[] = [];
let sandbox: Sandbox;
let instances: SpawnedGateway[] = [];

async function clusterInfo(port: number): Promise<string> {
  return (await run('redis-cli', ['-p', String(port), 'cluster', 'info'])).stdout;
}

/** The ports of the cluster's primaries ('master') and replicas ('slave'), as the first live node sees them. */
async function roles(): Promise<Record<'master' | 'slave', number[]>> {
  for (const node of nodes) {
    const listed = await run('redis-cli', ['-p', String(node.port), 'cluster', 'nodes']).catch(() => undefined);
    if (!listed?.stdout.trim()) continue;
    const lines = listed.stdout.split('\n').filter((l) => l.trim() && !l.includes('fail'));
    const of = (role: string) => lines.filter((l) => l.split(' ')[2]!.includes(role)).map((l) => Number(/:(\d+)@/.exec(l)![1]));
    return { master: of('master'), slave: of('slave') };
  }
  throw new Error('no cluster node answers');
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gw-cluster-'));
  nodes = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      startRedis([
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(dir, `nodes-${i}.conf`),
        '--cluster-node-timeout',
        '3000',
        // A replica always stands for election: on a busy machine its link to the primary can look too old to (CI once saw
        // no election at all within 30 s, the cluster left failing).
        '--cluster-replica-validity-factor',
        '0',
        '--dir',
        dir,
      ]),
    ),
  );
  await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '1', '--cluster-yes']);
  const deadline = Date.now() + 20_000;
  while (!(await clusterInfo(nodes[0]!.port)).includes('cluster_state:ok')) {
    if (Date.now() > deadline) throw new Error('the cluster never became ok');
    await new Promise((r) => setTimeout(r, 200));
  }
  sandbox = await startSandbox({ latencyMs: 300 });
  // Reached through a replica: only a cluster client finds where each key lives from there. A
  // replica may be listed as one a moment after the cluster says it is ok, on a busy machine.
  let replica: number | undefined;
  while ((replica = (await roles())['slave'][0]) === undefined) {
    if (Date.now() > deadline) throw new Error('no replica was ever listed');
    await new Promise((r) => setTimeout(r, 200));
  }
  const env = {
    UPSTREAM_URL: sandbox.url,
    REDIS_URL: `redis://127.0.0.1:${replica}`,
    REDIS_CLUSTER: 'on',
    CACHE_KEY_SECRET: 'a-secret-shared-by-every-instance',
  };
  instances = await Promise.all([0, 1, 2].map(() => spawnGateway(env)));
  await untilReady(
    instances.map((g) => g.url),
    deadline + 20_000 - Date.now(),
  );
}, 90_000);

afterAll(async () => {
  await Promise.all(instances.map((g) => g.stop()));
  await sandbox?.close();
  await Promise.all(nodes.map((n) => n.stop()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** What the instances warned of (the store's problems, the store down) since their output's lengths were `from`. */
const troubleSince = (from: number[], gateways: SpawnedGateway[] = instances) =>
  gateways
    .flatMap((g, i) =>
      g
        .output()
        .slice(from[i])
        .split('\n')
        .filter((l) => /"level":[45]0/.test(l)),
    )
    .join('\n');

describe('REDIS_CLUSTER=on, three instances over three primaries and three replicas', () => {
  it('make one upstream call for 100 concurrent identical lookups spread over them, whatever slot the key is in', async () => {
    for (const { ruc } of TAXPAYERS.slice(0, 3)) {
      sandbox.reset();
      const from = instances.map((g) => g.output().length);
      const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => postOnce(instances[i % 3]!.url, QUERY, { r: ruc })));
      for (const a of answers) expect(a.body.data).toEqual({ contribuyente: { ruc } });
      // One call; or, should the store have been in trouble (a node failed over on a machine busy past
      // the cluster's node time-out, a command past 500 ms), at most one per instance, and said so.
      const trouble = troubleSince(from);
      const calls = sandbox.callsTo('/ruc').length;
      if (trouble) expect(calls, trouble).toBeLessThanOrEqual(instances.length);
      else expect(calls).toBe(1);
      // And the answer is kept: asked again anywhere, no call.
      await postOnce(instances[2]!.url, QUERY, { r: ruc });
      expect(sandbox.callsTo('/ruc')).toHaveLength(calls);
    }
  }, 60_000);

  it('find a persisted query registered on one on the others', async () => {
    const query = `query Registered { contribuyente(ruc: "${TAXPAYERS[3]!.ruc}") { ruc } }`;
    const sha256Hash = createHash('sha256').update(query).digest('hex');
    const extensions = { persistedQuery: { version: 1, sha256Hash } };
    const registered = await postBodyOnce(instances[0]!.url, { query, extensions });
    expect(registered.body.errors).toBeUndefined();
    for (const g of instances.slice(1)) {
      const byHash = await postBodyOnce(g.url, { extensions });
      expect(byHash.body.errors).toBeUndefined();
      expect(byHash.body.data).toEqual({ contribuyente: { ruc: TAXPAYERS[3]!.ruc } });
    }
  });

  it('share one budget in sign-in mode: a subject’s budget of 4 serves 4 distinct lookups over two instances, not 8', async () => {
    const idp = await startIdentityProvider();
    const signedIn: SpawnedGateway[] = [];
    try {
      const key = await idp.addKey('EdDSA');
      const env = {
        UPSTREAM_URL: sandbox.url,
        REDIS_URL: `redis://127.0.0.1:${(await roles())['slave'][0]!}`,
        REDIS_CLUSTER: 'on',
        CACHE_KEY_SECRET: 'a-secret-shared-by-every-instance',
        AUTH_JWKS_URL: idp.jwksUrl,
        AUTH_ISSUER: idp.issuer,
        AUTH_AUDIENCE: idp.audience,
        UPSTREAM_TOKEN: 'sandbox-pro',
        BUDGET_QUERIES: '4',
      };
      signedIn.push(...(await Promise.all([0, 1].map(() => spawnGateway(env)))));
      // As a load balancer does: no traffic before /ready (the budgets' shared count connected).
      await untilReady(signedIn.map((g) => g.url));
      const jwt = await idp.sign(key, 'cluster-user');
      const from = signedIn.map((g) => g.output().length);
      const rucs = unknownRucs(8, 76_000_000);
      sandbox.reset();
      const answers = await Promise.all(
        rucs.map((r, i) => postBodyOnce(signedIn[i % 2]!.url, { query: QUERY, variables: { r } }, { token: jwt })),
      );
      const codes = answers.map((a) => a.body.errors?.[0]?.extensions?.['code']);
      const served = codes.filter((c) => c === 'DOCUMENT_NOT_FOUND').length;
      // Four; or, should the store have been in trouble on a busy machine, each instance counts alone
      // (BUDGET_WHEN_STORE_DOWN=local): at most four each, and said so.
      const trouble = troubleSince(from, signedIn);
      if (trouble) expect(served, trouble).toBeLessThanOrEqual(8);
      else expect(served).toBe(4);
      expect(codes.filter((c) => c === 'BUDGET_EXCEEDED')).toHaveLength(8 - served);
      expect(sandbox.callsTo('/ruc')).toHaveLength(served);
    } finally {
      await Promise.all(signedIn.map((g) => g.stop()));
      await idp.close();
    }
  }, 60_000);

  it('answer every lookup while a primary is killed and its replica takes over', async () => {
    const rucs = unknownRucs(60, 71_000_000);
    const failures: unknown[] = [];
    let answered = 0;
    const ask = async (ruc: string, i: number) => {
      const answer = await postOnce(instances[i % 3]!.url, QUERY, { r: ruc }).catch((error: unknown) => ({
        status: 0,
        body: { errors: [error] },
      }));
      // An unknown RUC is a typed DOCUMENT_NOT_FOUND: an answer, not a failure.
      const code = (answer.body.errors?.[0] as { extensions?: { code?: string } } | undefined)?.extensions?.code;
      if (answer.status !== 200 || (code !== undefined && code !== 'DOCUMENT_NOT_FOUND')) failures.push(answer.body);
      else answered++;
    };
    const primary = (await roles())['master'][0];
    const victim = nodes.find((n) => n.port === primary)!;
    // CachedLookups before, during and after the failover, in waves.
    for (let wave = 0; wave < 6; wave++) {
      if (wave === 2) await victim.stop();
      await Promise.all(rucs.slice(wave * 10, wave * 10 + 10).map((r, i) => ask(r, i)));
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(failures).toEqual([]);
    expect(answered).toBe(60);
    // The cluster healed: a replica took over the victim's slots. A busy machine may lose the first election, held again
    // after twice the node timeout.
    const deadline = Date.now() + 30_000;
    const alive = nodes.find((n) => n !== victim)!;
    while (!(await clusterInfo(alive.port)).includes('cluster_state:ok') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    expect(await clusterInfo(alive.port)).toContain('cluster_state:ok');
    // And shares again once every process has learnt the new slot owners (ioredis refreshes its
    // map every 2 s here): one call for 30 identical lookups over the three instances.
    let calls = 0;
    for (const { ruc } of TAXPAYERS.slice(4, 9)) {
      sandbox.reset();
      await Promise.all(Array.from({ length: 30 }, (_, i) => postOnce(instances[i % 3]!.url, QUERY, { r: ruc })));
      calls = sandbox.callsTo('/ruc').length;
      if (calls === 1) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect(calls).toBe(1);
  }, 90_000);
});
