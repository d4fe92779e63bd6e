import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApolloClient, HttpLink, InMemoryCache } from '@apollo/client';
import { relayStylePagination } from '@apollo/client/utilities';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AutocompletarDocument } from '../../operations/generated/graphql.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { expected, lineOf, mirrorOf, register, type Row } from '../fixtures/register.js';
import { startStack, TOKEN, type Stack } from '../helpers.js';

/**
 * `buscarContribuyentes` through the gateway's socket, over a register served by a loopback
 * mirror (test/fixtures/register.ts works out every answer on its own), with the sandbox
 * recording that no search ever reaches the service.
 */
const SEARCH = `query Buscar($texto: String!, $filtro: FiltroBusqueda, $first: Int, $after: String) {
  buscarContribuyentes(texto: $texto, filtro: $filtro, first: $first, after: $after) {
    edges { cursor node { ruc nombreORazonSocial estado fuente } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;
type Page = {
  edges: { cursor: string; node: { ruc: string; nombreORazonSocial: string; estado: string; fuente: string } }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
};
type Body = { data?: { buscarContribuyentes: Page } | null; errors?: { message: string; extensions: Record<string, unknown> }[] };

const ROWS: Row[] = register(1_500);
let sandbox: Sandbox;
let dirs: string[] = [];
let mirror: Awaited<ReturnType<typeof mirrorOf>>;
let stack: Stack;

async function ready(s: Stack, withinMs = 15_000) {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const { padron } = (await (await fetch(`${s.url}/health`)).json()) as { padron: { state: string; date: string } };
    if (padron.state === 'ready') return padron;
    if (Date.now() > deadline) throw new Error(`never ready: ${JSON.stringify(padron)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const withRegister = (url: string, refreshMs = 3_600_000, env: Record<string, string> = {}) => {
  const dir = mkdtempSync(join(tmpdir(), 'buscar-'));
  dirs.push(dir);
  return startStack({ sharedSandbox: sandbox, env: { PADRON: url, PADRON_DIR: dir, PADRON_REFRESH_MS: String(refreshMs), ...env } });
};

beforeAll(async () => {
  sandbox = await startSandbox();
  mirror = await mirrorOf(ROWS.map(lineOf));
  stack = await withRegister(mirror.url);
  await ready(stack);
});
afterAll(async () => {
  await stack?.close();
  mirror?.server.close();
  await sandbox?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function search(s: Stack, variables: Record<string, unknown>): Promise<Body> {
  return (await s.gql(SEARCH, variables)).body as Body;
}

describe('buscarContribuyentes through the gateway', () => {
  it.each(['com andi', 'quispe', 'peña', 'sac', 'a b c'])(
    'walks every match of %j once, in order, at 0 queries and no call',
    async (texto) => {
      sandbox.reset();
      const rucs: string[] = [];
      let after: string | undefined;
      for (;;) {
        const body = await search(stack, { texto, first: 50, after });
        expect(body.errors).toBeUndefined();
        const page = body.data!.buscarContribuyentes;
        for (const e of page.edges) expect(e.node.fuente).toBe('PADRON');
        rucs.push(...page.edges.map((e) => e.node.ruc));
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor!;
      }
      expect(rucs).toEqual(expected(ROWS, texto));
      expect(sandbox.calls).toHaveLength(0);
    },
  );

  it('filters by estado, condición, ubigeo and tipo', async () => {
    const filtro = { estados: ['activo'], condiciones: ['HABIDO'], ubigeo: '15', tipo: 'EMPRESA' as const };
    const body = await search(stack, { texto: 'com', filtro, first: 50 });
    expect(body.data!.buscarContribuyentes.edges.map((e) => e.node.ruc)).toEqual(expected(ROWS, 'com', filtro).slice(0, 50));
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['a text of fewer than 3 letters or digits', { texto: 'a b' }, /al menos 3/],
    ['a text over 100 characters', { texto: 'x'.repeat(101) }, /a lo más 100/],
    ['first 0', { texto: 'com', first: 0 }, /first/],
    ['first 51', { texto: 'com', first: 51 }, /first/],
    ['an ubigeo of 3 digits', { texto: 'com', filtro: { ubigeo: '150' } }, /ubigeo/],
    ['a forged cursor', { texto: 'com', after: 'Zm9yZ2Vk' }, /cursor/],
    ['an 11-digit text that is no RUC', { texto: '20100123454' }, /RUC/],
  ])('refuses %s with INVALID_INPUT, doing nothing', async (_what, variables, message) => {
    sandbox.reset();
    const body = await search(stack, variables);
    expect(body.errors?.[0]).toMatchObject({
      message: expect.stringMatching(message),
      extensions: { code: 'INVALID_INPUT', retryable: false },
    });
    expect(sandbox.calls).toHaveLength(0);
  });

  it("pages with Apollo Client's relayStylePagination, as docs/clients.md shows: fetchMore appends the next page", async () => {
    const apollo = new ApolloClient({
      link: new HttpLink({ uri: `${stack.url}/graphql`, headers: { authorization: `Bearer ${TOKEN}` } }),
      cache: new InMemoryCache({
        typePolicies: { Query: { fields: { buscarContribuyentes: relayStylePagination(['texto', 'filtro']) } } },
      }),
    });
    const variables = { texto: 'com', first: 4 };
    const first = await apollo.query({ query: AutocompletarDocument, variables });
    const after = first.data!.buscarContribuyentes.pageInfo.endCursor;
    // As fetchMore sends it: from the network, merged into the same list (its key is texto and filtro).
    await apollo.query({ query: AutocompletarDocument, variables: { ...variables, after }, fetchPolicy: 'network-only' });
    const merged = apollo.readQuery({ query: AutocompletarDocument, variables })!;
    expect(merged.buscarContribuyentes.edges.map((e) => e.node.ruc)).toEqual(expected(ROWS, 'com').slice(0, 8));
    apollo.stop();
  });

  it('refuses a cursor of another search', async () => {
    const page = (await search(stack, { texto: 'com', first: 2 })).data!.buscarContribuyentes;
    const body = await search(stack, { texto: 'san', first: 2, after: page.pageInfo.endCursor });
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('prices the fields below the nodes with `first` as the page size, before anything runs', async () => {
    const tight = await withRegister(mirror.url, 3_600_000, { MAX_OPERATION_COST: '20' });
    try {
      await ready(tight);
      const query = (first: number) => `{ buscarContribuyentes(texto: "com", first: ${first}) { edges { node { ruc detalle { ruc } } } } }`;
      sandbox.reset();
      // 21 detailed records at 1 query each: over 20, refused whole before any call.
      const refused = (await tight.gql(query(21))).body as Body;
      expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'COST_LIMIT_EXCEEDED' });
      expect(sandbox.calls).toHaveLength(0);
      const allowed = (await tight.gql(query(20))).body as Body;
      expect(allowed.errors?.find((e) => e.extensions['code'] === 'COST_LIMIT_EXCEEDED')).toBeUndefined();
      expect(sandbox.callsTo('/ruc-sunat').length).toBeGreaterThan(0);
      expect(sandbox.callsTo('/ruc-sunat').length).toBeLessThanOrEqual(20);
    } finally {
      await tight.close();
    }
  });

  it('refuses a cursor taken before the register switched: a new version is a new order', async () => {
    const switching = await withRegister(mirror.url, 400);
    try {
      await ready(switching);
      const page = (await search(switching, { texto: 'com', first: 2 })).data!.buscarContribuyentes;
      // Read after the page: a switch may come between, so the page is of this version or an older one.
      const first = await ready(switching);
      // The mirror publishes the register again, a second newer: the next refresh imports a new version.
      await mirror.set(ROWS.map(lineOf));
      const deadline = Date.now() + 15_000;
      while ((await ready(switching)).date === first.date && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect((await ready(switching)).date, 'the register switched').not.toBe(first.date);
      const body = await search(switching, { texto: 'com', first: 2, after: page.pageInfo.endCursor });
      expect(body.errors?.[0]).toMatchObject({
        message: expect.stringMatching(/otra versión del padrón/),
        extensions: { code: 'INVALID_INPUT' },
      });
    } finally {
      await switching.close();
    }
  });
});

describe('without a register', () => {
  it('is REGISTER_UNAVAILABLE, not retryable, with PADRON off; retryable before the first import; never a call', async () => {
    sandbox.reset();
    const off = await startStack({ sharedSandbox: sandbox });
    try {
      const body = (await off.gql(SEARCH, { texto: 'comercial' })).body as Body;
      expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'REGISTER_UNAVAILABLE', retryable: false });
    } finally {
      await off.close();
    }
    const nothing = await withRegister('http://127.0.0.1:9/');
    try {
      const body = (await nothing.gql(SEARCH, { texto: 'comercial' })).body as Body;
      expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'REGISTER_UNAVAILABLE', retryable: true });
    } finally {
      await nothing.close();
    }
    expect(sandbox.calls).toHaveLength(0);
  });
});
