import SchemaBuilder from '@pothos/core';
import type { Context } from '../context.js';

export const builder = new SchemaBuilder<{
  Context: Context;
  // Fields are non-null unless they say otherwise, as the contract writes them.
  DefaultFieldNullability: false;
}>({ defaultFieldNullability: false });

builder.queryType({
  description: 'Consultas de los padrones (SUNAT, MTC). Cada consulta al servicio consume consultas del plan del token.',
});
builder.mutationType({ description: 'Validación de comprobantes de pago electrónicos.' });
