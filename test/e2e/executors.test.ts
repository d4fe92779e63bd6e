import { getNamedType, isLeafType, isObjectType, type GraphQLObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { TRIGGERS } from '../../src/sandbox/data.js';
import { Metrics } from '../../src/telemetry/metrics.js';
import { TOKEN, startStack, type Stack } from '../helpers.js';

/**
 * The same document gets the same answer every run, whichever executor writes it. graphql-jit
 * (GRAPHQL_JIT=on, the default) runs a query without fragments from its second run on, and
 * its own answers differ from graphql-js's where there are errors (no `locations`, `data`
 * before `errors`, variable errors in its own words) and fragments (their fields after the
 * others): so it answers only without either, and graphql-js writes every other answer. Each
 * request is sent five times to a gateway with graphql-jit and once to one with graphql-js
 * alone, and every body must be byte for byte graphql-js's.
 */

let sandbox: Sandbox;
let stack: Stack;
let graphqlJs: Stack;
const metrics = new Metrics({ defaultMetrics: false });

beforeAll(async () => {
  sandbox = await startSandbox();
  const env = { UPSTREAM_RETRIES: '0', BREAKER_MIN_CALLS: '1000000' };
  stack = await startStack({ sharedSandbox: sandbox, env, app: { metrics } });
  graphqlJs = await startStack({ sharedSandbox: sandbox, env: { ...env, GRAPHQL_JIT: 'off' } });
});
afterAll(async () => {
  await stack?.close();
  await graphqlJs?.close();
  await sandbox?.close();
});

/** Answers written by each executor so far, from the gateway's own metric. */
async function answersBy(executor: 'graphql-jit' | 'graphql-js'): Promise<number> {
  const line = (await metrics.registry.metrics()).split('\n').find((l) => l.startsWith(`gateway_executions_total{executor="${executor}"}`));
  return Number(line?.split(' ').at(-1) ?? 0);
}

/** Every field of `type`, and of the objects below it down to `depth` levels. */
function everything(type: GraphQLObjectType, depth: number): string {
  const fields = Object.values(type.getFields()).flatMap((field) => {
    const named = getNamedType(field.type);
    if (isLeafType(named)) return [field.name];
    return isObjectType(named) && depth > 0 ? [`${field.name} { ${everything(named, depth - 1)} }`] : [];
  });
  return fields.join(' ');
}

async function body(stack: Stack, query: string, variables?: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${stack.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ query, variables }),
  });
  return `${res.status} ${await res.text()}`;
}

