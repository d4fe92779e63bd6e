import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post as postTo, startStack, TOKEN, type Stack } from '../helpers.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

interface Raw {
  status: number;
  body: string;
  json?: { errors?: { message: string; extensions?: Record<string, unknown> }[]; data?: unknown };
}

/** One request over a real socket, exactly as given; fails the test if no answer comes in 5 s. */
function raw(method: string, path: string, headers: Record<string, string>, body?: Buffer | string): Promise<Raw> {
  const url = new URL(stack.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers, timeout: 5000, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: Raw['json'];
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, body: text, json });
      });
    });
    req.on('timeout', () => req.destroy(new Error('no answer in 5 s (hang)')));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const JSON_HEADERS = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` };
const post = (body: Buffer | string, headers: Record<string, string> = JSON_HEADERS) => raw('POST', '/graphql', headers, body);

/** A 4xx, or a 200 whose errors are all typed; never a 5xx; never an upstream call. */
function expectRefusedCleanly(res: Raw) {
  expect(res.status, res.body.slice(0, 300)).toBeLessThan(500);
  expect(res.status === 200 || (res.status >= 400 && res.status < 500), `status ${res.status}`).toBe(true);
  if (res.json?.errors) {
    for (const e of res.json.errors) {
      expect(typeof e.extensions?.['code'], e.message).toBe('string');
      expect(e.extensions?.['retryable'], e.message).toBe(false);
    }
  }
  if (res.status === 200) expect(res.json?.errors?.length, res.body.slice(0, 300)).toBeGreaterThan(0);
  expect(res.body).not.toMatch(/at .+\.(ts|js):\d+/); // no stack trace
}

const CASES: [string, () => Promise<Raw>][] = [
  ['malformed JSON', () => post('{"query": "{ __typename }"')],
  ['a JSON string instead of an object', () => post('"{ __typename }"')],
  ['a query that is not a string', () => post(JSON.stringify({ query: 42 }))],
  ['variables that are not an object', () => post(JSON.stringify({ query: '{ __typename }', variables: 'x' }))],
  ['an empty body', () => post('')],
  ['no query at all', () => post('{}')],
  ['an unknown operationName', () => post(JSON.stringify({ query: 'query A { __typename }', operationName: 'B' }))],
  ['text/xml content type', () => post('<query>{ __typename }</query>', { ...JSON_HEADERS, 'content-type': 'text/xml' })],
  [
    'text/plain content type (no CSRF header)',
    () => post(JSON.stringify({ query: '{ __typename }' }), { ...JSON_HEADERS, 'content-type': 'text/plain' }),
  ],
  [
    // As a form on another site would send it: no token (with one, it could not be sent cross-site).
    'form-encoded content type, no token',
    () => post('query=%7B__typename%7D', { 'content-type': 'application/x-www-form-urlencoded' }),
  ],
  [
    'GET with a body and no query string',
    () => raw('GET', '/graphql', { ...JSON_HEADERS, accept: 'application/json' }, JSON.stringify({ query: '{ __typename }' })),
  ],
  [
    'GET of a mutation',
    () =>
      raw(
        'GET',
        `/graphql?query=${encodeURIComponent('mutation { validarComprobantesTexto(comprobantes: ["x"]) { cantidadDeComprobantes } }')}`,
        { ...JSON_HEADERS, accept: 'application/json', 'x-graphql-yoga-csrf': '1' },
      ),
  ],
  ['PUT', () => raw('PUT', '/graphql', JSON_HEADERS, JSON.stringify({ query: '{ __typename }' }))],
  ['DELETE', () => raw('DELETE', '/graphql', JSON_HEADERS)],
  ['an unknown path', () => raw('POST', '/graphql/../../etc/passwd', JSON_HEADERS, '{}')],
  ['a 90 kB RUC', () => post(JSON.stringify({ query: `{ contribuyente(ruc: "${'1'.repeat(90_000)}") { ruc } }` }))],
  [
    'a 90 kB licence number in a variable',
    () =>
      post(JSON.stringify({ query: 'query($n: String!) { licencia(numLicencia: $n) { nombres } }', variables: { n: 'Q'.repeat(90_000) } })),
  ],
  ['a body over the size limit', () => post(JSON.stringify({ query: '{ __typename }', variables: { x: 'x'.repeat(300_000) } }))],
  ['a lying Content-Length', () => raw('POST', '/graphql', { ...JSON_HEADERS, 'content-length': '-5' })],
  [
    'deeply nested list literals',
    () => post(JSON.stringify({ query: `{ contribuyentes(rucs: ${'['.repeat(500)}"20100123453"${']'.repeat(500)}) { ruc } }` })),
  ],
  [
    'deeply nested JSON variables',
    () =>
      post(
        `{"query":"query($r: [String!]!) { contribuyentes(rucs: $r) { ruc } }","variables":{"r":${'['.repeat(5000)}${']'.repeat(5000)}}}`,
      ),
  ],
  [
    'deep introspection nesting',
    () => post(JSON.stringify({ query: `{ __type(name: "Query") { ${'ofType { '.repeat(1500)}name${' }'.repeat(1500)} } }` })),
  ],
  [
    '10,000 aliases',
    () => post(JSON.stringify({ query: `{ ${Array.from({ length: 10_000 }, (_, i) => `a${i}: __typename`).join(' ')} }` })),
  ],
  [
    '10,000 aliases of a lookup',
    () =>
      post(
        JSON.stringify({
          query: `{ ${Array.from({ length: 10_000 }, (_, i) => `a${i}: contribuyente(ruc: "20100123453") { ruc }`).join(' ')} }`,
        }),
      ),
  ],
  [
    'invalid UTF-8 inside a string',
    () =>
      post(
        Buffer.concat([
          Buffer.from('{"query":"{ contribuyente(ruc: \\"2010'),
          Buffer.from([0xff, 0xfe, 0xc3]),
          Buffer.from('\\") { ruc } }"}'),
        ]),
      ),
  ],
  [
    'invalid UTF-8 outside strings',
    () => post(Buffer.concat([Buffer.from('{"query":'), Buffer.from([0xc0, 0x80, 0xff]), Buffer.from('}')])),
  ],
  ['NUL bytes in the query', () => post(JSON.stringify({ query: '{ contribuyente(ruc: "\u0000\u0000") { ruc } }' }))],
  ['unknown fields', () => post(JSON.stringify({ query: '{ contribuyente(ruc: "20100123453") { ruc password } usuarios { id } }' }))],
  ['an unknown argument', () => post(JSON.stringify({ query: '{ contribuyente(ruc: "20100123453", limit: 1000) { ruc } }' }))],
  [
    'variables of the wrong type',
    () => post(JSON.stringify({ query: 'query($r: [String!]!) { contribuyentes(rucs: $r) { ruc } }', variables: { r: { ruc: 1 } } })),
  ],
  [
    'a null for a non-null variable',
    () => post(JSON.stringify({ query: 'query($r: String!) { contribuyente(ruc: $r) { ruc } }', variables: { r: null } })),
  ],
  [
    'an oversized variable list (10,001 RUCs: over MAX_RUCS_PER_LIST)',
    () =>
      post(
        JSON.stringify({
          query: 'query($r: [String!]!) { contribuyentes(rucs: $r) { ruc } }',
          variables: { r: Array.from({ length: 10_001 }, () => '20100123453') },
        }),
      ),
  ],
  [
    'an oversized receipt list (1,000 lines)',
    () =>
      post(
        JSON.stringify({
          query: 'mutation($c: [String!]!) { validarComprobantesTexto(comprobantes: $c) { cantidadDeComprobantes } }',
          variables: { c: Array.from({ length: 1000 }, () => '20100123453|01|F001|1|2026-10-01|1.00') },
        }),
      ),
  ],
  ['a subscription', () => post(JSON.stringify({ query: 'subscription { contribuyente(ruc: "20100123453") { ruc } }' }))],
  [
    '__proto__ pollution in variables',
    () =>
      post(
        '{"query":"query($r: String!) { contribuyente(ruc: $r) { ruc } }","variables":{"__proto__":{"r":"20100123453"},"constructor":{"prototype":{"x":1}}}}',
      ),
  ],
  [
    'a header with a 10 kB token',
    () =>
      raw(
        'POST',
        '/graphql',
        { ...JSON_HEADERS, authorization: `Bearer ${'t'.repeat(10_000)}` },
        JSON.stringify({ query: '{ contribuyente(ruc: "123") { ruc } }' }),
      ),
  ],
];

describe('hostile requests: a 4xx or a typed error, never a 500, a crash, a hang or an upstream call', () => {
  for (const [name, send] of CASES) {
    it(name, async () => {
      stack.sandbox.reset();
      expectRefusedCleanly(await send());
      expect(stack.sandbox.calls).toHaveLength(0);
    });
  }

  it('a JSON body with no document, or a batch, is a typed 400 in Spanish that quotes nothing of the parser', async () => {
    for (const body of ['{}', '{"variables":{"ruc":"20100123453"}}', '[]', '[{"query":"{ __typename }"}]']) {
      const res = await postTo(`${stack.url}/graphql`, body);
      expect(res.status, body).toBe(400);
      const answer = (await res.json()) as { errors: { message: string; extensions: Record<string, unknown> }[] };
      expect(answer.errors[0]?.extensions, body).toEqual({ code: 'BAD_REQUEST', retryable: false });
      expect(answer.errors[0]?.message, body).toMatch(body.startsWith('[') ? /no se aceptan lotes/ : /^Falta el documento GraphQL/);
    }
  });

  it('a keep-alive client refused with 413 mid-body is not left hanging on its next request', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const url = new URL(stack.url);
    const send = (body: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          { host: url.hostname, port: url.port, method: 'POST', path: '/graphql', agent, headers: JSON_HEADERS, timeout: 3000 },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('timeout', () => req.destroy(new Error('hang')));
        req.on('error', reject);
        // write() then end(): chunked, no Content-Length, so the limit is found while reading.
        req.write(body);
        req.end();
      });
    try {
      expect(await send(JSON.stringify({ query: '{ __typename }', variables: { x: 'x'.repeat(300_000) } }))).toBe(413);
      expect(await send(JSON.stringify({ query: '{ __typename }' }))).toBe(200);
    } finally {
      agent.destroy();
    }
  });

  it('headers over Node’s 16 KB (a 20 KB token) get a 431 a browser can read: the JSON error body and the CORS headers', async () => {
    const res = await fetch(`${stack.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://app.example.pe', authorization: `Bearer ${'x'.repeat(20_000)}` },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(res.status).toBe(431);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const answer = (await res.json()) as { errors: { message: string; extensions: Record<string, unknown> }[] };
    expect(answer.errors[0]?.extensions).toEqual({ code: 'BAD_REQUEST', retryable: false });
    expect(answer.errors[0]?.message).toMatch(/cabeceras/);
    expect(JSON.stringify(answer)).not.toContain('xxxxxxxx');
  });

  it('a pipelined request with headers too large never takes the place of the answer under way, which arrives whole', async () => {
    const url = new URL(stack.url);
    const body = JSON.stringify({ query: '{ contribuyente(ruc: "20100123453") { ruc } }' });
    const first = `POST /graphql HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\nauthorization: Bearer ${TOKEN}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const second = `GET /graphql HTTP/1.1\r\nHost: x\r\nauthorization: Bearer ${'x'.repeat(20_000)}\r\n\r\n`;
    const received = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname);
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      socket.setTimeout(5000, () => socket.destroy(new Error('hang')));
      socket.write(first + second);
    });
    const statuses = [...received.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => Number(m[1]));
    // The connection then closes (that answer said it would), with the 431 where it is still open.
    expect(statuses[0]).toBe(200);
    expect(statuses.slice(1).every((status) => status === 431)).toBe(true);
    expect(received).toContain('{"data":{"contribuyente":{"ruc":"20100123453"}}');
  });

  it('leaves the gateway serving afterwards', async () => {
    const { body } = await stack.gql('{ contribuyente(ruc: "20100123453") { ruc } }');
    expect(body.data).toEqual({ contribuyente: { ruc: '20100123453' } });
  });
});
