import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { changedOn, DAY1, DAY2, FLAGS1, FLAGS2, ruc } from '../fixtures/changes.js';
import { mirrorOf } from '../fixtures/register.js';
import { startStack, type Stack } from '../helpers.js';

/**
 * The register's changes through the gateway's socket: a register, then a newer one from the
 * same loopback mirror, read back by `cambiosPadron` and `Contribuyente.cambios` at 0 queries,
 * with the sandbox recording that nothing reaches the service.
 */
const FEED = `query($desde: String!, $hasta: String, $rucs: [String!], $tipos: [TipoCambio!], $first: Int, $after: String) {
  cambiosPadron(desde: $desde, hasta: $hasta, rucs: $rucs, tipos: $tipos, first: $first, after: $after) {
    edges { cursor node { ruc fecha tipo antes despues } }
    pageInfo { hasNextPage endCursor }
  }
}`;
type Cambio = { ruc: string; fecha: string; tipo: string; antes: string | null; despues: string | null };
type Feed = {
  data?: {
    cambiosPadron: { edges: { cursor: string; node: Cambio }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
  } | null;
  errors?: { extensions: Record<string, unknown> }[];
};

let sandbox: Sandbox;
let dir: string;
let mirror: Awaited<ReturnType<typeof mirrorOf>>;
let stack: Stack;
let fecha: string;

const feed = async (variables: Record<string, unknown>) => (await stack.gql(FEED, { desde: '2000-01-01', ...variables })).body as Feed;

beforeAll(async () => {
  sandbox = await startSandbox();
  dir = mkdtempSync(join(tmpdir(), 'cambios-'));
  mirror = await mirrorOf(DAY1, FLAGS1);
  stack = await startStack({ sharedSandbox: sandbox, env: { PADRON: mirror.url, PADRON_DIR: dir, PADRON_REFRESH_MS: '1000' } });
  // The first register (the baseline), then the next: the gateway imports every second, the mirror dates its zips by the second.
  const deadline = Date.now() + 30_000;
  while (((await (await fetch(`${stack.url}/health`)).json()) as { padron: { state: string } }).padron.state !== 'ready') {
    if (Date.now() > deadline) throw new Error('the register never got ready');
    await new Promise((r) => setTimeout(r, 50));
  }
  await mirror.set(DAY2, FLAGS2);
  for (;;) {
    const page = (await feed({})).data?.cambiosPadron;
    if (page?.edges.length) {
      fecha = page.edges[0]!.node.fecha;
      break;
    }
    if (Date.now() > deadline) throw new Error('no change ever recorded');
    await new Promise((r) => setTimeout(r, 100));
  }
}, 60_000);
afterAll(async () => {
  await stack?.close();
  mirror?.server.close();
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the register’s changes through the gateway', () => {
  it('answers every change between the two registers, exactly, for nothing and with no call', async () => {
    sandbox.reset();
    const body = await feed({});
    expect(body.errors).toBeUndefined();
    expect(body.data!.cambiosPadron.edges.map((e) => e.node)).toEqual(changedOn(fecha));
    expect(sandbox.calls).toHaveLength(0);
  });

  it('pages the feed by cursor, and filters it by RUC, type and dates', async () => {
    const seen: Cambio[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = (await feed({ first: 2, after })).data!.cambiosPadron;
      seen.push(...page.edges.map((e) => e.node));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor!;
    }
    expect(seen).toEqual(changedOn(fecha));
    const some = (await feed({ rucs: [ruc(5), ruc(8)], tipos: ['CONDICION', 'AGENTE_DE_RETENCION'] })).data!.cambiosPadron.edges.map(
      (e) => e.node.tipo,
    );
    expect(some).toEqual(['CONDICION', 'AGENTE_DE_RETENCION']);
    expect((await feed({ desde: fecha, hasta: fecha })).data!.cambiosPadron.edges).toHaveLength(9);
    expect((await feed({ hasta: '2001-01-01' })).data!.cambiosPadron.edges).toEqual([]);
  });

  it('answers a taxpayer’s changes, newest first, beside its record from the register', async () => {
    sandbox.reset();
    const { body } = await stack.gql('query($r: String!) { contribuyente(ruc: $r) { fuente cambios { fecha tipo antes despues } } }', {
      r: ruc(8),
    });
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      contribuyente: {
        fuente: 'PADRON',
        cambios: [
          { fecha, tipo: 'BUEN_CONTRIBUYENTE', antes: 'SI', despues: 'NO' },
          { fecha, tipo: 'AGENTE_DE_RETENCION', antes: 'NO', despues: 'SI' },
        ],
      },
    });
    expect(sandbox.calls).toHaveLength(0);
  });

  it.each<[string, Record<string, unknown>]>([
    ['a day that does not exist', { desde: '2026-02-30' }],
    ['a date in another form', { desde: '30/11/2026' }],
    ['first out of range', { first: 0 }],
    ['first past a page', { first: 1001 }],
    ['a RUC with a wrong check digit', { rucs: ['20100000002'] }],
    ['a cursor it did not give', { after: 'AAAA' }],
  ])('refuses %s as INVALID_INPUT, with no call', async (_, variables) => {
    sandbox.reset();
    const body = await feed(variables);
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_INPUT', retryable: false });
    expect(sandbox.calls).toHaveLength(0);
  });

  it('is REGISTER_UNAVAILABLE, not retryable, without PADRON', async () => {
    const off = await startStack({ sharedSandbox: sandbox });
    try {
      const body = (await off.gql(FEED, { desde: '2000-01-01' })).body as Feed;
      expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'REGISTER_UNAVAILABLE', retryable: false });
    } finally {
      await off.close();
    }
  });
});
