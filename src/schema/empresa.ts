import { LOOKUPS } from '../upstream/lookups.js';
import { ubigeoOf, type EstablecimientosRecord, type RepresentantesRecord } from '../upstream/schemas.js';
import { billed } from './billed.js';
import { builder } from './builder.js';
import { Contribuyente } from './contribuyente.js';
import { Persona, PERSONA_NAMED, personaNamed } from './persona.js';
import { loadAnswered } from './received.js';
import { checkRuc } from './validation.js';

/**
 * Representatives one company is priced for, for what hangs under each (its person): a router is
 * told it too. Most companies list one to a few; a bank lists a hundred or more, which the
 * operation's spend at run time holds to MAX_OPERATION_COST. Ten keeps a checkout of a few
 * companies under the default limit while pricing a large one honestly.
 */
const ASSUMED_REPRESENTATIVES = 10;

const Representante = builder.objectRef<RepresentantesRecord['items'][number]>('Representante').implement({
  description: 'Representante legal de una empresa (REST: POST /ruc-representantes).',
  fields: (t) => ({
    tipoDeDocumento: t.exposeString('tipo_de_documento', { nullable: true, description: 'Tipo de documento, p. ej. DNI o CE.' }),
    numeroDeDocumento: t.exposeString('numero_de_documento', { nullable: true, description: 'Número de documento.' }),
    nombre: t.exposeString('nombre', { nullable: true, description: 'Nombre.' }),
    cargo: t.exposeString('cargo', { nullable: true, description: 'Cargo, p. ej. GERENTE GENERAL.' }),
    fechaDesde: t.exposeString('fecha_desde', { nullable: true, description: 'Desde cuándo, tal como lo envía el servicio.' }),
    persona: t.field({
      type: Persona,
      nullable: true,
      ...PERSONA_NAMED('La persona'),
      resolve: (r, _args, ctx, info) => personaNamed(r.tipo_de_documento, r.numero_de_documento, ctx, info),
    }),
  }),
});

const Establecimiento = builder.objectRef<EstablecimientosRecord['items'][number]>('Establecimiento').implement({
  description: 'Establecimiento anexo de una empresa (REST: POST /ruc-establecimientos-anexos).',
  fields: (t) => {
    const text = (description: string, read: (e: EstablecimientosRecord['items'][number]) => string | null) =>
      t.string({ nullable: true, description, resolve: read });
    return {
      codigo: text('Código del establecimiento.', (e) => e.codigo),
      tipoDeEstablecimiento: text('Tipo, p. ej. SU. SUCURSAL.', (e) => e.tipo_de_establecimiento),
      actividadEconomica: text('Actividad económica.', (e) => e.actividad_economica),
      direccion: text('Dirección.', (e) => e.direccion),
      direccionCompleta: text('Dirección completa, con departamento, provincia y distrito.', (e) => e.direccion_completa),
      departamento: text('Departamento (región).', (e) => e.departamento),
      provincia: text('Provincia.', (e) => e.provincia),
      distrito: text('Distrito.', (e) => e.distrito),
      ubigeo: text('Ubigeo de SUNAT, 6 dígitos, leído como en Contribuyente.', ubigeoOf),
    };
  },
});

/** A company's lists are asked by its RUC; a natural person (RUC 10…) has none, and is not asked. */
const companyRuc = (ruc: string) =>
  ruc.startsWith('10') ? { ok: false as const, message: 'Una persona natural no tiene.' } : checkRuc(ruc);

builder.objectFields(Contribuyente, (t) => ({
  representantes: t.field({
    type: [Representante],
    nullable: true,
    ...billed('Representantes legales (REST: POST /ruc-representantes); [] sin llamada para un RUC 10.', {
      weight: LOOKUPS.representantes.price,
      key: companyRuc,
      assumedSize: ASSUMED_REPRESENTATIVES,
    }),
    resolve: async (r, _args, ctx, info) => {
      const ruc = companyRuc(r.ruc);
      return ruc.ok ? (await loadAnswered(ctx.loaders.of('representantes').load(ruc.value), ctx, info)).items : [];
    },
  }),
  establecimientos: t.field({
    type: [Establecimiento],
    nullable: true,
    ...billed('Establecimientos anexos (REST: POST /ruc-establecimientos-anexos).', {
      weight: LOOKUPS.establecimientos.price,
      key: checkRuc,
    }),
    resolve: async (r, _args, ctx, info) => (await loadAnswered(ctx.loaders.of('establecimientos').load(r.ruc), ctx, info)).items,
  }),
}));
