import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { TRIGGERS } from '../../src/sandbox/data.js';
import { post, startStack, type Stack } from '../helpers.js';

/**
 * The same document gets the same answer every run: the first run parses, validates and plans
 * its cost, later runs take all three from the document cache (src/pipeline/document-cache.ts),
 * and the answer must not change with it. Each request is sent five times and every body must
 * be byte for byte the first, which must read as graphql-js writes it. (It began as the guard
 * against graphql-jit, whose answers changed once it compiled a document; that executor is gone.)
 */

let sandbox: Sandbox;
let stack: Stack;

beforeAll(async () => {
  sandbox = await startSandbox();
  stack = await startStack({ sharedSandbox: sandbox, env: { UPSTREAM_RETRIES: '0', BREAKER_MIN_CALLS: '1000000' } });
});
afterAll(async () => {
  await stack?.close();
  await sandbox?.close();
});

async function body(stack: Stack, query: string, variables?: Record<string, unknown>): Promise<string> {
  const res = await post(`${stack.url}/graphql`, { query, variables }, { headers: { accept: 'application/json' } });
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
];

describe('the same answer every run', () => {
  for (const [name, query, variables] of CASES) {
    it(name, async () => {
      const first = await body(stack, query, variables);
      for (let run = 0; run < 4; run++) expect(await body(stack, query, variables)).toBe(first);
    });
  }

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
