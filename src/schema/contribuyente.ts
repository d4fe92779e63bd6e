import { REST } from '../upstream/paths.js';
import { gatewayError } from '../errors.js';
import { PLAN_COST } from '../upstream/billing.js';
import { billed } from './billed.js';
import { ubigeoOf, type RucRecord, type RucSunatRecord } from '../upstream/schemas.js';
import type { Received } from '../data/lookups.js';
import { CONSULTADO_EN, consultadoEn, loadAnswered } from './received.js';
import { MAX_RUCS, MSG_MAX_RUCS, checkRuc } from './validation.js';
import { builder } from './builder.js';
import { valid } from './input.js';

/** `SI` -> true, `NO` -> false, anything else (absent, blank, unknown) -> null. */
function siNo(flag: string | null | undefined): boolean | null {
  return flag === 'SI' ? true : flag === 'NO' ? false : null;
}

/** The record's SI/NO flags. */
type SiNoKey = 'es_agente_de_retencion' | 'es_buen_contribuyente' | 'es_agente_de_percepcion' | 'es_agente_de_percepcion_combustible';

/** The place fields both records carry (a natural person's come back empty: null here). */
const PLACE = {
  direccionCompleta: 'Dirección completa, con departamento, provincia y distrito.',
  provincia: 'Provincia.',
  distrito: 'Distrito.',
  ubigeo: 'Ubigeo de SUNAT, 6 dígitos (departamento, provincia, distrito), p. ej. 150131.',
} as const;

export const ContribuyenteDetalle = builder.objectRef<Received<RucSunatRecord>>('ContribuyenteDetalle').implement({
  description:
    'Ficha detallada del contribuyente (REST: POST /ruc-sunat). Prefiere la fuente oficial de SUNAT; si falla, un proveedor de facturación electrónica.',
  fields: (t) => ({
    ruc: t.exposeString('ruc', { description: 'RUC de 11 dígitos.' }),
    nombreORazonSocial: t.exposeString('nombre_o_razon_social', { description: 'Nombre o razón social.' }),
    estado: t.exposeString('estado', { nullable: true, description: 'Estado del contribuyente, p. ej. ACTIVO.' }),
    condicion: t.exposeString('condicion', { nullable: true, description: 'Condición de domicilio, p. ej. HABIDO.' }),
    direccion: t.exposeString('direccion', { nullable: true, description: 'Dirección, cuando el registro la trae.' }),
    direccionCompleta: t.exposeString('direccion_completa', { nullable: true, description: PLACE.direccionCompleta }),
    departamento: t.exposeString('departamento', { nullable: true, description: 'Departamento (región), cuando el registro lo trae.' }),
    provincia: t.exposeString('provincia', { nullable: true, description: PLACE.provincia }),
    distrito: t.exposeString('distrito', { nullable: true, description: PLACE.distrito }),
    ubigeo: t.string({ nullable: true, description: PLACE.ubigeo, resolve: ubigeoOf }),
    tipoContribuyente: t.exposeString('tipo_contribuyente', { nullable: true, description: 'Tipo de contribuyente.' }),
    fechaInscripcion: t.exposeString('fecha_inscripcion', { nullable: true, description: 'Fecha de inscripción, AAAA-MM-DD.' }),
    actividadesEconomicas: t.exposeStringList('actividades_economicas', { description: 'Actividades económicas registradas.' }),
    consultadoEn: t.string({ description: CONSULTADO_EN, resolve: consultadoEn }),
  }),
});

