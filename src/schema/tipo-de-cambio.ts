import { LOOKUPS } from '../upstream/lookups.js';
import { todayInLima } from '../upstream/dates.js';
import type { TipoDeCambioRecord } from '../upstream/schemas.js';
import type { Received } from '../data/lookups.js';
import { CONSULTADO_EN, consultadoEn, loadAnswered } from './received.js';
import { billed } from './billed.js';
import { checkFecha } from './validation.js';
import { builder } from './builder.js';
import { valid } from './input.js';

const DECIMAL = 'texto decimal con tres decimales, tal como SUNAT lo publica (p. ej. "3.750")';

export const TipoDeCambio = builder.objectRef<Received<TipoDeCambioRecord>>('TipoDeCambio').implement({
  description: 'Tipo de cambio de SUNAT (REST: POST /tipo-de-cambio).',
  fields: (t) => ({
    fecha: t.exposeString('fecha', { description: 'La fecha consultada, AAAA-MM-DD.' }),
    fechaSunat: t.exposeString('fecha_sunat', {
      nullable: true,
      description: 'La fecha del tipo de cambio que SUNAT publicó: el último día hábil hasta la fecha consultada.',
    }),
    moneda: t.exposeString('moneda', { nullable: true, description: 'Moneda: USD.' }),
    compra: t.exposeString('compra', { nullable: true, description: `Compra: ${DECIMAL}.` }),
    venta: t.exposeString('venta', { nullable: true, description: `Venta: ${DECIMAL}.` }),
    consultadoEn: t.string({ nullable: true, description: CONSULTADO_EN, resolve: consultadoEn }),
  }),
});

builder.queryFields((t) => ({
  tipoDeCambio: t.field({
    type: TipoDeCambio,
    nullable: true,
    ...billed('Tipo de cambio de SUNAT de una fecha (AAAA-MM-DD; hoy en Lima si se omite). REST: POST /tipo-de-cambio.', {
      weight: LOOKUPS.tipoDeCambio.price,
      argument: 'fecha',
      key: checkFecha,
      absent: todayInLima,
    }),
    args: { fecha: t.arg.string({ required: false, description: 'Fecha AAAA-MM-DD; hoy en Lima si se omite.' }) },
    resolve: (_root, { fecha }, ctx, info) => loadAnswered(ctx.loaders.of('tipoDeCambio').load(valid(checkFecha(fecha))), ctx, info),
  }),
}));
