import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { ApolloClient, CombinedGraphQLErrors, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { Client, fetchExchange } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { EjemploDocument, ValidarComprobantesTextoDocument } from '../../operations/generated/graphql.js';
import { memoryApqStore, redisApqStore } from '../../src/pipeline/apq-store.js';
import { RedisLink } from '../../src/data/redis.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { post as postTo, startRedis, startStack, TOKEN, type RedisServer, type Stack } from '../helpers.js';

const QUERY = 'query Uno($ruc: String!) { contribuyente(ruc: $ruc) { ruc nombreORazonSocial } }';
const HASH = createHash('sha256').update(QUERY).digest('hex');
const VARIABLES = { ruc: '20100123453' };
const MANIFEST = 'operations/generated/persisted-documents.json';
const RECEIPT_LINE = '20100123453|01|F001|1532|2024-01-15|118.00';

async function post(stack: Stack, body: unknown) {
  const res = await postTo(`${stack.url}/graphql`, body);
  return {
    status: res.status,
    body: (await res.json()) as { data?: unknown; errors?: { message: string; extensions: Record<string, unknown> }[] },
  };
}
const apq = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });

const stacks: Stack[] = [];
const open = async (env: Record<string, string> = {}, sharedSandbox?: Sandbox) => {
  const stack = await startStack({ env, ...(sharedSandbox ? { sharedSandbox } : {}) });
  stacks.push(stack);
  return stack;
};
afterEach(async () => {
  while (stacks.length) await stacks.pop()!.close();
});

