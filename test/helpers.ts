import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import type { Redis } from 'ioredis';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print, type GraphQLFormattedError } from 'graphql';
import { createApp, type App, type AppOptions } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createHttpServer } from '../src/http/server.js';
import { createLogger } from '../src/telemetry/logger.js';
import { SANDBOX_TOKEN, TRIGGERS } from '../src/sandbox/data.js';
import { rucCheckDigit } from '../src/schema/validation.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../src/sandbox/server.js';
import { Metrics } from '../src/telemetry/metrics.js';
import { signalGroup, spawnTracked } from './processes.js';

export const TOKEN = SANDBOX_TOKEN;

/** Until each gateway's /ready answers 200, as a load balancer waits before sending it traffic: at most `withinMs`. */
export async function untilReady(urls: readonly string[], withinMs = 20_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (const url of urls) {
    const ready = url.replace(/\/graphql$/, '/ready');
    for (;;) {
      const status = await fetch(ready).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) break;
      if (Date.now() > deadline) throw new Error(`${ready} never became ready`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** One of the README's worked queries, by the words its heading starts with: what it sends, with which token, and the answer it shows. */
export function readmeExample(heading: string): ReturnType<typeof docExample> {
  return docExample('README.md', `**${heading}`);
}

/** The first curl example after `marker` in `file` (a doc under docs/, say), and the answer shown after it. */
export function docExample(
  file: string,
  marker: string,
): {
  sent: { query: string; variables?: Record<string, unknown> };
  token: string;
  shown: unknown;
} {
  const text = readFileSync(file, 'utf8');
  const at = text.indexOf(marker);
  if (at < 0) throw new Error(`${file} has no "${marker}"`);
  const section = text.slice(at);
  return {
    sent: JSON.parse(/-d '(\{.*\})'/.exec(section)![1]!) as { query: string; variables?: Record<string, unknown> },
    token: /authorization: Bearer ([\w-]+)/.exec(section)![1]!,
    shown: JSON.parse(/```json\n([\s\S]*?)\n```/.exec(section)![1]!) as unknown,
  };
}

export interface PostOptions {
  /** The bearer token: the sandbox's plan by default, `null` for none. */
  token?: string | null;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/**
 * A JSON POST to a GraphQL endpoint: `body` an object sent as JSON, or a string sent as it is
 * (a body that does not parse, say). Raw, for the tests that read status, headers or text.
 */
export function post(endpoint: string, body: unknown, { token = TOKEN, headers, signal }: PostOptions = {}): Promise<Response> {
  return fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

export interface GraphQLResponse<R> {
  status: number;
  headers: Headers;
  body: { data?: R | null; errors?: GraphQLFormattedError[]; extensions?: Record<string, unknown> };
}

export interface Stack {
  sandbox: Sandbox;
  app: App;
  /** Gateway base URL, e.g. http://127.0.0.1:40123 */
  url: string;
  /** Every log line the gateway wrote, as text. */
  logs: string[];
  /** POSTs one operation to /graphql over real HTTP. */
  gql<R, V>(
    document: TypedDocumentNode<R, V> | string,
    variables?: V,
    options?: { token?: string | null; headers?: Record<string, string> },
  ): Promise<GraphQLResponse<R>>;
  close(): Promise<void>;
}

export interface StackOptions {
  sandbox?: SandboxOptions;
  /** A running sandbox to use (and leave running) instead of starting one: two gateways, one upstream. */
  sharedSandbox?: Sandbox;
  /** Environment for loadConfig; UPSTREAM_URL defaults to the sandbox's URL. */
  env?: Record<string, string>;
  /** Passed to createApp (tracing with an in-memory exporter, say). */
  app?: Omit<AppOptions, 'logger'>;
  /** Appended to the sandbox URL to form UPSTREAM_URL (e.g. '/api'). */
  upstreamPath?: string;
}

/** Sandbox + gateway, each a real HTTP server on 127.0.0.1, port 0. */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const sandbox = options.sharedSandbox ?? (await startSandbox({ slowMs: 1500, ...options.sandbox }));
  // A directory of its own (months of SUNAT's rates, the register): nothing kept by another test is read.
  const ownDir = options.env?.['PADRON_DIR'] ? undefined : mkdtempSync(join(tmpdir(), 'stack-'));
  const config = loadConfig({
    UPSTREAM_URL: sandbox.url + (options.upstreamPath ?? ''),
    LOG_LEVEL: 'debug',
    // Most tests count the calls one operation makes; the cache's own tests turn it on.
    CACHE: 'off',
    // test/e2e/fast-path.test.ts compares both paths answer by answer; HTTP_FAST_PATH=off runs any file through Yoga alone.
    HTTP_FAST_PATH: process.env['HTTP_FAST_PATH'] ?? 'on',
    // SUNAT's free API at the sandbox too, as the built-in sandbox of npm start has it.
    SUNAT_API_URL: sandbox.url,
    SUNAT_AUTH_URL: sandbox.url,
    TIPO_DE_CAMBIO: sandbox.url,
    ...(ownDir ? { PADRON_DIR: ownDir } : {}),
    ...options.env,
  });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const metrics = options.app?.metrics ?? new Metrics();
  const app = createApp(config, { ...options.app, metrics, logger: createLogger(config, sink) });
  const server = await listen(createHttpServer(app, { ...config.http, onRefused: (code) => metrics.refused(code) }));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    sandbox,
    app,
    url,
    logs,
    async gql(document, variables, opts = {}) {
      const res = await post(
        `${url}/graphql`,
        { query: typeof document === 'string' ? document : print(document), variables },
        { ...opts, headers: { accept: 'application/graphql-response+json, application/json', ...opts.headers } },
      );
      return { status: res.status, headers: res.headers, body: (await res.json()) as GraphQLResponse<never>['body'] };
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await app.dispose();
      if (!options.sharedSandbox) await sandbox.close();
      if (ownDir) rmSync(ownDir, { recursive: true, force: true });
    },
  };
}

function listen(server: Server): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

/** The `code` of each error, in order. */
export function codes(body: { errors?: readonly GraphQLFormattedError[] }): unknown[] {
  return (body.errors ?? []).map((e) => e.extensions?.['code']);
}

/** The one error whose path starts with `path`. */
export function errorAt(body: { errors?: readonly GraphQLFormattedError[] }, ...path: (string | number)[]) {
  const found = (body.errors ?? []).filter((e) => JSON.stringify(e.path?.slice(0, path.length)) === JSON.stringify(path));
  if (found.length !== 1) throw new Error(`expected one error at ${path.join('.')}, got ${JSON.stringify(body.errors)}`);
  return found[0]!;
}

export const RECEIPT = {
  rucEmisor: '20100123453',
  codigoTipoDocumento: '01',
  serieDocumento: 'F001',
  numeroDocumento: '1532',
  fechaDeEmision: '2026-10-01',
  total: '1180.00',
};

/** `n` receipts numbered 1 to n, in order; the one at index `trigger.at` issued by `trigger.ruc`. */
export const receipts = (n: number, trigger?: { at: number; ruc: string }) =>
  Array.from({ length: n }, (_, i) => ({
    ...RECEIPT,
    numeroDocumento: String(i + 1),
    ...(trigger?.at === i ? { rucEmisor: trigger.ruc } : {}),
  }));

/** The same receipt as the upstream takes it (snake_case). */
export const RECEIPT_BODY = {
  ruc_emisor: '20100123453',
  codigo_tipo_documento: '01',
  serie_documento: 'F001',
  numero_documento: '1532',
  fecha_de_emision: '2026-10-01',
  total: '1180.00',
};

export interface SpawnedGateway {
  child: ChildProcess;
  /** The GraphQL URL the gateway logged when ready. */
  url: string;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code once the primary has exited. */
  exited: Promise<number | null>;
  /** SIGTERM to the whole process group (as systemd stops a service), then its exit code. */
  stop(): Promise<number | null>;
}

/** How long a gateway may take to say it is ready: tsx compiling on a busy 2-core machine takes seconds. */
const READY_WITHIN_MS = 45_000;

/**
 * `src/main.ts` in its own process group, as `npm start` runs it, on 127.0.0.1 and a free port;
 * resolved once it says it is ready. A gateway that
 * does not get ready in time is killed, group and all, before the error is thrown.
 */
export async function spawnGateway(env: Record<string, string> = {}): Promise<SpawnedGateway> {
  const child = spawnTracked(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { PATH: process.env['PATH'], PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not ready within ${READY_WITHIN_MS} ms: ${output}`)), READY_WITHIN_MS);
      const onData = (chunk: Buffer) => {
        output += chunk;
        const match = /GraphQL gateway ready: (http:\/\/[^"\s]+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`exited ${code}: ${output}`));
      });
    });
    const stop = async () => {
      if (child.exitCode === null && child.signalCode === null) signalGroup(child, 'SIGTERM');
      return exited;
    };
    return { child, url, output: () => output, exited, stop };
  } catch (error) {
    signalGroup(child, 'SIGKILL');
    throw error;
  }
}

/** `n` valid RUCs (check digit and all) the sandbox does not know: each a billed 404, kept like a record. */
export function unknownRucs(n: number, from = 70_000_000): string[] {
  return Array.from({ length: n }, (_, i) => {
    const first10 = `20${String(from + i).padStart(8, '0')}`;
    return `${first10}${rucCheckDigit(first10)}`;
  });
}

/** A free TCP port on 127.0.0.1 (for servers that cannot take port 0, like redis-server). */
export async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface RedisServer {
  url: string;
  port: number;
  /** Stops the server (SIGKILL: an outage, not a shutdown). */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
}

/** A real redis-server of the test's own on a loopback port, no persistence; `args` add to its settings. */
export async function startRedis(args: readonly string[] = []): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  const start = async () => {
    // One server per handle: a second start would orphan the first.
    if (running()) return;
    const proc = spawnTracked(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = proc;
    await new Promise<void>((resolve, reject) => {
      let output = '';
      proc.once('error', (error) =>
        reject(new Error(`redis-server could not start (${error.message}); install it: apt-get install redis-server (.ci/run does)`)),
      );
      proc.stdout!.on('data', (chunk: Buffer) => {
        output += chunk;
        if (output.includes('Ready to accept connections')) resolve();
      });
      proc.once('exit', (code) => reject(new Error(`redis-server exited ${code}: ${output}`)));
    });
  };
  const stop = async () => {
    const proc = child;
    if (!proc || !running()) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, port, stop, start };
}

export interface OnceAnswer {
  status: number;
  body: { data?: Record<string, unknown> | null; errors?: GraphQLFormattedError[]; extensions?: { cost?: Record<string, number> } };
}

/** One operation on a connection of its own (no keep-alive agent), as many separate clients send them. */
export function postOnce(url: string, query: string, variables: Record<string, unknown> = {}): Promise<OnceAnswer> {
  return postBodyOnce(url, { query, variables });
}

/** Any JSON body (a persisted query's hash, say) the same way; `token` (null for none) and `headers` as `post` takes them. */
export function postBodyOnce(
  url: string,
  body: unknown,
  { token = TOKEN, headers }: Omit<PostOptions, 'signal'> = {},
): Promise<OnceAnswer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as OnceAnswer['body'] }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** A lookup of the sandbox's `slow` trigger: it stays in flight for the sandbox's `slowMs`. */
export function slowLookup(url: string): Promise<Response> {
  return post(url, { query: `{ contribuyente(ruc: "${TRIGGERS.slow.ruc}") { nombreORazonSocial } }` });
}

/** Every key in a Redis and every value under it, of any kind, as one text: what a test searches for a secret. */
export async function redisDump(inspect: Redis): Promise<string> {
  const keys = await inspect.keys('*');
  const valueOf = async (k: string): Promise<unknown> => {
    const type = await inspect.type(k);
    if (type === 'string') return inspect.get(k);
    if (type === 'hash') return inspect.hgetall(k);
    if (type === 'set') return inspect.smembers(k);
    if (type === 'zset') return inspect.zrange(k, '0', '-1');
    if (type === 'list') return inspect.lrange(k, 0, -1);
    return inspect.xrange(k, '-', '+');
  };
  return keys.join('\n') + JSON.stringify(await Promise.all(keys.map(valueOf)));
}
