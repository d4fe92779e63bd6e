import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());

describe('GraphiQL and introspection', () => {
  it('serves GraphiQL at /graphql opening on the example operation, with how to set the token', async () => {
    const res = await fetch(`${stack.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('query Ejemplo');
    expect(html).toContain('contribuyente(ruc:');
    expect(html).toContain('detalle');
    expect(html).toContain('licencia(numLicencia:');
    expect(html).toContain('Authorization');
    // Served from our origin: no CDN needed behind a firewall.
    expect(html).not.toContain('unpkg.com');
  });

  it('leads a browser at the bare address to /graphql', async () => {
    const res = await fetch(`${stack.url}/`, { headers: { accept: 'text/html' }, redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/graphql');
    const followed = await fetch(`${stack.url}/`, { headers: { accept: 'text/html' } });
    expect(await followed.text()).toContain('query Ejemplo');
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('serves the GraphiQL bundle and its workers itself', async () => {
    for (const file of ['yoga-graphiql.umd.js', 'graphiql.css', 'monacoeditorwork/graphql.worker..bundle.js']) {
      const res = await fetch(`${stack.url}/graphiql-assets/${file}`);
      expect(res.status, file).toBe(200);
      expect(Number(res.headers.get('content-length')), file).toBeGreaterThan(1000);
      await res.arrayBuffer();
    }
    expect((await fetch(`${stack.url}/graphiql-assets/../../package.json`)).status).toBe(404);
    expect((await fetch(`${stack.url}/graphiql-assets/nope.js`)).status).toBe(404);
  });

  it('answers a name every object inherits (constructor, __proto__, ...) with the JSON 404, not a stack trace', async () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      const res = await fetch(`${stack.url}/graphiql-assets/${name}`);
      expect(res.status, name).toBe(404);
      const body = (await res.json()) as { errors: { extensions: unknown; message: string }[] };
      expect(body.errors[0]!.extensions, name).toEqual({ code: 'NOT_FOUND', retryable: false });
      expect(body.errors[0]!.message).not.toMatch(/ENOENT|\/work|node_modules/);
    }
  });

  it('answers the standard introspection query without a token, within the default limits, and without any upstream call', async () => {
    stack.sandbox.reset();
    const { body } = await stack.gql(getIntrospectionQuery(), undefined, { token: null });
    expect(body.errors).toBeUndefined();
    expect(JSON.stringify(body.data)).toContain('ErrorCode');
    expect(stack.sandbox.calls).toHaveLength(0);
  });
});

describe('GRAPHIQL=off (a production deployment that serves no IDE)', () => {
  let off: Stack;
  beforeAll(async () => {
    off = await startStack({ env: { GRAPHIQL: 'off' } });
  });
  afterAll(() => off.close());

  it('serves no GraphiQL page, files or redirect, and still answers GraphQL', async () => {
    const page = await fetch(`${off.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.status).not.toBe(200);
    expect(await page.text()).not.toContain('query Ejemplo');
    for (const path of ['/graphiql-assets/yoga-graphiql.umd.js', '/']) {
      const res = await fetch(`${off.url}${path}`, { redirect: 'manual' });
      expect(res.status, path).toBe(404);
      expect(await res.json(), path).toMatchObject({ errors: [{ extensions: { code: 'NOT_FOUND' } }] });
    }
    expect((await off.gql('{ contribuyente(ruc: "20100123453") { ruc } }')).body.data).toEqual({ contribuyente: { ruc: '20100123453' } });
  });

  it('runs no GET for HTML it cannot answer, and logs and counts every GET it runs', async () => {
    off.sandbox.reset();
    off.logs.length = 0;
    const query = encodeURIComponent('{ contribuyente(ruc: "20501234568") { ruc } }');
    const get = (accept: string) =>
      fetch(`${off.url}/graphql?query=${query}`, { headers: { accept, authorization: 'Bearer sandbox-pro' } });
    const html = await get('text/html');
    expect(html.status).toBe(406);
    expect(await html.json()).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST' } }] });
    expect(off.sandbox.calls).toHaveLength(0);
    const any = await get('text/html, */*');
    expect(any.status).toBe(200);
    expect(off.sandbox.calls).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 100)); // the log is written asynchronously
    // The one that ran is logged; the refusal ran nothing (refusals before any work are counted in gateway_errors_total).
    expect(off.logs.filter((l) => l.includes('"msg":"operation"') && l.includes('"upstreamCalls":1'))).toHaveLength(1);
  });
});
