import { printSchemaWithDirectives } from '@graphql-tools/utils';
import { lexicographicSortSchema } from 'graphql';
import { schema } from './index.js';

/** The SDL committed as schema.graphql, with the cost directives each field carries: sorted, so that code order never shows as a diff. */
export function printedSchema(): string {
  return `${printSchemaWithDirectives(lexicographicSortSchema(schema))}\n`;
}
