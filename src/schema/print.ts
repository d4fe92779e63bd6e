import { printSchemaWithDirectives } from '@graphql-tools/utils';
import { graphqlSync, lexicographicSortSchema } from 'graphql';
import { schema } from './index.js';

/** The SDL committed as schema.graphql, with the cost directives each field carries: sorted, so that code order never shows as a diff. */
export function printedSchema(): string {
  return `${printSchemaWithDirectives(lexicographicSortSchema(schema))}\n`;
}

/** The subgraph SDL a router composes (`_service { sdl }`), committed as subgraph.graphql. */
export function printedSubgraph(): string {
  const { data } = graphqlSync({ schema, source: '{ _service { sdl } }' });
  return `${(data as { _service: { sdl: string } })._service.sdl.trim()}\n`;
}
