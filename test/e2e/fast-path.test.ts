import { request } from 'node:http';
import { Writable } from 'node:stream';
import type { Plugin } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { TRIGGERS } from '../../src/sandbox/data.js';
import { RECEIPT, TOKEN, startStack, type Stack } from '../helpers.js';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { gatewayError } from '../../src/errors.js';
import { ONE_RESULT_ONLY } from '../../src/pipeline/executor.js';
import { createLogger } from '../../src/telemetry/logger.js';

/**
 * The node:http fast path (src/http/fast-path.ts) and Yoga answer every request alike: two
 * gateways over one sandbox, one with HTTP_FAST_PATH=on and one with it off, get the same
 * bytes and must answer with the same status, headers and body, having made the same
 * upstream calls. The fast path's own counter shows which requests it took; the rest went
 * to Yoga on both sides. (The whole end-to-end suite also runs both ways in CI.)
 */

let sandbox: Sandbox;
let fast: Stack;
let yoga: Stack;
const env = { UPSTREAM_RETRIES: '0', BREAKER_MIN_CALLS: '1000000', UPSTREAM_TIMEOUT_MS: '500' };

beforeAll(async () => {
  sandbox = await startSandbox({ slowMs: 1500 });
  fast = await startStack({ sharedSandbox: sandbox, env: { ...env, HTTP_FAST_PATH: 'on' } });
  yoga = await startStack({ sharedSandbox: sandbox, env: { ...env, HTTP_FAST_PATH: 'off' } });
});
afterAll(async () => {
  await fast?.close();
  await yoga?.close();
  await sandbox?.close();
});

