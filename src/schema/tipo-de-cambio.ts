import { LOOKUPS } from '../upstream/lookups.js';
import { todayInLima } from '../upstream/dates.js';
import type { TipoDeCambioRecord } from '../upstream/schemas.js';
import type { Received } from '../data/lookups.js';
import type { SunatRate } from '../sunat/rates.js';
import { isRealDate } from '../upstream/keys.js';
import { refusal } from '../errors.js';
import { CONSULTADO_EN, loadAnswered } from './received.js';
import { billed } from './billed.js';
import { checkFecha } from './validation.js';
import { builder } from './builder.js';
import { valid } from './input.js';

const DECIMAL = 'texto decimal con tres decimales, tal como SUNAT lo publica (p. ej. "3.750")';

/** Whose rate it is: SUNAT's own listing, free, or the paid service's. */
const FuenteTipoDeCambio = builder.enumType('FuenteTipoDeCambio', {
  description: 'De dónde vino un tipo de cambio.',
  values: {
    SUNAT: { description: 'La lista mensual que SUNAT publica (gratis).' },
    SERVICIO: { description: 'El servicio REST (POST /tipo-de-cambio), cuando la lista de SUNAT no respondió o TIPO_DE_CAMBIO=servicio.' },
  } as const,
});

type Rate = Received<TipoDeCambioRecord> | SunatRate;

export const TipoDeCambio = builder.objectRef<Rate>('TipoDeCambio').implement({
  description: 'Tipo de cambio de SUNAT: de su lista mensual publicada (gratis), o del servicio (REST: POST /tipo-de-cambio).',
  fields: (t) => ({
    fecha: t.exposeString('fecha', { description: 'La fecha consultada, AAAA-MM-DD.' }),
    fechaSunat: t.exposeString('fecha_sunat', {
      nullable: true,
      description: 'La fecha del tipo de cambio que SUNAT publicó: el último día hábil hasta la fecha consultada.',
    }),
    moneda: t.exposeString('moneda', { nullable: true, description: 'Moneda: USD.' }),
    compra: t.exposeString('compra', { nullable: true, description: `Compra: ${DECIMAL}.` }),
    venta: t.exposeString('venta', { nullable: true, description: `Venta: ${DECIMAL}.` }),
    fuente: t.field({
      type: FuenteTipoDeCambio,
      nullable: true,
      description: 'De dónde vino este tipo de cambio.',
      resolve: (r) => (r.fuente === 'SUNAT' ? 'SUNAT' : 'SERVICIO'),
    }),
    consultadoEn: t.string({
      nullable: true,
      description: CONSULTADO_EN,
      resolve: (r) => new Date(r.receivedAt).toISOString(),
    }),
  }),
});

builder.queryFields((t) => ({
  tipoDeCambio: t.field({
    type: TipoDeCambio,
    nullable: true,
    ...billed(
      'Tipo de cambio de SUNAT de una fecha (AAAA-MM-DD; hoy en Lima si se omite), de la lista que SUNAT publica (gratis, ' +
        'fuente SUNAT); si esa lista no responde, o con TIPO_DE_CAMBIO=servicio, REST: POST /tipo-de-cambio.',
      {
        weight: LOOKUPS.tipoDeCambio.price,
        argument: 'fecha',
        key: checkFecha,
        absent: todayInLima,
      },
    ),
    args: { fecha: t.arg.string({ required: false, description: 'Fecha AAAA-MM-DD; hoy en Lima si se omite.' }) },
    resolve: async (_root, { fecha }, ctx, info) => {
      const day = valid(checkFecha(fecha));
      // SUNAT's listing unreadable, or without the day: the paid lookup, as without it.
      const free = await ctx.rates?.on(day).catch(() => undefined);
      return free ?? loadAnswered(ctx.loaders.of('tipoDeCambio').load(day), ctx, info);
    },
  }),
  tiposDeCambio: t.field({
    type: [TipoDeCambio],
    description:
      `Tipos de cambio de SUNAT de cada día entre dos fechas (AAAA-MM-DD, inclusive, hasta ${MAX_RATE_DAYS} días), ` +
      'de la lista que SUNAT publica; un día sin tipo de cambio toma el del último día hábil anterior. Costo: 0 consultas.',
    args: {
      desde: t.arg.string({ required: true, description: 'Primera fecha, AAAA-MM-DD.' }),
      hasta: t.arg.string({ required: true, description: 'Última fecha, AAAA-MM-DD, no posterior a hoy en Lima.' }),
    },
    resolve: (_root, { desde, hasta }, ctx) => {
      const range = rateRange(desde.trim(), hasta.trim());
      if (!ctx.rates) throw refusal('ratesOff');
      return ctx.rates.between(range.desde, range.hasta);
    },
  }),
}));

/** The most days one `tiposDeCambio` answers: a year, leap day included. */
const MAX_RATE_DAYS = 366;

/** `desde`…`hasta` checked: real dates, in order, within MAX_RATE_DAYS, none after today in Lima. */
function rateRange(desde: string, hasta: string): { desde: string; hasta: string } {
  if (!isRealDate(desde)) throw refusal('notADate', { name: 'desde' });
  if (!isRealDate(hasta)) throw refusal('notADate', { name: 'hasta' });
  const today = todayInLima();
  if (hasta > today) throw refusal('rateInFuture', { today });
  const days = (Date.parse(hasta) - Date.parse(desde)) / 86_400_000 + 1;
  if (days < 1 || days > MAX_RATE_DAYS) throw refusal('rateRange', { max: MAX_RATE_DAYS });
  return { desde, hasta };
}