const CASES: [string, string, Record<string, unknown>?][] = [
  ['a record', '{ contribuyente(ruc: "20100123453") { ruc nombreORazonSocial esAgenteDeRetencion } }'],
  ['a field error beside data', '{ a: contribuyente(ruc: "20100123453") { ruc } b: contribuyente(ruc: "20100123454") { ruc } }'],
  ['an upstream error', `{ contribuyente(ruc: "${TRIGGERS.notFound.ruc}") { ruc } }`],
  ['a list with a failing position', `{ contribuyentes(rucs: ["20100123453", "123", "${TRIGGERS.notFound.ruc}"]) { ruc } }`],
  [
    'a nested failure (detalle)',
    `{ contribuyente(ruc: "20100123453") { ruc detalle { ruc } } otro: contribuyenteDetalle(ruc: "${TRIGGERS.badRecord.ruc}") { ruc } }`,
  ],
  ['a non-null field of a failing parent', `mutation { validarComprobantesTexto(comprobantes: ["malo"]) { cantidadDeComprobantes } }`],
  ['variables', 'query($r: String!) { contribuyente(ruc: $r) { ruc } }', { r: '20501234568' }],
  ['a variable of the wrong type', 'query($s: String!) { contribuyente(ruc: $s) { ruc } }', { s: 5 }],
  ['a missing variable', 'query($s: String!) { contribuyente(ruc: $s) { ruc } }', {}],
  [
    'an input object variable with an unknown field',
    'mutation($c: [ComprobanteInput!]!) { validarComprobantes(comprobantes: $c) { cantidadDeComprobantes } }',
    { c: [{ ruc: 1 }] },
  ],
  [
    'fragments and aliases',
    'query { ...F x: licencia(numLicencia: "Q46779354") { nombres } } fragment F on Query { contribuyente(ruc: "20100123453") { ruc } }',
  ],
  [
    '@skip and @include',
    'query($no: Boolean!) { contribuyente(ruc: "20100123453") { ruc estado @skip(if: $no) condicion @include(if: $no) } }',
    { no: true },
  ],
  ['__typename', '{ __typename contribuyente(ruc: "20100123453") { __typename ruc } }'],
  [
    'every field of a taxpayer',
    `query Todo { contribuyente(ruc: "20100123453") { ${everything(schema.getType('Contribuyente') as GraphQLObjectType, 3)} } }`,
  ],
  [
    'every field of a detailed record',
    `query($r: String!) { contribuyenteDetalle(ruc: $r) { ${everything(schema.getType('ContribuyenteDetalle') as GraphQLObjectType, 3)} } }`,
    { r: '20501234568' },
  ],
  [
    'every field of a licence',
    `{ licencia(numLicencia: "Q46779354") { ${everything(schema.getType('LicenciaConducir') as GraphQLObjectType, 3)} } }`,
  ],
  [
    'a list, aliases and a field asked twice',
    '{ contribuyentes(rucs: ["20100123453", "20501234568"]) { ruc r: ruc estado ruc } otro: contribuyente(ruc: "20602345671") { ruc } }',
  ],
];

describe('the same answer every run, whichever executor', () => {
  for (const [name, query, variables] of CASES) {
    it(name, async () => {
      const reference = await body(graphqlJs, query, variables);
      expect(reference).toMatch(/^200 /);
      for (let run = 0; run < 5; run++) expect(await body(stack, query, variables)).toBe(reference);
    });
  }

  it('runs a query that comes back compiled, and makes no call twice when graphql-js must write the answer', async () => {
    const ok = '{ contribuyente(ruc: "20100123453") { ruc estado } }';
    const failing = `{ a: contribuyente(ruc: "20100123453") { ruc } b: contribuyente(ruc: "${TRIGGERS.notFound.ruc}") { ruc } }`;
    for (const query of [ok, failing]) await body(stack, query);
    for (const query of [ok, failing]) await body(stack, query);
    const [compiled, interpreted] = [await answersBy('graphql-jit'), await answersBy('graphql-js')];
    expect(await body(stack, ok)).toBe(await body(graphqlJs, ok));
    expect(await answersBy('graphql-jit')).toBe(compiled + 1);

    // Compiled, it fails on b; graphql-js writes the answer over the same loads: two calls, as graphql-js alone makes.
    const before = sandbox.calls.length;
    const answer = await body(stack, failing);
    expect(sandbox.calls.length - before).toBe(2);
    expect(await answersBy('graphql-js')).toBe(interpreted + 1);
    expect(await answersBy('graphql-jit')).toBe(compiled + 1);
    const reference = sandbox.calls.length;
    expect(answer).toBe(await body(graphqlJs, failing));
    expect(sandbox.calls.length - reference).toBe(2);
  });

  it('as graphql-js writes it: errors first, with locations; fragment fields in selection order; the variable named', async () => {
    expect(await body(stack, CASES[1]![1])).toMatch(
      /^200 \{"errors":\[\{"message":"El RUC es incorrecto","locations":\[\{"line":1,"column":48\}\],"path":\["b"\]/,
    );
    expect(await body(stack, CASES[10]![1])).toMatch(/"data":\{"contribuyente":\{"ruc":"20100123453"\},"x":/);
    expect(await body(stack, CASES[7]![1], CASES[7]![2])).toContain(
      'Variable \\"$s\\" got invalid value 5; String cannot represent a non string value: 5',
    );
  });
});
