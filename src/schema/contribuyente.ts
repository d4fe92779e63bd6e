import { refusal } from '../errors.js';
import { LOOKUPS } from '../upstream/lookups.js';
import { billed } from './billed.js';
import { ubigeoOf, type RucRecord, type RucSunatRecord } from '../upstream/schemas.js';
import type { Received } from '../data/lookups.js';
import { CONSULTADO_EN, consultadoEn, loadAnswered } from './received.js';
import { MAX_RUCS, checkRuc } from './validation.js';
import { builder } from './builder.js';
import { valid } from './input.js';
import type { Turns } from '../data/turns.js';
import { LONG_STREAMS, listOf, paced, paceOf, streamedAfter } from './stream-pace.js';

/** `SI` -> true, `NO` -> false, anything else (absent, blank, unknown) -> null. */
function siNo(flag: string | null | undefined): boolean | null {
  return flag === 'SI' ? true : flag === 'NO' ? false : null;
}

/** The record's SI/NO flags. */
type SiNoKey = 'es_agente_de_retencion' | 'es_buen_contribuyente' | 'es_agente_de_percepcion' | 'es_agente_de_percepcion_combustible';

/** The Pothos types of this schema, for a field maker shared by two object types. */
type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer S> ? S : never;

/**
 * The fields both records open with, in the same order: the document, its name, state and
 * condition, and the place. `said` words the two the summary always carries and the detail only sometimes.
 */
function identityFields<R extends Received<RucRecord> | Received<RucSunatRecord>>(
  t: PothosSchemaTypes.ObjectFieldBuilder<Types, R>,
  said: { direccion: string; departamento: string },
) {
  const text = (description: string, read: (r: R) => string | null) => t.string({ nullable: true, description, resolve: read });
  return {
    ruc: t.string({ description: 'RUC de 11 dígitos.', resolve: (r) => r.ruc }),
    nombreORazonSocial: t.string({ description: 'Nombre o razón social.', resolve: (r) => r.nombre_o_razon_social }),
    estado: text('Estado del contribuyente, p. ej. ACTIVO.', (r) => r.estado),
    condicion: text('Condición de domicilio, p. ej. HABIDO.', (r) => r.condicion),
    direccion: text(said.direccion, (r) => r.direccion),
    direccionCompleta: text('Dirección completa, con departamento, provincia y distrito.', (r) => r.direccion_completa),
    departamento: text(said.departamento, (r) => r.departamento),
    provincia: text('Provincia.', (r) => r.provincia),
    distrito: text('Distrito.', (r) => r.distrito),
    ubigeo: text('Ubigeo de SUNAT, 6 dígitos (departamento, provincia, distrito), p. ej. 150131.', ubigeoOf),
  };
}

export const ContribuyenteDetalle = builder.objectRef<Received<RucSunatRecord>>('ContribuyenteDetalle').implement({
  description:
    'Ficha detallada del contribuyente (REST: POST /ruc-sunat). Prefiere la fuente oficial de SUNAT; si falla, un proveedor de facturación electrónica.',
  fields: (t) => ({
    ...identityFields(t, {
      direccion: 'Dirección, cuando el registro la trae.',
      departamento: 'Departamento (región), cuando el registro lo trae.',
    }),
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
      ...identityFields(t, { direccion: 'Dirección.', departamento: 'Departamento (región).' }),
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
          { weight: LOOKUPS.rucSunat.price, key: checkRuc },
        ),
        resolve: (r, _args, ctx, info) => loadAnswered(ctx.loaders.of('rucSunat').load(valid(checkRuc(r.ruc))), ctx, info),
      }),
    };
  },
});

/** A list longer than this is answered in parts of this size, the event loop free between them (streamed: at its reader's pace). */
const LIST_PART = 500;

/**
 * The items of a long list answered whole, a part at a time: each part is read once the one
 * before it has settled, in its turn among every request's parts, so other requests go on meanwhile.
 */
function inParts<T>(length: number, at: (i: number) => Promise<T>, turns: Turns): Promise<T>[] {
  const items: Promise<T>[] = [];
  let before: Promise<unknown> = Promise.resolve();
  for (let from = 0; from < length; from += LIST_PART) {
    const start = before.then(() => turns.run(async () => undefined));
    const part = Array.from({ length: Math.min(LIST_PART, length - from) }, (_, k) => start.then(() => at(from + k)));
    items.push(...part);
    before = Promise.allSettled(part);
  }
  return items;
}