describe('automatic persisted queries', () => {
  it('answers an unknown hash with PersistedQueryNotFound, checks a hash against its query, then takes the hash alone (POST and GET)', async () => {
    const stack = await open();
    const unknown = await post(stack, { extensions: apq(HASH), variables: VARIABLES });
    expect(unknown.status).toBe(200);
    expect(unknown.body.errors?.[0]).toMatchObject({
      message: 'PersistedQueryNotFound',
      extensions: { code: 'PERSISTED_QUERY_NOT_FOUND', retryable: false },
    });

    const wrong = await post(stack, { query: QUERY, extensions: apq('0'.repeat(64)), variables: VARIABLES });
    expect(wrong.body.errors?.[0]?.extensions).toMatchObject({ code: 'PERSISTED_QUERY_MISMATCH' });
    expect(stack.sandbox.calls).toHaveLength(0);

    const registered = await post(stack, { query: QUERY, extensions: apq(HASH), variables: VARIABLES });
    expect(registered.body).toMatchObject({ data: { contribuyente: { ruc: '20100123453' } } });
    const alone = await post(stack, { extensions: apq(HASH), variables: VARIABLES });
    expect(alone.body).toMatchObject({ data: { contribuyente: { ruc: '20100123453' } } });

    const params = new URLSearchParams({ extensions: JSON.stringify(apq(HASH)), variables: JSON.stringify(VARIABLES) });
    const get = await fetch(`${stack.url}/graphql?${params}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(await get.json()).toMatchObject({ data: { contribuyente: { ruc: '20100123453' } } });
    // Three operations ran (CACHE=off): three calls; the refusals made none.
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(3);
  });

  it("work with urql's persistedExchange, persisted queries as GET: the document is sent once", async () => {
    const stack = await open();
    const sent: string[] = [];
    const client = new Client({
      url: `${stack.url}/graphql`,
      exchanges: [persistedExchange({ preferGetForPersistedQueries: true }), fetchExchange],
      fetchOptions: { headers: { authorization: `Bearer ${TOKEN}` } },
      fetch: (input, init) => {
        sent.push(
          `${init?.method ?? 'GET'} ${String(input).includes('query=') || String(init?.body ?? '').includes('"query"') ? 'with document' : 'hash only'}`,
        );
        return fetch(input, init);
      },
    });
    for (let i = 0; i < 2; i++) {
      const result = await client.query(QUERY, VARIABLES, { requestPolicy: 'network-only' }).toPromise();
      expect(result.error).toBeUndefined();
      expect(result.data).toMatchObject({ contribuyente: { ruc: '20100123453' } });
    }
    expect(sent).toEqual(['GET hash only', 'GET with document', 'GET hash only']);
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(2);
  });

  it("work with Apollo Client's PersistedQueryLink: the hash first, the document once", async () => {
    const stack = await open();
    const sent: string[] = [];
    const client = new ApolloClient({
      link: new PersistedQueryLink({ sha256: (q: string) => createHash('sha256').update(q).digest('hex') }).concat(
        new HttpLink({
          uri: `${stack.url}/graphql`,
          headers: { authorization: `Bearer ${TOKEN}` },
          fetch: (input, init) => {
            sent.push(String(init?.body ?? '').includes('"query"') ? 'with document' : 'hash only');
            return fetch(input, init);
          },
        }),
      ),
      cache: new InMemoryCache(),
    });
    for (let i = 0; i < 2; i++) {
      const result = await client.query({ query: gql(QUERY), variables: VARIABLES, fetchPolicy: 'network-only' });
      expect(result.data).toMatchObject({ contribuyente: { ruc: '20100123453' } });
    }
    expect(sent).toEqual(['hash only', 'with document', 'hash only']);
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(2);
  });

  it('keeps registered documents within a bound in bytes and one in entries, older ones out first', async () => {
    const bytes = memoryApqStore({ maxEntries: 100, maxBytes: 1000 });
    for (let i = 0; i < 10; i++) await bytes.set(`h${i}`, 'ñ'.repeat(150)); // 300 bytes each
    expect(await bytes.get('h6')).toBeUndefined();
    expect(await bytes.get('h9')).toBe('ñ'.repeat(150));
    const entries = memoryApqStore({ maxEntries: 3, maxBytes: 1_000_000 });
    for (let i = 0; i < 10; i++) await entries.set(`h${i}`, 'x');
    expect(await entries.get('h6')).toBeUndefined();
    expect(await entries.get('h7')).toBe('x');
  });

  it('keeps no document that fails to parse, validate or pass a limit: its hash stays unknown, and no call is made', async () => {
    const stack = await open({ MAX_ALIASES: '2', MAX_OPERATION_COST: '2' });
    const refused = [
      '{ contribuyente(ruc: ',
      '{ noSuchField }',
      '{ a: contribuyente(ruc: "20100123453") { ruc } b: contribuyente(ruc: "20100123453") { ruc } c: contribuyente(ruc: "20100123453") { ruc } }',
      // Over MAX_OPERATION_COST (2): three distinct RUCs.
      '{ contribuyentes(rucs: ["20100123453", "20501234568", "20602345671"]) { ruc } }',
    ];
    for (const query of refused) {
      const hash = createHash('sha256').update(query).digest('hex');
      const sent = await post(stack, { query, extensions: apq(hash) });
      expect(sent.body.errors?.length, query).toBeGreaterThan(0);
      const alone = await post(stack, { extensions: apq(hash) });
      expect(alone.body.errors?.[0]?.extensions, query).toMatchObject({ code: 'PERSISTED_QUERY_NOT_FOUND' });
    }
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  describe('through Redis', () => {
    let redis: RedisServer;
    afterAll(() => redis?.stop());
    it('a document registered on one instance is known to another', async () => {
      redis = await startRedis();
      const sandbox = await startSandbox();
      const env = { REDIS_URL: redis.url, CACHE_KEY_SECRET: 'a-secret-of-sixteen-chars' };
      const [a, b] = [await open(env, sandbox), await open(env, sandbox)];
      // Each instance's store connects in the background, and one not yet up keeps nothing (the
      // client registers again): on a busy machine, register until both are up, within 5 s.
      let known: unknown;
      for (const deadline = Date.now() + 5000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
        await post(a, { query: QUERY, extensions: apq(HASH), variables: VARIABLES });
        known = (await post(b, { extensions: apq(HASH), variables: VARIABLES })).body;
        if ((known as { data?: unknown }).data) break;
      }
      expect(known).toMatchObject({ data: { contribuyente: { ruc: '20100123453' } } });
      await Promise.all(stacks.splice(0).map((s) => s.close()));
      await sandbox.close();
    });

    it('keeps the documents within bounds in entries and bytes in Redis too, older and expired ones out first', async () => {
      redis ??= await startRedis();
      const inspect = new Redis(redis.url);
      // Redis is stopped on purpose in some tests: its errors are expected, not unhandled.
      inspect.on('error', () => undefined);
      await inspect.flushall();
      const links = [new RedisLink({ url: redis.url }), new RedisLink({ url: redis.url })];
      const store = redisApqStore(links[0]!, { maxEntries: 3, maxBytes: 1000 }, 60_000);
      // Commands fail until the store's connection is up (no offline queue): wait for it.
      for (let i = 0; i < 100 && (await store.set('probe', 'x'), await store.get('probe')) !== 'x'; i++)
        await new Promise((r) => setTimeout(r, 20));
      await inspect.flushall();
      for (let i = 0; i < 5; i++) await store.set(`e${i}`, 'x');
      expect(await Promise.all([0, 1, 2, 3, 4].map((i) => store.get(`e${i}`)))).toEqual([null, null, 'x', 'x', 'x']);
      for (let i = 0; i < 5; i++) await store.set(`b${i}`, 'ñ'.repeat(150)); // 300 bytes each
      expect(await store.get('b1')).toBeNull();
      expect(await store.get('b4')).toBe('ñ'.repeat(150));
      expect(Number(await inspect.get('gw2:{apq}:bytes'))).toBeLessThanOrEqual(1000);
      expect(await inspect.hlen('gw2:{apq}:docs')).toBeLessThanOrEqual(3);
      // Over the bound alone: not kept at all.
      await store.set('huge', 'x'.repeat(1001));
      expect(await store.get('huge')).toBeNull();
      // Kept a second: long enough for a busy machine to read it back, short enough to see it go.
      const brief = redisApqStore(links[1]!, { maxEntries: 3, maxBytes: 1000 }, 1000);
      for (let i = 0; i < 100 && (await brief.get('e4')) !== 'x'; i++) await new Promise((r) => setTimeout(r, 20));
      await brief.set('brief', 'x');
      expect(await brief.get('brief')).toBe('x');
      await new Promise((r) => setTimeout(r, 1100));
      expect(await brief.get('brief')).toBeNull();
      await Promise.all(links.map((l) => l.close()));
      inspect.disconnect();
    });
  });
});

describe('trusted documents (TRUSTED_DOCUMENTS)', () => {
  const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8')) as Record<string, string>;
  const [ejemploId, ejemplo] = Object.entries(manifest).find(([, doc]) => doc.includes('query Ejemplo'))!;

  it('runs a document of the manifest by documentId or by its APQ hash, and refuses any other with no upstream call', async () => {
    const stack = await open({ TRUSTED_DOCUMENTS: MANIFEST });
    const variables = { ruc: '20100123453', numLicencia: 'Q46779354' };
    const byId = await post(stack, { documentId: ejemploId, variables });
    expect(byId.body.errors).toBeUndefined();
    expect(byId.body.data).toMatchObject({ contribuyente: { ruc: '20100123453' }, licencia: { nombres: 'ROSA ELENA' } });
    const byHash = await post(stack, { extensions: apq(ejemploId.replace(/^sha256:/, '')), variables });
    expect(byHash.body.errors).toBeUndefined();
    const callsOfTrusted = stack.sandbox.calls.length;
    expect(callsOfTrusted).toBeGreaterThan(0);

    for (const refused of [
      { query: ejemplo, variables },
      { query: QUERY, variables: VARIABLES },
      { documentId: 'sha256:0000', variables },
      { query: QUERY, extensions: apq(HASH), variables: VARIABLES },
    ]) {
      const { status, body } = await post(stack, refused);
      expect(status).toBe(400);
      expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'DOCUMENT_NOT_TRUSTED', retryable: false });
    }
    expect(stack.sandbox.calls).toHaveLength(callsOfTrusted);
  });

  it('takes documentId on GET too, and no name off the prototype chain', async () => {
    const stack = await open({ TRUSTED_DOCUMENTS: MANIFEST });
    const [id] = Object.entries(manifest).find(([, doc]) => doc.includes('query Contribuyente('))!;
    const params = new URLSearchParams({ documentId: id, variables: JSON.stringify({ ruc: '20100123453' }) });
    const get = await fetch(`${stack.url}/graphql?${params}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(await get.json()).toMatchObject({ data: { contribuyente: { ruc: '20100123453' } } });
    const calls = stack.sandbox.calls.length;
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      for (const body of [{ documentId: name }, { extensions: apq(name) }]) {
        const { status, body: answer } = await post(stack, body);
        expect(status, name).toBe(400);
        expect(answer.errors?.[0]?.extensions, name).toMatchObject({ code: 'DOCUMENT_NOT_TRUSTED' });
      }
    }
    expect(stack.sandbox.calls).toHaveLength(calls);
  });

  describe('from the frontend clients, naming each generated document by the hash codegen wrote into it', () => {
    /** The README's helper: the manifest's key of a generated document (its `__meta__.hash`). */
    const manifestHash = (document: object) => (document as { __meta__?: { hash?: string } }).__meta__?.hash;
    const variables = { ruc: '20100123453', numLicencia: 'Q46779354' };

    /** What each request carried, to show that no document ever leaves the client. */
    const recording = (sent: string[]) => (input: RequestInfo | URL, init?: RequestInit) => {
      const url = String(input);
      sent.push(
        `${init?.method ?? 'GET'} ${url.includes('query=') || String(init?.body ?? '').includes('"query"') ? 'with document' : 'hash only'}`,
      );
      return fetch(input, init);
    };

    const apollo = (stack: Stack, link: PersistedQueryLink, sent: string[]) =>
      new ApolloClient({
        link: link.concat(
          new HttpLink({ uri: `${stack.url}/graphql`, headers: { authorization: `Bearer ${TOKEN}` }, fetch: recording(sent) }),
        ),
        cache: new InMemoryCache(),
      });

    it("Apollo Client's PersistedQueryLink with generateHash: the query and the mutation run, sent by hash alone", async () => {
      const stack = await open({ TRUSTED_DOCUMENTS: MANIFEST });
      const sent: string[] = [];
      const client = apollo(stack, new PersistedQueryLink({ generateHash: (document) => manifestHash(document)! }), sent);
      const query = await client.query({ query: EjemploDocument, variables, errorPolicy: 'all' });
      expect(query.error).toBeUndefined();
      expect(query.data).toMatchObject({ contribuyente: { ruc: '20100123453' }, licencia: { nombres: 'ROSA ELENA' } });
      const mutation = await client.mutate({ mutation: ValidarComprobantesTextoDocument, variables: { comprobantes: [RECEIPT_LINE] } });
      expect(mutation.data?.validarComprobantesTexto?.cantidadDeComprobantes).toBe(1);
      expect(sent).toEqual(['POST hash only', 'POST hash only']);
      expect(stack.sandbox.callsTo('/licencia-conducir')).toHaveLength(1);
    });

    it('Apollo Client hashing its own rewritten document (the automatic snippet) is refused, with no call', async () => {
      const stack = await open({ TRUSTED_DOCUMENTS: MANIFEST });
      const sent: string[] = [];
      const client = apollo(stack, new PersistedQueryLink({ sha256: (q: string) => createHash('sha256').update(q).digest('hex') }), sent);
      const query = await client.query({ query: EjemploDocument, variables, errorPolicy: 'all' });
      expect(CombinedGraphQLErrors.is(query.error) && query.error.errors[0]?.extensions?.['code']).toBe('DOCUMENT_NOT_TRUSTED');
      expect(stack.sandbox.calls).toHaveLength(0);
    });

    it("urql's persistedExchange with generateHash and enforcePersistedQueries: the query (GET) and the mutation run, by hash alone", async () => {
      const stack = await open({ TRUSTED_DOCUMENTS: MANIFEST });
      const sent: string[] = [];
      const client = new Client({
        url: `${stack.url}/graphql`,
        exchanges: [
          persistedExchange({
            enforcePersistedQueries: true,
            enableForMutation: true,
            preferGetForPersistedQueries: true,
            generateHash: async (_query, document) => manifestHash(document),
          }),
          fetchExchange,
        ],
        fetchOptions: { headers: { authorization: `Bearer ${TOKEN}` } },
        fetch: recording(sent),
      });
      const query = await client.query(EjemploDocument, variables).toPromise();
      expect(query.error).toBeUndefined();
      expect(query.data).toMatchObject({ contribuyente: { ruc: '20100123453' }, licencia: { nombres: 'ROSA ELENA' } });
      const mutation = await client.mutation(ValidarComprobantesTextoDocument, { comprobantes: [RECEIPT_LINE] }).toPromise();
      expect(mutation.error).toBeUndefined();
      expect(mutation.data?.validarComprobantesTexto?.cantidadDeComprobantes).toBe(1);
      expect(sent).toEqual(['GET hash only', 'POST hash only']);
    });

    it("urql's persistedExchange as it comes (its own hash) is refused, with no call", async () => {
      const stack = await open({ TRUSTED_DOCUMENTS: MANIFEST });
      const client = new Client({
        url: `${stack.url}/graphql`,
        exchanges: [persistedExchange({ preferGetForPersistedQueries: true }), fetchExchange],
        fetchOptions: { headers: { authorization: `Bearer ${TOKEN}` } },
      });
      const query = await client.query(EjemploDocument, variables).toPromise();
      expect(query.error?.graphQLErrors[0]?.extensions['code']).toBe('DOCUMENT_NOT_TRUSTED');
      expect(stack.sandbox.calls).toHaveLength(0);
    });
  });

  it('serves the example client, which sends documentIds', async () => {
    const stack = await open({ TRUSTED_DOCUMENTS: MANIFEST });
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/client.ts'], {
      env: { PATH: process.env['PATH'], GATEWAY_URL: `${stack.url}/graphql`, GATEWAY_TOKEN: TOKEN, GATEWAY_DOCUMENT_IDS: '1' },
      timeout: 30_000,
    });
    expect(stdout).toContain('contribuyente: COMERCIAL ANDINA S.A.C.');
    expect(stdout).toContain('comprobante F001-1532: ACEPTADO');
  });

  it('stops the start with a clear message when the manifest cannot be read', async () => {
    await expect(open({ TRUSTED_DOCUMENTS: 'no/such/file.json' })).rejects.toThrow(
      /TRUSTED_DOCUMENTS: no se pudo leer no\/such\/file.json/,
    );
  });
});
