import SchemaBuilder from '@pothos/core';
import DirectivesPlugin from '@pothos/plugin-directives';
import FederationPlugin from '@pothos/plugin-federation';
import type { Context } from './context.js';
import type { CostDirectives } from './billed.js';

export const builder = new SchemaBuilder<{
  Context: Context;
  // Fields are non-null unless they say otherwise, as the contract writes them.
  DefaultFieldNullability: false;
  Directives: CostDirectives;
}>({
  defaultFieldNullability: false,
  plugins: [DirectivesPlugin, FederationPlugin],
  // Keyed by name, the form @graphql-tools/utils prints (src/schema/print.ts).
  directives: { useGraphQLToolsUnorderedDirectives: true },
});

builder.queryType({
  description: 'Consultas de los padrones (SUNAT, MTC). Cada consulta al servicio consume consultas del plan del token.',
});
builder.mutationType({ description: 'Validación de comprobantes de pago electrónicos.' });