builder.queryFields((t) => ({
  contribuyente: t.field({
    type: Contribuyente,
    nullable: true,
    ...billed('Resumen del contribuyente (padrón reducido de SUNAT). REST: POST /ruc.', {
      weight: LOOKUPS.ruc.price,
      argument: 'ruc',
      key: checkRuc,
    }),
    args: { ruc: t.arg.string({ required: true, description: 'RUC de 11 dígitos (10, 15, 16, 17 o 20 + dígito verificador).' }) },
    resolve: (_root, { ruc }, ctx, info) => loadAnswered(ctx.loaders.of('ruc').load(valid(checkRuc(ruc))), ctx, info),
  }),
  contribuyentes: t.field({
    type: [Contribuyente],
    nullable: { list: false, items: true },
    ...billed(
      'Varios contribuyentes en una llamada: hasta MAX_RUCS_PER_LIST RUC (10000 por defecto); ' +
        `los que el padrón del gateway guarda cuestan 0, y de los demás van hasta ${MAX_RUCS}. ` +
        'Un RUC repetido se consulta una sola vez. Con @stream llegan los primeros mientras se leen los demás. ' +
        'REST: POST /ruc por cada RUC distinto que el padrón no guarda.',
      {
        weight: LOOKUPS.ruc.price,
        argument: 'rucs',
        list: true,
        max: (limits) => limits.maxRucsPerList,
        paidMax: MAX_RUCS,
        key: checkRuc,
        per: 'RUC distinto',
      },
    ),
    args: {
      rucs: t.arg.stringList({
        required: true,
        description: 'Hasta MAX_RUCS_PER_LIST RUC; cada posición de la respuesta corresponde a la misma posición de esta lista.',
      }),
    },
    resolve: (_root, { rucs }, ctx, info) => {
      if (rucs.length > ctx.limits.maxRucsPerList) throw refusal('listTooLong', { max: ctx.limits.maxRucsPerList });
      const checked = rucs.map(checkRuc);
      // Asked fresh (Cache-Control: no-cache), the register answers none of them: each goes to the service, and counts.
      const held = (ruc: string) => !ctx.call.noCache && ctx.padron?.holds(ruc) === true;
      const paid = new Set(checked.flatMap((c) => (c.ok && !held(c.value) ? [c.value] : [])));
      if (paid.size > MAX_RUCS) throw refusal('paidRucs', { max: MAX_RUCS, paid: paid.size });
      const loader = ctx.loaders.of('ruc');
      // A bad RUC fails only its own position (error path ends in its index); the rest still resolve.
      const at = (i: number) => {
        const c = checked[i]!;
        return c.ok ? loadAnswered(loader.load(c.value), ctx, info, i) : Promise.reject(refusal('invalidInput', { why: c.message }));
      };
      if (rucs.length <= LIST_PART) return rucs.map((_, i) => at(i));
      const initial = streamedAfter(info);
      if (initial === undefined) return inParts(rucs.length, at, ctx.listParts);
      // Streamed, a record the register answered is let go once its item is answered (it costs nothing to read again):
      // the request holds the parts on their way, not the whole list.
      const once = async (i: number) => {
        const record = await at(i);
        const c = checked[i];
        if (record.fuente === 'PADRON' && c?.ok) loader.clear(c.value);
        return record;
      };
      const release = ctx.streamPlaces.take(ctx.call.caller);
      if (!release) throw refusal('streamsBusy', LONG_STREAMS);
      // Given back when the list ends, and when the answer does: an error elsewhere can end it with the list unread.
      ctx.clientGone?.onClosed(release);
      return paced(rucs.length, once, { pace: paceOf(ctx), release, list: listOf(info), initial, turns: ctx.listParts });
    },
  }),
  contribuyenteDetalle: t.field({
    type: ContribuyenteDetalle,
    nullable: true,
    ...billed('Ficha detallada (SUNAT, con respaldo de un proveedor de facturación). REST: POST /ruc-sunat.', {
      weight: LOOKUPS.rucSunat.price,
      argument: 'ruc',
      key: checkRuc,
    }),
    args: { ruc: t.arg.string({ required: true, description: 'RUC de 11 dígitos.' }) },
    resolve: (_root, { ruc }, ctx, info) => loadAnswered(ctx.loaders.of('rucSunat').load(valid(checkRuc(ruc))), ctx, info),
  }),
}));
