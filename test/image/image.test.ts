import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { TRIGGERS } from '../../src/sandbox/data.js';
import { freePort, postOnce, readmeExample, TOKEN, unknownRucs } from '../helpers.js';
import { spawnTracked } from '../processes.js';
import { buildImage, IMAGE, PODMAN_ENV, podman, removeImages, run, until, type Bases } from './podman.js';

/** README's worked query 1, word for word. */
const EJEMPLO = readmeExample('1. A taxpayer').sent.query;
const MINUTE = 60_000;
const tag = `gwtest${process.pid}`;

/** The Dockerfile as users build it, on node:24-bookworm-slim or its stand-in (scripts/stand-in-images.sh); every image made is removed after. */
let bases: Bases | undefined;
beforeAll(async () => {
  bases = await buildImage();
}, 25 * MINUTE);
afterAll(() => removeImages(bases), 5 * MINUTE);

describe('the base images', () => {
  it('are the real ones, or stand-ins under local names: never a stand-in saved under an official name', async () => {
    const official = [
      'docker.io/library/node:24-bookworm-slim',
      'docker.io/library/debian:bookworm-slim',
      'docker.io/library/redis:7-bookworm',
    ];
    if (bases!.NODE_IMAGE.startsWith('docker.io/')) return;
    expect(bases!.STAND_INS.split(' ').every((name) => name.startsWith('localhost/stand-in/'))).toBe(true);
    // Where a registry cannot be reached, an image under an official name was saved there by hand
    // or by another tool: a stand-in a developer's own build would take for the real one.
    for (const name of official) {
      const exists = await podman(['image', 'exists', name]).then(
        () => true,
        () => false,
      );
      expect(
        exists,
        `${name} is on this machine, yet no registry can be reached: another tool saved an image under the official name. ` +
          `Remove it (podman rmi ${name}) and run the image tests again; they make their own stand-ins under localhost/stand-in/.`,
      ).toBe(false);
    }
  });
});

describe('the container image', () => {
  const name = `${tag}-gateway`;
  let sandbox: Sandbox;
  let container: ChildProcess;
  let exited: Promise<number | null>;
  let url: string;
  let ops: string;
  beforeAll(async () => {
    sandbox = await startSandbox({ slowMs: 3000 });
    const [port, opsPort] = [await freePort(), await freePort()];
    url = `http://127.0.0.1:${port}/graphql`;
    ops = `http://127.0.0.1:${opsPort}`;
    // On the host's network, to reach the sandbox on loopback; the image's defaults otherwise.
    container = spawnTracked(
      'podman',
      [
        'run',
        '--rm',
        '--name',
        name,
        '--network',
        'host',
        '--health-interval',
        'disable',
        ...envArgs({ UPSTREAM_URL: sandbox.url, HOST: '127.0.0.1', PORT: String(port), OPS_PORT: String(opsPort) }),
        IMAGE,
      ],
      { env: PODMAN_ENV, stdio: 'ignore' },
    );
    exited = new Promise((resolve) => container.once('exit', (code) => resolve(code)));
    await until(`${ops}/ready`, 200, MINUTE);
  }, 2 * MINUTE);
  afterAll(async () => {
    await podman(['rm', '--force', '--time', '0', name]).catch(() => {});
    await sandbox?.close();
  });

  it("is node:24-bookworm-slim with production dependencies only, the compiled build, a non-root user, a HEALTHCHECK, and node as the command with start:prod's flags", async () => {
    const [config] = JSON.parse(await podman(['image', 'inspect', IMAGE])) as {
      Config: { User: string; Cmd: string[] };
      Healthcheck?: { Test: string[] };
    }[];
    const startProd = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts['start:prod']!;
    expect(config!.Config.Cmd).toEqual(startProd.replace(/^NODE_ENV=production exec /, '').split(' '));
    expect(config!.Config.User).toBe('node');
    expect(config!.Healthcheck?.Test.join(' ')).toContain('/health');
    const listing = await podman([
      'run',
      '--rm',
      '--entrypoint',
      'sh',
      IMAGE,
      '-c',
      'node --version; id -u; ls; ls node_modules; ls node_modules/@apollo; ls dist',
    ]);
    const [version, uid, ...rest] = listing.trim().split('\n');
    expect(version).toMatch(/^v24\./);
    expect(uid).not.toBe('0');
    expect(rest).toEqual(expect.arrayContaining(['graphql-yoga', 'ioredis', 'src', 'operations']));
    // @apollo/subgraph is a production dependency (the federation plugin's peer); @apollo/client is not.
    for (const absent of ['vitest', 'typescript', 'tsx', 'client', 'mercurius', 'test', 'bench']) expect(rest).not.toContain(absent);
  });

  it('answers README query 1 (4 upstream calls, recorded by the sandbox), reports /ready, and passes its HEALTHCHECK', async () => {
    const answer = await postOnce(url, EJEMPLO, { ruc: '20100123453', numLicencia: 'Q46779354' });
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data).toMatchObject({
      contribuyente: { ruc: '20100123453', nombreORazonSocial: 'COMERCIAL ANDINA S.A.C.' },
      licencia: { nombres: 'ROSA ELENA' },
    });
    expect(answer.body.extensions?.cost).toMatchObject({ queries: 5, upstreamCalls: 4 });
    expect(sandbox.calls.map((c) => c.headers.authorization)).toEqual(Array(4).fill(`Bearer ${TOKEN}`));
    expect(((await (await fetch(`${ops}/ready`)).json()) as { status: string }).status).toBe('ready');
    await expect(podman(['healthcheck', 'run', name])).resolves.toBeDefined();
  });

  it('on `podman stop` turns /ready to 503, finishes the operation in flight, and exits 0 within the grace period', async () => {
    sandbox.reset();
    const slow = postOnce(url, `{ contribuyente(ruc: "${TRIGGERS.slow.ruc}") { ruc } }`);
    while (sandbox.callsTo('/ruc').length === 0) await new Promise((r) => setTimeout(r, 20));
    const started = Date.now();
    const stopped = podman(['stop', '--time', '20', name]);
    await until(`${ops}/ready`, 503, 2000);
    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ data: { contribuyente: { ruc: TRIGGERS.slow.ruc } } });
    await stopped;
    expect(await exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(sandbox.callCount).toBe(1);
  });
});

