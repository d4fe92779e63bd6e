import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOOKUPS } from '../../src/upstream/lookups.js';
import { TAXPAYERS } from '../../src/sandbox/taxpayers.js';
import { MAX_RUCS } from '../../src/schema/validation.js';
import { codes, startStack, unknownRucs, type Stack } from '../helpers.js';

/** Federation's `_entities`, asked as a router asks it: what a reference costs is what the same lookup costs anywhere else. */
describe('_entities (the gateway as a federation subgraph)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { CACHE: 'on' } });
  });
  afterAll(() => stack.close());

  const ENTITIES = `query($representations: [_Any!]!) {
    _entities(representations: $representations) {
      ... on Contribuyente { ruc nombreORazonSocial }
      ... on LicenciaConducir { numLicencia nombres }
    }
  }`;
  type Answer = { _entities: ({ ruc?: string; numLicencia?: string } | null)[] };
  const ask = async (representations: unknown[], token?: string | null) =>
    (await stack.gql<Answer, { representations: unknown[] }>(ENTITIES, { representations }, token === undefined ? {} : { token })).body;
  const ruc = (r: string) => ({ __typename: 'Contribuyente', ruc: r });

  it('prices a representation for the type it names only: a licence number that is also a valid RUC costs no detalle', async () => {
    stack.sandbox.reset();
    const query = `query($representations: [_Any!]!) {
      _entities(representations: $representations) {
        ... on Contribuyente { ruc detalle { ruc } }
        ... on LicenciaConducir { numLicencia nombres }
      }
    }`;
    const { body } = await stack.gql(query, { representations: [{ __typename: 'LicenciaConducir', numLicencia: '20100123453' }] });
    // One licence lookup at most: 2 queries, and no /ruc nor /ruc-sunat.
    expect(body.extensions?.['cost']).toMatchObject({ estimated: 2 });
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(0);
    expect(stack.sandbox.callsTo('/ruc-sunat')).toHaveLength(0);
  });

  it('ten representations of five distinct RUCs make five calls, in order, with the cost report of any operation', async () => {
    const five = unknownRucs(5, 82_000_000).map((r, i) => (i === 0 ? TAXPAYERS[2]!.ruc : r));
    stack.sandbox.reset();
    const answer = await ask([...five, ...five].map(ruc));
    expect(answer.data!._entities.map((e: { ruc?: string } | null) => e?.ruc ?? null)).toEqual([
      five[0],
      null,
      null,
      null,
      null,
      five[0],
      null,
      null,
      null,
      null,
    ]);
    expect(codes(answer).filter((c) => c === 'DOCUMENT_NOT_FOUND')).toHaveLength(8);
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(5);
    expect(answer.extensions?.cost).toMatchObject({ estimated: 5 * LOOKUPS.ruc.price, upstreamCalls: 5 });
  });

  it('shares the cache with every other lookup of the same token, and a licence is priced as a licence', async () => {
    const known = TAXPAYERS[3]!.ruc;
    await stack.gql(`{ contribuyente(ruc: "${known}") { ruc } }`);
    stack.sandbox.reset();
    const answer = await ask([ruc(known), { __typename: 'LicenciaConducir', numLicencia: 'Q46779354' }]);
    expect(answer.data!._entities).toEqual([
      expect.objectContaining({ ruc: known }),
      expect.objectContaining({ numLicencia: 'Q46779354' }),
    ]);
    expect(stack.sandbox.callsTo('/ruc')).toHaveLength(0);
    expect(answer.extensions?.cost).toMatchObject({
      estimated: LOOKUPS.ruc.price + LOOKUPS.licencia.price,
      cacheHits: 1,
      upstreamCalls: 1,
    });
  });

  it('refuses a bad check digit at its own index, for free, and answers the others', async () => {
    stack.sandbox.reset();
    const good = TAXPAYERS[4]!.ruc;
    const answer = await ask([ruc(good), ruc('20100123450'), { __typename: 'Contribuyente', ruc: 20100123453 }]);
    expect(answer.data!._entities[0]).toMatchObject({ ruc: good });
    expect(answer.errors!.map((e: { path?: unknown; extensions?: Record<string, unknown> }) => [e.path, e.extensions?.['code']])).toEqual([
      [['_entities', 1], 'INVALID_INPUT'],
      [['_entities', 2], 'INVALID_INPUT'],
    ]);
    expect(stack.sandbox.calls.map((c) => (c.body as { ruc: string }).ruc)).toEqual([good]);
  });

  it('counts the representations before any call: past MAX_OPERATION_COST or past MAX_RUCS, refused whole', async () => {
    stack.sandbox.reset();
    const licences = Array.from({ length: 51 }, (_, i) => ({ __typename: 'LicenciaConducir', numLicencia: `Q${String(10_000_000 + i)}` }));
    expect(codes(await ask(licences))).toEqual(['COST_LIMIT_EXCEEDED']);
    const many = unknownRucs(MAX_RUCS + 1, 83_000_000).map(ruc);
    const refused = await ask(many);
    expect(codes(refused)).toEqual(['INVALID_INPUT']);
    expect(refused.errors![0]!.message).toContain(String(MAX_RUCS));
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('refuses whole, before any call, what the cost limit cannot price: a __typename that is no string, not ours, or no object', async () => {
    stack.sandbox.reset();
    const good = TAXPAYERS[6]!.ruc;
    for (const bad of [
      [{ __typename: ['Contribuyente'], ruc: good }],
      [ruc(good), 42],
      [{ ruc: good }],
      [{ __typename: 'Pedido', id: '1' }],
    ]) {
      const answer = await ask(bad);
      expect(codes(answer), JSON.stringify(bad)).toEqual(['INVALID_INPUT']);
      expect(answer.errors![0]!.message).toContain('__typename');
    }
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('without a token, every reference is UNAUTHENTICATED and nothing is asked', async () => {
    stack.sandbox.reset();
    const answer = await ask([ruc(TAXPAYERS[5]!.ruc)], null);
    expect(codes(answer)).toContain('UNAUTHENTICATED');
    expect(stack.sandbox.calls).toHaveLength(0);
  });
});
