import { responsePathAsArray, type GraphQLResolveInfo } from 'graphql';
import type { Received } from '../data/lookups.js';
import type { Context } from './context.js';

/**
 * A record as a field answers it, noted in `extensions.stale` with the field's path when it is
 * the last good record answered while the upstream is down (`index`: its place in a list field).
 */
export function answered<T extends Received>(record: T, ctx: Context, info: GraphQLResolveInfo, index?: number): T {
  if (record.stale) {
    const path = responsePathAsArray(info.path);
    ctx.state.stale.push({ path: index === undefined ? path : [...path, index], consultadoEn: consultadoEn(record) });
  }
  return record;
}

/** `loader.load(key)`, answered as above. */
export function loadAnswered<T extends Received>(load: Promise<T>, ctx: Context, info: GraphQLResolveInfo, index?: number): Promise<T> {
  return load.then((record) => answered(record, ctx, info, index));
}

/** When the gateway received `record`, as `consultadoEn` says it: ISO 8601, UTC. */
export const consultadoEn = (record: Received): string => new Date(record.receivedAt).toISOString();

/** What `consultadoEn` says, on every record type. */
export const CONSULTADO_EN =
  'Cuándo recibió el gateway este registro del servicio (ISO 8601, UTC). Un registro guardado en ' +
  'caché conserva esa hora; uno respondido con el servicio caído figura además en extensions.stale.';