export const Contribuyente = builder.objectRef<Received<RucRecord>>('Contribuyente').implement({
  description: 'Resumen del contribuyente (REST: POST /ruc, padrón reducido de SUNAT).',
  fields: (t) => {
    /** A SI/NO flag of the record as a Boolean, its rule said once. */
    const siNoField = (what: string, key: SiNoKey) =>
      t.boolean({ nullable: true, description: `${what}: "SI" -> true, "NO" -> false, otro valor -> null.`, resolve: (r) => siNo(r[key]) });
    return {
      ruc: t.exposeString('ruc', { description: 'RUC de 11 dígitos.' }),
      nombreORazonSocial: t.exposeString('nombre_o_razon_social', { description: 'Nombre o razón social.' }),
      estado: t.exposeString('estado', { nullable: true, description: 'Estado del contribuyente, p. ej. ACTIVO.' }),
      condicion: t.exposeString('condicion', { nullable: true, description: 'Condición de domicilio, p. ej. HABIDO.' }),
      direccion: t.exposeString('direccion', { nullable: true, description: 'Dirección.' }),
      direccionCompleta: t.exposeString('direccion_completa', { nullable: true, description: PLACE.direccionCompleta }),
      departamento: t.exposeString('departamento', { nullable: true, description: 'Departamento (región).' }),
      provincia: t.exposeString('provincia', { nullable: true, description: PLACE.provincia }),
      distrito: t.exposeString('distrito', { nullable: true, description: PLACE.distrito }),
      ubigeo: t.string({ nullable: true, description: PLACE.ubigeo, resolve: ubigeoOf }),
      esAgenteDeRetencion: siNoField('Agente de retención', 'es_agente_de_retencion'),
      esBuenContribuyente: siNoField('Buen contribuyente', 'es_buen_contribuyente'),
      esAgenteDePercepcion: siNoField('Agente de percepción', 'es_agente_de_percepcion'),
      esAgenteDePercepcionCombustible: siNoField('Agente de percepción de combustible', 'es_agente_de_percepcion_combustible'),
      consultadoEn: t.string({ description: CONSULTADO_EN, resolve: consultadoEn }),
      detalle: t.field({
        type: ContribuyenteDetalle,
        nullable: true,
        ...billed(
          'La ficha detallada del mismo RUC (REST: POST /ruc-sunat; una sola vez por RUC en la operación, compartida con `contribuyenteDetalle`).',
          { weight: PLAN_COST[REST.rucSunat], key: checkRuc },
        ),
        resolve: (r, _args, ctx, info) => loadAnswered(ctx.loaders.rucSunat.load(valid(checkRuc(r.ruc))), ctx, info),
      }),
    };
  },
});

builder.queryFields((t) => ({
  contribuyente: t.field({
    type: Contribuyente,
    nullable: true,
    ...billed('Resumen del contribuyente (padrón reducido de SUNAT). REST: POST /ruc.', {
      weight: PLAN_COST[REST.ruc],
      argument: 'ruc',
      key: checkRuc,
    }),
    args: { ruc: t.arg.string({ required: true, description: 'RUC de 11 dígitos (10, 15, 16, 17 o 20 + dígito verificador).' }) },
    resolve: (_root, { ruc }, ctx, info) => loadAnswered(ctx.loaders.ruc.load(valid(checkRuc(ruc))), ctx, info),
  }),
  contribuyentes: t.field({
    type: [Contribuyente],
    nullable: { list: false, items: true },
    ...billed(
      `Varios contribuyentes en una llamada (hasta ${MAX_RUCS} RUC). Un RUC repetido se consulta una sola vez. REST: POST /ruc por cada RUC distinto.`,
      { weight: PLAN_COST[REST.ruc], argument: 'rucs', list: true, max: MAX_RUCS, key: checkRuc, per: 'RUC distinto' },
    ),
    args: {
      rucs: t.arg.stringList({
        required: true,
        description: `Hasta ${MAX_RUCS} RUC; cada posición de la respuesta corresponde a la misma posición de esta lista.`,
      }),
    },
    resolve: (_root, { rucs }, ctx, info) => {
      if (rucs.length > MAX_RUCS) throw gatewayError('INVALID_INPUT', MSG_MAX_RUCS);
      // A bad RUC fails only its own position (error path ends in its index); the rest still resolve.
      return rucs.map((ruc, i) => {
        const checked = checkRuc(ruc);
        if (!checked.ok) return Promise.reject(gatewayError('INVALID_INPUT', checked.message));
        return loadAnswered(ctx.loaders.ruc.load(checked.value), ctx, info, i);
      });
    },
  }),
  contribuyenteDetalle: t.field({
    type: ContribuyenteDetalle,
    nullable: true,
    ...billed('Ficha detallada (SUNAT, con respaldo de un proveedor de facturación). REST: POST /ruc-sunat.', {
      weight: PLAN_COST[REST.rucSunat],
      argument: 'ruc',
      key: checkRuc,
    }),
    args: { ruc: t.arg.string({ required: true, description: 'RUC de 11 dígitos.' }) },
    resolve: (_root, { ruc }, ctx, info) => loadAnswered(ctx.loaders.rucSunat.load(valid(checkRuc(ruc))), ctx, info),
  }),
}));
