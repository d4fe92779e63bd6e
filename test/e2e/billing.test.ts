import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getNamedType, isLeafType, isObjectType, type GraphQLField, type GraphQLObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUNAT_SAMPLE } from '../../src/sandbox/sunat.js';
import { schema } from '../../src/schema/index.js';
import { billingOf } from '../../src/schema/billed.js';
import { printedSchema } from '../../src/schema/print.js';
import { PLAN_COST } from '../../src/upstream/billing.js';
import { MAX_RUCS } from '../../src/schema/validation.js';
import { RECEIPT, TOKEN, startStack, type Stack } from '../helpers.js';

/**
 * Every field that reaches the upstream declares its plan cost in the schema (`billed`, printed
 * as @cost and @listSize): each field of the schema is asked for through the gateway, alone
 * under its root field, and the sandbox's record says whether it made calls of its own; the
 * queries the gateway reports must be those the sandbox charged, at the spec's prices.
 */

/** A value for each argument, by `Type.field.argument`, else by argument name: a new required argument needs one here. */
const SAMPLES: Record<string, unknown> = {
  ruc: '20100123453',
  rucs: ['20100123453', '20501234568'],
  // The search finds the sandbox's companies in its register: their nodes' fields then reach the service.
  texto: 'comercial andina',
  // A page of one: the fields below the nodes are priced as if the page were full (10 by default).
  'Query.buscarContribuyentes.first': 1,
  desde: '2000-01-01',
  numLicencia: 'Q46779354',
  dni: '46779354',
  // Federation's references: a router asks for the rest of a taxpayer, a licence holder and a person.
  'Query._entities.representations': [
    { __typename: 'Contribuyente', ruc: '20100123453' },
    { __typename: 'LicenciaConducir', numLicencia: 'Q46779354' },
    { __typename: 'Persona', dni: '46779354' },
  ],
  'Mutation.validarComprobantes.comprobantes': [RECEIPT],
  'Mutation.validarComprobantesTexto.comprobantes': ['20100123453|01|F001|1|2024-01-15|118.00'],
  // A public address written as one: no name to resolve; nothing is ever delivered to it (no register changes here).
  url: 'https://93.184.215.14/webhook',
  'Query.tiposDeCambio.desde': '2026-11-02',
  hasta: '2026-11-03',
  'Mutation.crearValidacionMasiva.texto': '20100123453|01|F001|1|2026-10-01|118.00',
};
/** SUNAT's free services are asked at the sandbox too (its stand-ins for SUNAT): those calls are never the plan's. */
const paidCalls = (s: Stack) => s.sandbox.calls.filter((c) => !c.path.startsWith('/v1/') && !c.path.startsWith('/cl-at-ittipcam/')).length;

