import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import { composeServices, compositionHasErrors } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRIGGERS } from '../../../src/sandbox/data.js';
import { startSandbox, type Sandbox } from '../../../src/sandbox/server.js';
import { TAXPAYERS } from '../../../src/sandbox/taxpayers.js';
import { spawnGateway, TOKEN, type SpawnedGateway } from '../../helpers.js';
import { PEDIDOS_SDL, startPedidos } from './pedidos.js';

/**
 * The gateway as a subgraph of a real supergraph: composed with a second subgraph by The
 * Guild's composition library and served by Hive Gateway, which forwards the caller's
 * Authorization. The gateway runs as `npm start` runs it, default settings included.
 */
describe('in a supergraph, through Hive Gateway', () => {
  let sandbox: Sandbox;
  let gateway: SpawnedGateway;
  let pedidos: Awaited<ReturnType<typeof startPedidos>>;
  let router: Server;
  let routerUrl: string;
  let supergraph: string;

  beforeAll(async () => {
    sandbox = await startSandbox();
    gateway = await spawnGateway({ UPSTREAM_URL: sandbox.url });
    pedidos = await startPedidos();
    const sdl = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ _service { sdl } }' }),
    }).then(async (r) => ((await r.json()) as { data: { _service: { sdl: string } } }).data._service.sdl);
    const composed = composeServices([
      { name: 'registro', typeDefs: parse(sdl), url: gateway.url },
      { name: 'pedidos', typeDefs: parse(PEDIDOS_SDL), url: pedidos.url },
    ]);
    if (compositionHasErrors(composed)) throw new Error(composed.errors.map((e) => e.message).join('\n'));
    supergraph = composed.supergraphSdl;
    const runtime = createGatewayRuntime({
      supergraph,
      logging: false,
      deferStream: true,
      propagateHeaders: {
        fromClientToSubgraphs: ({ request }) => {
          const authorization = request.headers.get('authorization');
          return authorization ? { authorization } : {};
        },
      },
    });
    router = createServer(runtime);
    await new Promise<void>((resolve) => router.listen(0, '127.0.0.1', resolve));
    routerUrl = `http://127.0.0.1:${(router.address() as AddressInfo).port}/graphql`;
  }, 120_000);
  afterAll(async () => {
    await new Promise((resolve) => router?.close(resolve));
    await pedidos?.close();
    await gateway?.stop();
    await sandbox?.close();
  });

  const ask = async (query: string, variables: Record<string, unknown>, token: string | null = TOKEN) => {
    const res = await fetch(routerUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    return (await res.json()) as {
      data?: { pedidos: { id: string; cliente: { ruc: string; nombreORazonSocial: string } | null }[] };
      errors?: { message: string; path?: unknown[]; extensions?: Record<string, unknown> }[];
    };
  };
  const PEDIDOS = 'query($rucs: [String!]!) { pedidos(rucs: $rucs) { id cliente { ruc nombreORazonSocial estado } } }';

  it('keeps the cost directives and the entities in the supergraph', () => {
    expect(supergraph).toContain('@link(url: "https://specs.apollo.dev/cost/v0.1"');
    expect(supergraph).toContain('@cost(weight: 1)');
    expect(supergraph).toContain('@listSize(requireOneSlicingArgument: false, assumedSize: 100)');
    expect(supergraph).toMatch(/type Contribuyente [^{]*@join__type\(graph: REGISTRO, key: "ruc"\)/);
    expect(supergraph).toMatch(/type LicenciaConducir [^{]*@join__type\(graph: REGISTRO, key: "numLicencia"\)/);
  });

  it("ten orders of five distinct customers make five upstream calls, one per RUC, with the caller's token", async () => {
    const five = TAXPAYERS.slice(0, 5).map((t) => t.ruc);
    sandbox.reset();
    const answer = await ask(PEDIDOS, { rucs: [...five, ...five] });
    expect(answer.errors).toBeUndefined();
    expect(answer.data!.pedidos.map((p) => p.cliente?.ruc)).toEqual([...five, ...five]);
    expect(answer.data!.pedidos[0]!.cliente!.nombreORazonSocial).toBe(TAXPAYERS[0]!.nombre_o_razon_social);
    const calls = sandbox.callsTo('/ruc');
    expect(calls.map((c) => (c.body as { ruc: string }).ruc).sort()).toEqual([...five].sort());
    expect(new Set(calls.map((c) => c.headers.authorization))).toEqual(new Set([`Bearer ${TOKEN}`]));
  });

  it('a failing lookup reaches the client at its order with its code and retryable; a bad check digit costs nothing', async () => {
    sandbox.reset();
    const [good] = TAXPAYERS.map((t) => t.ruc);
    const answer = await ask(PEDIDOS, { rucs: [good, TRIGGERS.unavailable.ruc, '20100123450'] });
    expect(answer.data!.pedidos[0]!.cliente!.ruc).toBe(good);
    expect(answer.data!.pedidos[1]!.cliente).toBeNull();
    expect(answer.data!.pedidos[2]!.cliente).toBeNull();
    const byOrder = (i: number) => answer.errors!.find((e) => e.path?.[1] === i)?.extensions;
    expect(byOrder(1)).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', retryable: true });
    expect(byOrder(2)).toMatchObject({ code: 'INVALID_INPUT', retryable: false });
    expect(sandbox.callsTo('/ruc').map((c) => (c.body as { ruc: string }).ruc)).not.toContain('20100123450');
  });

  it('without a token, the customer is UNAUTHENTICATED and nothing is asked upstream', async () => {
    sandbox.reset();
    const answer = await ask(PEDIDOS, { rucs: [TAXPAYERS[1]!.ruc] }, null);
    expect(answer.data?.pedidos[0]?.cliente ?? null).toBeNull();
    expect(answer.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', retryable: false });
    expect(sandbox.calls).toHaveLength(0);
  });

  it('@defer across the two: the orders come first, each customer later from the gateway', async () => {
    sandbox.reset();
    const res = await fetch(routerUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({
        query: `{ pedidos(rucs: ["${TAXPAYERS[6]!.ruc}", "${TRIGGERS.slow.ruc}"]) { id ... @defer { cliente { ruc nombreORazonSocial } } } }`,
      }),
    });
    expect(res.headers.get('content-type')).toContain('multipart/mixed');
    const parts = (await res.text())
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map(
        (line) =>
          JSON.parse(line) as { data?: unknown; incremental?: { data: { cliente: { ruc: string } }; path: unknown[] }[]; hasNext: boolean },
      );
    expect(parts[0]).toEqual({ data: { pedidos: [{ id: 'P-1' }, { id: 'P-2' }] }, hasNext: true });
    const later = parts.slice(1).flatMap((p) => p.incremental ?? []);
    expect(later.map((i) => [i.path, i.data.cliente.ruc])).toEqual(
      expect.arrayContaining([
        [['pedidos', 0], TAXPAYERS[6]!.ruc],
        [['pedidos', 1], TRIGGERS.slow.ruc],
      ]),
    );
    expect(sandbox.callsTo('/ruc')).toHaveLength(2);
  });
});