interface Raw {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
}
interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Exactly these bytes, with no header added by a client library (no Accept unless given). */
function send(base: string, raw: Raw): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${raw.path ?? '/graphql'}`,
      { method: raw.method ?? 'POST', headers: { 'x-request-id': 'same-id-both-ways', ...raw.headers } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(raw.body);
  });
}

/** Headers that say something about the answer (not the connection or the clock). */
function meaningful(headers: Answer['headers']) {
  const { date: _date, connection: _connection, 'keep-alive': _keepAlive, ...rest } = headers;
  return rest;
}

async function taken(): Promise<number> {
  const text = await (await fetch(`${fast.url}/metrics`)).text();
  return Number(/^gateway_fast_path_requests_total (\d+)/m.exec(text)?.[1] ?? NaN);
}

/** Sends `raw` to both gateways; they must agree. Returns the answer and whether the fast path took it. */
async function both(raw: Raw): Promise<Answer & { json: unknown; viaFastPath: boolean }> {
  const takenBefore = await taken();
  const callsBefore = sandbox.calls.length;
  const a = await send(fast.url, raw);
  const callsMid = sandbox.calls.length;
  const viaFastPath = (await taken()) - takenBefore === 1;
  const b = await send(yoga.url, raw);
  const callsAfter = sandbox.calls.length;

  expect(a.status).toBe(b.status);
  expect(meaningful(a.headers)).toEqual(meaningful(b.headers));
  expect(a.body).toBe(b.body);
  expect(callsMid - callsBefore).toBe(callsAfter - callsMid);
  let json: unknown;
  try {
    json = JSON.parse(a.body);
  } catch {
    json = undefined;
  }
  return { ...a, json, viaFastPath };
}

const json = (body: unknown, headers: Record<string, string> = {}): Raw => ({
  headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, ...headers },
  body: JSON.stringify(body),
});
const CONTRIBUYENTE = 'query C($ruc: String!) { contribuyente(ruc: $ruc) { ruc nombreORazonSocial estado } }';
const OK_RUC = '20100123453';

describe('the fast path takes JSON POSTs and answers as Yoga does', () => {
  const cases: [string, Raw][] = [
    ['no Accept header', json({ query: CONTRIBUYENTE, variables: { ruc: OK_RUC } })],
    ['Accept */*', json({ query: CONTRIBUYENTE, variables: { ruc: OK_RUC } }, { accept: '*/*' })],
    ['Accept application/json', json({ query: CONTRIBUYENTE, variables: { ruc: OK_RUC } }, { accept: 'application/json' })],
    [
      'Accept graphql-response+json, json (as GraphQL clients send)',
      json({ query: CONTRIBUYENTE, variables: { ruc: OK_RUC } }, { accept: 'application/graphql-response+json, application/json' }),
    ],
    [
      'content-type with charset',
      json({ query: CONTRIBUYENTE, variables: { ruc: OK_RUC } }, { 'content-type': 'application/json; charset=utf-8' }),
    ],
    [
      'variables, operationName and extensions null or empty',
      json({ query: '{ __typename }', variables: null, operationName: null, extensions: {} }),
    ],
    [
      'operationName picks one of two operations',
      json({ query: `${CONTRIBUYENTE} query T { __typename }`, operationName: 'C', variables: { ruc: OK_RUC } }),
    ],
    ['an operationName that is not in the document', json({ query: `${CONTRIBUYENTE} query T { __typename }`, operationName: 'X' })],
    ['a field the schema lacks (json)', json({ query: '{ nope }' }, { accept: 'application/json' })],
    ['a field the schema lacks (graphql-response+json: 400)', json({ query: '{ nope }' }, { accept: 'application/graphql-response+json' })],
    ['a syntax error', json({ query: '{ contribuyente(ruc: ' }, { accept: 'application/graphql-response+json' })],
    ['a variable of the wrong type', json({ query: CONTRIBUYENTE, variables: { ruc: 20100123453 } })],
    ['a missing variable', json({ query: CONTRIBUYENTE })],
    ['a RUC with a wrong check digit', json({ query: CONTRIBUYENTE, variables: { ruc: '20100123454' } })],
    [
      'no token',
      { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: CONTRIBUYENTE, variables: { ruc: OK_RUC } }) },
    ],
    ['a RUC the upstream does not have', json({ query: CONTRIBUYENTE, variables: { ruc: TRIGGERS.notFound } })],
    ['the upstream unavailable', json({ query: CONTRIBUYENTE, variables: { ruc: TRIGGERS.unavailable } })],
    ['a record that breaks the schema', json({ query: CONTRIBUYENTE, variables: { ruc: TRIGGERS.badRecord } })],
    [
      'aliases and a fragment over repeated RUCs, with detalle',
      json({
        query: `{ a: contribuyente(ruc: "${OK_RUC}") { ...F } b: contribuyente(ruc: "${OK_RUC}") { ...F detalle { tipoContribuyente } } }
                fragment F on Contribuyente { ruc estado }`,
      }),
    ],
    ['depth over MAX_DEPTH', json({ query: '{ a { b { c { d { e { f { g } } } } } } }' })],
    ['aliases over MAX_ALIASES', json({ query: `{ ${Array.from({ length: 21 }, (_, i) => `a${i}: __typename`).join(' ')} }` })],
    ['directives over MAX_DIRECTIVES', json({ query: `{ __typename ${'@include(if: true) '.repeat(11)}}` })],
    ['tokens over MAX_TOKENS', json({ query: `{ ${'__typename '.repeat(3001)}}` })],
    [
      'cost over MAX_OPERATION_COST',
      json({
        query: 'query($r: [String!]!) { contribuyentes(rucs: $r) { ruc detalle { tipoContribuyente } } }',
        variables: { r: Array.from({ length: 60 }, (_, i) => String(20100000000 + i)) },
      }),
    ],
    [
      'a mutation: validarComprobantes',
      json({
        query: 'mutation V($c: [ComprobanteInput!]!) { validarComprobantes(comprobantes: $c) { cantidadDeComprobantes } }',
        variables: { c: [RECEIPT] },
      }),
    ],
    ['introspection', json({ query: '{ __schema { queryType { name } } }' })],
    ['a browser origin (CORS headers)', json({ query: '{ __typename }' }, { origin: 'https://app.example' })],
    ['Cache-Control: no-cache', json({ query: CONTRIBUYENTE, variables: { ruc: OK_RUC } }, { 'cache-control': 'no-cache' })],
    [
      'SOL credentials written in the document',
      json({
        query: `mutation { validarComprobantesTexto(comprobantes: ["x"], credencialesSol: { rucEmpresa: "${OK_RUC}", usuario: "U", clave: "C" }) { cantidadDeComprobantes } }`,
      }),
    ],
    [
      'a persisted-query hash with its document',
      json({ query: '{ __typename }', extensions: { persistedQuery: { version: 1, sha256Hash: 'ab'.repeat(32) } } }),
    ],
    [
      'a person, a licence and the exchange rate',
      json({
        query:
          '{ persona(dni: "46779354") { nombres } licencia(numLicencia: "Q46779354") { titular { dni } } tipoDeCambio(fecha: "2026-11-20") { compra } }',
      }),
    ],
    ['a date past tomorrow', json({ query: '{ tipoDeCambio(fecha: "9999-01-01") { compra } }' })],
  ];

  it.each(cases)('%s', async (_name, raw) => {
    const answer = await both(raw);
    expect(answer.viaFastPath).toBe(true);
    expect(answer.json).toBeTypeOf('object');
    // Every error carries the contract's code and retryable flag on both paths.
    for (const error of (answer.json as { errors?: { extensions?: Record<string, unknown> }[] }).errors ?? []) {
      expect(typeof error.extensions?.['code']).toBe('string');
      expect(typeof error.extensions?.['retryable']).toBe('boolean');
    }
  });

  it('a caller x-request-id that is not sane gets a fresh UUID on each path', async () => {
    for (const stack of [fast, yoga]) {
      const answer = await send(stack.url, json({ query: '{ __typename }' }, { 'x-request-id': 'bad id!' }));
      expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    }
  });
});

describe('everything else goes to Yoga, on both gateways', () => {
  const cases: [string, Raw][] = [
    [
      'GET with the query in the URL',
      { method: 'GET', path: `/graphql?query=${encodeURIComponent('{ __typename }')}`, headers: { accept: 'application/json' } },
    ],
    ['a query string on a POST', { ...json({ query: '{ __typename }' }), path: '/graphql?x=1' }],
    ['a batch (an array)', json([{ query: '{ __typename }' }])],
    ['a query that is not a string', json({ query: 42 })],
    ['an unknown persisted-query hash alone', json({ extensions: { persistedQuery: { version: 1, sha256Hash: 'cd'.repeat(32) } } })],
    ['no query', json({ variables: {} })],
    ['a body that is not JSON', { headers: { 'content-type': 'application/json' }, body: '{"query": ' }],
    ['a JSON string body', { headers: { 'content-type': 'application/json' }, body: '"{ __typename }"' }],
    ['Accept: text/event-stream', json({ query: '{ __typename }' }, { accept: 'text/event-stream' })],
    // Its events go out over SSE only, which Yoga serves (a plain JSON Accept is refused there, 406).
    ['a subscription', json({ query: 'subscription { cambiosPadron(rucs: ["20100123453"]) { ruc } }' })],
    ['Accept: text/html only', json({ query: '{ __typename }' }, { accept: 'text/html' })],
    ['Accept with another charset', json({ query: '{ __typename }' }, { accept: 'application/json; charset=latin1' })],
    ['application/graphql+json', json({ query: '{ __typename }' }, { 'content-type': 'application/graphql+json' })],
    [
      'text/plain without the CSRF header',
      { headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ query: '{ __typename }' }) },
    ],
    ['an empty body', { headers: { 'content-type': 'application/json' }, body: '' }],
    ['a preflight', { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } }],
  ];

  it.each(cases)('%s', async (_name, raw) => {
    const answer = await both(raw);
    expect(answer.viaFastPath).toBe(false);
  });
});

describe('parameters Yoga refuses: its own check refuses them on both paths', () => {
  const cases: [string, Raw][] = [
    ['an unexpected parameter', json({ query: '{ __typename }', extra: 1 })],
    ['variables that are a list', json({ query: '{ __typename }', variables: [1] })],
    ['an operationName that is not a string', json({ query: '{ __typename }', operationName: 7 })],
    ['extensions that are a string', json({ query: '{ __typename }', extensions: 'x' })],
  ];

  it.each(cases)('%s', async (_name, raw) => {
    const answer = await both(raw);
    expect(answer.viaFastPath).toBe(true);
    expect(answer.status).toBe(400);
  });
});

describe('with CORS_ORIGINS set, both paths answer origins alike', () => {
  let fastCors: Stack;
  let yogaCors: Stack;
  const corsEnv = { ...env, CORS_ORIGINS: 'https://a.example,https://b.example' };
  beforeAll(async () => {
    fastCors = await startStack({ sharedSandbox: sandbox, env: { ...corsEnv, HTTP_FAST_PATH: 'on' } });
    yogaCors = await startStack({ sharedSandbox: sandbox, env: { ...corsEnv, HTTP_FAST_PATH: 'off' } });
  });
  afterAll(async () => {
    await fastCors?.close();
    await yogaCors?.close();
  });

  it.each([['https://a.example'], ['https://evil.example']])('Origin: %s', async (origin) => {
    const raw = json({ query: '{ __typename }' }, { origin });
    const [a, b] = [await send(fastCors.url, raw), await send(yogaCors.url, raw)];
    expect(a.status).toBe(b.status);
    expect(meaningful(a.headers)).toEqual(meaningful(b.headers));
    expect(a.body).toBe(b.body);
    // A refused origin gets no Access-Control-Allow-Origin at all, never "null".
    expect(a.headers['access-control-allow-origin']).toBe(origin === 'https://a.example' ? origin : undefined);
  });
});

describe('plugins added to the app run on both paths', () => {
  /** An auth check as a user would write it: no `x-tenant` header, no operation (and no upstream call). */
  const tenantCheck = (): Plugin => ({
    onParams({ request, setResult }) {
      if (!request.headers.get('x-tenant')) {
        setResult({ errors: [gatewayError('UNAUTHENTICATED', 'Falta la cabecera x-tenant.')] });
      }
    },
  });
  /** Marks every result, as a plugin adding an extension would. */
  const stamp = (): Plugin => ({
    onExecutionResult({ result, setResult }) {
      if (result && !(Symbol.asyncIterator in result)) setResult({ ...result, extensions: { ...result.extensions, stamped: true } });
    },
  });
  let fastPlug: Stack;
  let yogaPlug: Stack;
  beforeAll(async () => {
    fastPlug = await startStack({
      sharedSandbox: sandbox,
      env: { ...env, HTTP_FAST_PATH: 'on' },
      app: { plugins: [tenantCheck(), stamp()] },
    });
    yogaPlug = await startStack({
      sharedSandbox: sandbox,
      env: { ...env, HTTP_FAST_PATH: 'off' },
      app: { plugins: [tenantCheck(), stamp()] },
    });
  });
  afterAll(async () => {
    await fastPlug?.close();
    await yogaPlug?.close();
  });

  it('an onParams hook refuses a request without the header on both, with no upstream call', async () => {
    const raw = json({ query: '{ contribuyente(ruc: "20100123453") { ruc } }' });
    const before = sandbox.calls.length;
    const fastTaken = await takenBy(fastPlug);
    const [a, b] = [await send(fastPlug.url, raw), await send(yogaPlug.url, raw)];
    expect(await takenBy(fastPlug)).toBe(fastTaken + 1);
    expect(sandbox.calls.length).toBe(before);
    expect(a.status).toBe(b.status);
    expect(a.body).toBe(b.body);
    expect(JSON.parse(a.body)).toMatchObject({ errors: [{ extensions: { code: 'UNAUTHENTICATED' } }], extensions: { stamped: true } });
  });

  it('with the header, the operation runs on both and the onExecutionResult hook marks it', async () => {
    const raw = json({ query: '{ contribuyente(ruc: "20100123453") { ruc } }' }, { 'x-tenant': 'acme' });
    const before = sandbox.calls.length;
    const [a, b] = [await send(fastPlug.url, raw), await send(yogaPlug.url, raw)];
    expect(sandbox.calls.length).toBe(before + 2);
    expect(a.status).toBe(200);
    expect(a.body).toBe(b.body);
    expect(JSON.parse(a.body)).toMatchObject({ data: { contribuyente: { ruc: '20100123453' } }, extensions: { stamped: true } });
  });

  it('a plugin with a Yoga hook the fast path does not run stops the start', async () => {
    const config = loadConfig({ UPSTREAM_URL: sandbox.url, HTTP_FAST_PATH: 'on' });
    const logger = createLogger(config, new Writable({ write: (_c, _e, done) => done() }));
    const onResponse: Plugin = { onResponse: () => undefined };
    expect(() => createApp(config, { logger, plugins: [onResponse] })).toThrow(/onResponse, which the fast path does not run/);
    const traced: Plugin = { instrumentation: { request: (_payload, wrapped) => wrapped() } };
    expect(() => createApp(config, { logger, plugins: [traced] })).toThrow(/instrumentation.request, which the fast path does not run/);
    // Through Yoga alone, the same plugin is welcome.
    const app = createApp({ ...config, httpFastPath: false }, { logger, plugins: [onResponse] });
    await app.dispose();
  });
});

async function takenBy(stack: Stack): Promise<number> {
  const text = await (await fetch(`${stack.url}/metrics`)).text();
  return Number(/^gateway_fast_path_requests_total (\d+)/m.exec(text)?.[1] ?? NaN);
}

describe("an incremental operation on the fast path's transport, which writes one JSON result", () => {
  it('is refused typed before any call, decided from the parsed document, whatever the Accept', async () => {
    sandbox.reset();
    const request = new Request('http://localhost/graphql', {
      method: 'POST',
      headers: { accept: '*/*', authorization: `Bearer ${TOKEN}` },
    });
    const enveloped = fast.app.yoga.getEnveloped({ request, [ONE_RESULT_ONLY]: true } as never);
    const document = enveloped.parse('{ contribuyente(ruc: "20100123453") { ruc ... @ # hidden\n defer { detalle { ruc } } } }');
    expect(enveloped.validate(enveloped.schema, document)).toEqual([]);
    const result = (await enveloped.execute({
      schema: enveloped.schema,
      document,
      contextValue: await enveloped.contextFactory(),
    })) as { errors?: { extensions: Record<string, unknown> }[] };
    expect(Symbol.asyncIterator in result).toBe(false);
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', retryable: false });
    expect(sandbox.calls).toHaveLength(0);
  });
});
