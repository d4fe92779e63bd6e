import type { GraphQLFieldConfig } from 'graphql';
import type { Context } from './context.js';
import { refusal } from '../errors.js';
import { LOOKUPS } from '../upstream/lookups.js';
import type { Billing, EntityBilling } from './billed.js';
import { builder } from './builder.js';
import { Contribuyente } from './contribuyente.js';
import { valid } from './input.js';
import { answered } from './received.js';
import type { Received } from '../data/lookups.js';
import { LicenciaConducir } from './licencia.js';
import { Persona } from './persona.js';
import { checkDni, checkNumLicencia, checkRuc, MAX_RUCS, type Checked } from './validation.js';

/**
 * Federation entities: another subgraph of a supergraph holds a RUC or a licence number, and
 * the router asks here for the rest (`_entities`). A reference is looked up as any lookup is,
 * through the request's loaders: one call per distinct key and token, the cache and the calls
 * in flight shared, a bad key refused locally at its own index. What each costs, for the cost
 * limit, is said here once (`ENTITY_BILLING`), from the same checks and prices.
 */
export const ENTITY_BILLING = {
  Contribuyente: { field: 'ruc', weight: LOOKUPS.ruc.price, key: checkRuc },
  LicenciaConducir: { field: 'numLicencia', weight: LOOKUPS.licencia.price, key: checkNumLicencia },
  Persona: { field: 'dni', weight: LOOKUPS.dni.price, key: checkDni },
} as const satisfies Record<string, EntityBilling>;

/** The key a representation holds, checked: anything but a string fails the check. */
function keyOf(representation: Record<string, unknown>, entity: { field: string; key: (value: string) => Checked<string> }): string {
  const value = representation[entity.field];
  return valid(entity.key(typeof value === 'string' ? value : ''));
}

// Async, so that a bad key rejects its own index of `_entities` instead of throwing for all of them.
builder.asEntity(Contribuyente, {
  key: builder.selection<{ ruc: string }>(ENTITY_BILLING.Contribuyente.field),
  resolveReference: async (reference, ctx: Context) => ctx.loaders.of('ruc').load(keyOf(reference, ENTITY_BILLING.Contribuyente)),
});
builder.asEntity(Persona, {
  key: builder.selection<{ dni: string }>(ENTITY_BILLING.Persona.field),
  resolveReference: async (reference, ctx: Context) => ctx.loaders.of('dni').load(keyOf(reference, ENTITY_BILLING.Persona)),
});
builder.asEntity(LicenciaConducir, {
  key: builder.selection<{ numLicencia: string }>(ENTITY_BILLING.LicenciaConducir.field),
  resolveReference: async (reference, ctx: Context) => ctx.loaders.of('licencia').load(keyOf(reference, ENTITY_BILLING.LicenciaConducir)),
});

/**
 * Federation's `_entities` field as the subgraph builder makes it, with what the cost limit
 * reads (each representation priced by its type) and the same bound as `contribuyentes`: past
 * it, refused whole before any call.
 */
export function billedEntities(field: GraphQLFieldConfig<unknown, Context>): GraphQLFieldConfig<unknown, Context> {
  const resolve = field.resolve!;
  const billing: Billing = { weight: 0, argument: 'representations', list: true, max: MAX_RUCS, references: ENTITY_BILLING };
  const prices = Object.entries(ENTITY_BILLING).map(([type, { field: key, weight }]) => `${weight} por ${type} (${key}) distinto`);
  return {
    ...field,
    description:
      'Entidades de la federación, para un router: cada referencia se consulta como cualquier otra, una vez por clave ' +
      `(REST: POST /ruc, POST /licencia-conducir, POST /dni; hasta ${MAX_RUCS} referencias). Costo: ${prices.join(', ')}.`,
    extensions: { ...field.extensions, billing },
    resolve: (source, args: { representations?: unknown[] }, ctx, info) => {
      const representations = args.representations ?? [];
      if (representations.length > MAX_RUCS) throw refusal('references', { max: MAX_RUCS });
      // Only what the cost limit priced runs: an object naming one of our entities by a string.
      if (!representations.every(isOurs)) throw refusal('badReference');
      // Each entity as any field answers a record: noted in extensions.stale, at its index, when it is the last good one.
      return Promise.resolve(resolve(source, args, ctx, info)).then((entities: unknown) =>
        Array.isArray(entities)
          ? entities.map((entity, i) => Promise.resolve(entity).then((r) => (isReceived(r) ? answered(r, ctx, info, i) : r)))
          : entities,
      );
    },
  };
}

function isReceived(value: unknown): value is Received {
  return typeof value === 'object' && value !== null && 'receivedAt' in value;
}

/** A representation the cost limit priced: an object whose `__typename` is a string naming one of `ENTITY_BILLING`. */
function isOurs(representation: unknown): boolean {
  if (typeof representation !== 'object' || representation === null || Array.isArray(representation)) return false;
  const typename = (representation as { __typename?: unknown }).__typename;
  return typeof typename === 'string' && Object.hasOwn(ENTITY_BILLING, typename);
}
