import { readFileSync } from 'node:fs';
import {
  buildClientSchema,
  buildSchema,
  getIntrospectionQuery,
  lexicographicSortSchema,
  printSchema,
  type IntrospectionQuery,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers.js';

/** The committed files are what the running server serves, not only what the code builds (run `npm run schema:print` when this fails). */
describe('schema.graphql and subgraph.graphql against the running server', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(() => stack.close());

  it("schema.graphql declares every type and directive the server serves by introspection (@defer, @stream, federation's)", async () => {
    const {
      body: { data: introspection },
    } = await stack.gql<IntrospectionQuery, Record<string, never>>(
      getIntrospectionQuery({ descriptions: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true }),
    );
    const served = printSchema(lexicographicSortSchema(buildClientSchema(introspection!)));
    const file = printSchema(lexicographicSortSchema(buildSchema(readFileSync('schema.graphql', 'utf8'))));
    expect(file).toBe(served);
    for (const directive of ['defer', 'stream', 'key', 'link', 'cost', 'listSize']) expect(served).toContain(`directive @${directive}(`);
  });

  it("subgraph.graphql is the server's own subgraph SDL (`_service { sdl }`), the one a router composes", async () => {
    const {
      body: { data },
    } = await stack.gql<{ _service: { sdl: string } }, Record<string, never>>('{ _service { sdl } }');
    expect(readFileSync('subgraph.graphql', 'utf8')).toBe(`${data!._service.sdl.trim()}\n`);
  });
});