describe('the container image, its store unreachable and its DNS silent', () => {
  const name = `${tag}-silent-dns`;
  afterAll(() => podman(['rm', '--force', '--time', '0', name]).catch(() => {}));

  it('still stops within a few seconds of SIGTERM: a DNS lookup under way holds the exit only as long as RES_OPTIONS lets it', async () => {
    const opsPort = await freePort();
    // 192.0.2.1 (TEST-NET) never answers: every lookup of the store's name waits for the resolver's time-out.
    const env = envArgs({ UPSTREAM_URL: 'http://upstream.invalid', REDIS_URL: 'redis://redis.invalid:6379' });
    const container = spawnTracked(
      'podman',
      [
        'run',
        '--rm',
        '--name',
        name,
        '--dns',
        '192.0.2.1',
        '-p',
        `127.0.0.1:${opsPort}:9464`,
        '--health-interval',
        'disable',
        ...env,
        IMAGE,
      ],
      { env: PODMAN_ENV, stdio: 'ignore' },
    );
    const exited = new Promise((resolve) => container.once('exit', resolve));
    await until(`http://127.0.0.1:${opsPort}/health`, 200, MINUTE);
    // The store's reconnections are under way in the resolver.
    await new Promise((r) => setTimeout(r, 2000));
    const started = Date.now();
    await podman(['stop', '--time', '30', name]);
    expect(await exited).toBe(0);
    // The lookup under way ends within RES_OPTIONS' 2 s (Dockerfile), then the exit is at once.
    expect(Date.now() - started).toBeLessThan(4000);
  });
});

describe('deploy/compose/compose.yaml: two gateways, Redis and the sandbox', () => {
  const project = `${tag}c`;
  const ports = { GATEWAY_A_PORT: 0, GATEWAY_B_PORT: 0, GATEWAY_A_OPS_PORT: 0, GATEWAY_B_OPS_PORT: 0, SANDBOX_PORT: 0 };
  const compose = (args: string[], timeoutMs = 2 * MINUTE) =>
    run('podman-compose', ['-f', 'deploy/compose/compose.yaml', '-p', project, ...args], timeoutMs, {
      ...PODMAN_ENV,
      ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
      CACHE_KEY_SECRET: randomBytes(16).toString('hex'),
      GATEWAY_IMAGE: IMAGE,
      REDIS_IMAGE: bases!.REDIS_IMAGE,
    });
  const at = (port: number, path = '/graphql') => `http://127.0.0.1:${port}${path}`;
  beforeAll(async () => {
    for (const key of Object.keys(ports) as (keyof typeof ports)[]) ports[key] = await freePort();
    await compose(['up', '-d']);
    await until(at(ports.GATEWAY_A_OPS_PORT, '/ready'), 200, MINUTE);
    await until(at(ports.GATEWAY_B_OPS_PORT, '/ready'), 200, MINUTE);
  }, 3 * MINUTE);
  afterAll(async () => {
    await compose(['down', '-t', '0']).catch(() => {});
    await podman(['network', 'rm', '--force', `${project}_default`]).catch(() => {});
  }, MINUTE);

  it('20 identical lookups spread over both gateways make one upstream call: they share Redis', async () => {
    const [ruc] = unknownRucs(1, 81_000_000);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        postOnce(at(i % 2 ? ports.GATEWAY_B_PORT : ports.GATEWAY_A_PORT), `{ contribuyente(ruc: "${ruc}") { ruc } }`),
      ),
    );
    for (const a of answers) expect(a.body.errors?.[0]?.extensions?.['code']).toBe('DOCUMENT_NOT_FOUND');
    expect(answers.reduce((sum, a) => sum + (a.body.extensions?.cost?.['upstreamCalls'] ?? 0), 0)).toBe(1);
    const stats = (await (await fetch(at(ports.SANDBOX_PORT, '/__sandbox/stats'))).json()) as { calls: number };
    expect(stats.calls).toBe(1);
  });

  it('`podman-compose stop -t 20`: the gateways drain before Redis goes, and every container exits 0', async () => {
    await compose(['stop', '-t', '20']);
    const states = await podman([
      'ps',
      '--all',
      '--filter',
      `label=io.podman.compose.project=${project}`,
      '--format',
      '{{.Names}} {{.Status}}',
    ]);
    const lines = states.trim().split('\n').sort();
    expect(lines).toHaveLength(4);
    for (const line of lines) expect(line).toMatch(/^\S+ Exited \(0\)/);
  });
});

function envArgs(env: Record<string, string>): string[] {
  return Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
}
