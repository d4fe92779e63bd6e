import { refusal } from '../errors.js';
import { TIPOS_CAMBIO, type Cambio, type ChangeStore } from '../padron/change-store.js';
import { todayInLima } from '../upstream/dates.js';
import { isRealDate, isValidRuc } from '../upstream/keys.js';
import { builder } from './builder.js';
import { connectionOf } from './connection.js';
import type { Context } from './context.js';
import { Contribuyente } from './contribuyente.js';

/** A page of the feed holds at most this many changes: a webhook's message holds as many. */
const MAX_PAGE = 1000;
/** RUCs one page of the feed reads each one's changes of: some 18 µs each, on the event loop, for nothing. */
const MAX_RUCS = 1000;

export const TipoCambio = builder.enumType('TipoCambio', {
  description: 'Qué cambió de un RUC entre dos padrones: alta, salida, un dato o una marca (SI/NO) ganada o perdida.',
  values: TIPOS_CAMBIO,
});

export const CambioPadron = builder.objectRef<Cambio>('CambioPadron').implement({
  description: 'Un cambio de un RUC visto por el gateway al importar un padrón más nuevo que el que usaba.',
  fields: (t) => ({
    ruc: t.exposeString('ruc'),
    fecha: t.exposeString('fecha', { description: 'AAAA-MM-DD: la fecha (en Lima) del padrón en que se vio el cambio.' }),
    tipo: t.field({ type: TipoCambio, resolve: (c) => c.tipo }),
    antes: t.exposeString('antes', { nullable: true, description: 'null en ALTA; el nombre en SALIDA; "SI" o "NO" en una marca.' }),
    despues: t.exposeString('despues', { nullable: true, description: 'null en SALIDA; el nombre en ALTA; "SI" o "NO" en una marca.' }),
  }),
});

const CambioConnection = connectionOf('Cambio', CambioPadron);

/** The changes kept, or why there are none to read. */
function storeOf(ctx: Context): ChangeStore {
  if (!ctx.padron) throw refusal('padronOffChanges');
  const store = ctx.padron.changes;
  if (!store) throw refusal('changesElsewhere');
  return store;
}

/** A date the caller gave: a real day, written YYYY-MM-DD. */
function checkedDate(name: string, value: string): string {
  if (!isRealDate(value)) throw refusal('notADate', { name });
  return value;
}

builder.queryFields((t) => ({
  cambiosPadron: t.field({
    type: CambioConnection,
    description: 'Cambios del padrón vistos por el gateway entre dos importaciones (fechas AAAA-MM-DD, inclusive). Costo: 0.',
    args: {
      desde: t.arg.string({ required: true }),
      hasta: t.arg.string({ required: false, description: 'Por omisión, hoy (en Lima).' }),
      rucs: t.arg.stringList({ required: false, description: `Solo los de estos RUC (a lo más ${MAX_RUCS}); vacío o ausente: todos.` }),
      tipos: t.arg({ type: [TipoCambio], required: false }),
      first: t.arg.int({ required: false, defaultValue: 100, description: `Cuántos por página: 1 a ${MAX_PAGE}.` }),
      after: t.arg.string({ required: false, description: 'El endCursor de la página anterior.' }),
    },
    resolve: (_root, args, ctx) => {
      const first = args.first ?? 100;
      if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE) throw refusal('pageSize', { max: MAX_PAGE });
      const desde = checkedDate('desde', args.desde);
      const hasta = args.hasta == null ? todayInLima() : checkedDate('hasta', args.hasta);
      const rucs = args.rucs ?? undefined;
      if (rucs && rucs.length > MAX_RUCS) throw refusal('changeRucs', { max: MAX_RUCS });
      const wrong = rucs?.find((r) => !isValidRuc(r));
      if (wrong !== undefined) throw refusal('notARuc', { ruc: wrong });
      const page = storeOf(ctx).page({ desde, hasta, rucs, tipos: args.tipos ?? undefined, first, after: args.after ?? undefined });
      return { nodes: page.cambios, cursors: page.cursors, hasNextPage: page.hasNextPage, endCursor: page.endCursor };
    },
  }),
}));

builder.objectField(Contribuyente, 'cambios', (t) =>
  t.field({
    type: [CambioPadron],
    description: 'Los cambios de este RUC que el gateway vio en el padrón, del más nuevo al más antiguo. Costo: 0.',
    args: { desde: t.arg.string({ required: false, description: 'AAAA-MM-DD; por omisión, todos los que guarda (PADRON_CHANGES_DAYS).' }) },
    resolve: (record, { desde }, ctx) => storeOf(ctx).ofRuc(record.ruc, desde == null ? undefined : checkedDate('desde', desde)),
  }),
);
