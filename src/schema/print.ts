import { lexicographicSortSchema, printSchema } from 'graphql';
import { schema } from './index.js';

/** The SDL committed as schema.graphql: sorted, so that code order never shows as a diff. */
export function printedSchema(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