let stack: Stack;
/** A gateway keeping the sandbox's register, for the search, whose nodes come from it, and for the register's changes. */
let registered: Stack;
let dir: string;
beforeAll(async () => {
  // The gateway's own SUNAT credentials (as npm start has them), and room for every probe's background validation.
  stack = await startStack({
    env: {
      SUNAT_API_CLIENT_ID: SUNAT_SAMPLE.clientId,
      SUNAT_API_CLIENT_SECRET: SUNAT_SAMPLE.clientSecret,
      SUNAT_API_RUC: SUNAT_SAMPLE.rucEmpresa,
      VALIDACION_MASIVA_POR_LLAMANTE: '1000',
    },
  });
  const job = await stack.gql('mutation($t: String!) { crearValidacionMasiva(texto: $t) { id } }', {
    t: SAMPLES['Mutation.crearValidacionMasiva.texto'],
  });
  const jobId = (job.body.data as { crearValidacionMasiva: { id: string } }).crearValidacionMasiva.id;
  SAMPLES['Query.validacionMasiva.id'] = jobId;
  SAMPLES['Mutation.cancelarValidacionMasiva.id'] = jobId;
  dir = mkdtempSync(join(tmpdir(), 'billing-'));
  // Each probe of crearSuscripcion makes one subscription.
  const env = { PADRON: `${stack.sandbox.url}/__sandbox/padron/`, PADRON_DIR: dir, WEBHOOK_MAX_PER_CALLER: '1000' };
  registered = await startStack({ sharedSandbox: stack.sandbox, env });
  const deadline = Date.now() + 20_000;
  while (((await (await fetch(`${registered.url}/health`)).json()) as { padron: { state: string } }).padron.state !== 'ready') {
    if (Date.now() > deadline) throw new Error('the sandbox register never got ready');
    await new Promise((r) => setTimeout(r, 50));
  }
  // The subscription cambiarSuscripcion and eliminarSuscripcion are asked of (the last deletes it, and is probed once).
  const created = await registered.gql(
    'mutation($url: String!) { crearSuscripcion(url: $url, rucs: ["20100123453"]) { suscripcion { id } } }',
    { url: SAMPLES['url'] },
  );
  SAMPLES['id'] = (created.body.data as { crearSuscripcion: { suscripcion: { id: string } } }).crearSuscripcion.suscripcion.id;
});
afterAll(async () => {
  await registered?.close();
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Probe {
  calls: number;
  queries: number;
  estimated: number;
}

/** Runs `root(args) { selection }` and reports the calls the sandbox saw, and the cost the gateway reported. */
async function probe(kind: 'query' | 'mutation', root: GraphQLField<unknown, unknown>, selection: string): Promise<Probe> {
  const variables: Record<string, unknown> = {};
  const declared: string[] = [];
  const passed: string[] = [];
  for (const arg of root.args) {
    const sample = SAMPLES[`${kind === 'query' ? 'Query' : 'Mutation'}.${root.name}.${arg.name}`] ?? SAMPLES[arg.name];
    if (sample === undefined) {
      expect(String(arg.type).endsWith('!'), `no sample for the required argument ${root.name}(${arg.name})`).toBe(false);
      continue;
    }
    variables[arg.name] = sample;
    declared.push(`$${arg.name}: ${String(arg.type)}`);
    passed.push(`${arg.name}: $${arg.name}`);
  }
  const document = `${kind} Probe${declared.length ? `(${declared.join(', ')})` : ''} { ${root.name}${passed.length ? `(${passed.join(', ')})` : ''}${selection} }`;
  const before = paidCalls(stack);
  const quota = stack.sandbox.quotaOf(TOKEN)!;
  // The search, the register's changes and the subscriptions to them answer only where the register is kept.
  const { body } = await (
    root.name === 'buscarContribuyentes' || /\bcambios(Padron)?\b|Suscripcion|suscripciones/.test(document) ? registered : stack
  ).gql(document, variables);
  expect(body.errors, document).toBeUndefined();
  const cost = body.extensions?.['cost'] as { queries: number; estimated: number };
  // The sandbox prices from the spec on its own (src/sandbox/prices.ts): the client's count must agree.
  expect(cost.queries, `${document}: queries reported against the sandbox's charge`).toBe(quota - stack.sandbox.quotaOf(TOKEN)!);
  return { calls: paidCalls(stack) - before, queries: cost.queries, estimated: cost.estimated };
}

/** The selection of `field` that reaches nothing below it: itself for a leaf, `{ __typename }` under it otherwise. */
const alone = (field: GraphQLField<unknown, unknown>) =>
  isLeafType(getNamedType(field.type)) ? field.name : `${field.name} { __typename }`;

describe('plan costs are declared where the fields are', () => {
  const roots = [
    ['query', schema.getQueryType()!],
    ['mutation', schema.getMutationType()!],
  ] as const;

  for (const [kind, type] of roots) {
    for (const root of Object.values(type.getFields())) {
      it(`${type.name}.${root.name} and every field below it`, async () => {
        const own = await probe(kind, root, isLeafType(getNamedType(root.type)) ? '' : ' { __typename }');
        if (own.calls > 0) expect(billingOf(root), `${type.name}.${root.name} calls the upstream without @cost`).toBeDefined();
        expect(own.estimated).toBeGreaterThanOrEqual(own.queries);

        // Each field of what it returns, one level down and further, alone: calls beyond its parent's are the field's.
        const walk = async (parent: GraphQLObjectType, path: string[], parentCalls: number): Promise<void> => {
          for (const field of Object.values(parent.getFields())) {
            const nested = [...path, alone(field)].reduceRight((inner, outer, i) => (i === path.length ? outer : `${outer} { ${inner} }`));
            const seen = await probe(kind, root, ` { ${nested} }`);
            if (seen.calls > parentCalls) {
              expect(billingOf(field), `${parent.name}.${field.name} calls the upstream without @cost`).toBeDefined();
            }
            expect(seen.estimated, `${parent.name}.${field.name}`).toBeGreaterThanOrEqual(seen.queries);
            const named = getNamedType(field.type);
            if (isObjectType(named) && path.length < 3) await walk(named, [...path, field.name], seen.calls);
          }
        };
        const returned = getNamedType(root.type);
        if (isObjectType(returned)) await walk(returned, [], own.calls);
      });
    }
  }

  it('prints them as the cost directive specification writes them, with the weights of PLAN_COST', () => {
    const sdl = printedSchema();
    expect(sdl).toContain(`): LicenciaConducir @cost(weight: ${PLAN_COST['/licencia-conducir']})`);
    expect(sdl).toContain(
      `): [Contribuyente]! @cost(weight: ${PLAN_COST['/ruc']}) @listSize(assumedSize: ${MAX_RUCS}, requireOneSlicingArgument: false)`,
    );
    expect(sdl).toContain(`detalle: ContribuyenteDetalle @cost(weight: ${PLAN_COST['/ruc-sunat']})`);
    expect(sdl).toMatch(/directive @cost\(weight: Int!\)/);
  });
});
