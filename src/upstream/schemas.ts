import { z } from 'zod';
import { decimalsAsText, reader, Unreadable, type Reader, type Reading } from './reader.js';

/** The common envelope (spec 2.1). Lenient on error fields: an unknown code is still an error. */
export const EnvelopeSchema = z.object({
  success: z.boolean(),
  code: z.string().optional(),
  retryable: z.boolean().optional(),
  data: z.unknown().optional(),
  message: z.string().optional(),
  time: z.number().optional(),
});

/**
 * What both records open with: the document, its name, state and condition, and the place
 * fields a real record carries beyond the spec's (upstream-notes), on /ruc and /ruc-sunat alike.
 * Each record's own fields are assigned onto it: a spread into a new object takes V8's slow path
 * (docs/performance.md, "Reading a record").
 */
const identityOf = (r: Reading) => ({
  ruc: r.text('ruc'),
  nombre_o_razon_social: r.text('nombre_o_razon_social'),
  estado: r.optional('estado'),
  condicion: r.optional('condicion'),
  direccion: r.optional('direccion'),
  direccion_completa: r.optional('direccion_completa'),
  departamento: r.optional('departamento'),
  provincia: r.optional('provincia'),
  distrito: r.optional('distrito'),
  ubigeo_sunat: r.code('ubigeo_sunat'),
  ubigeo: r.levels('ubigeo'),
});

/** The six-digit location code: `ubigeo_sunat`, else the last level of `ubigeo` that has a value. */
export function ubigeoOf(record: { ubigeo_sunat: string | null; ubigeo: readonly (string | null)[] }): string | null {
  return record.ubigeo_sunat ?? record.ubigeo.findLast((level) => level !== null) ?? null;
}

// Each looked-up record is stamped with when it was read (`receivedAt`, epoch ms), which travels
// with it through every cache: here, where the answer is read, rather than in a step of its own
// (a promise per call less: docs/performance.md).

/** Reads `data` of POST /ruc (spec 2.2). */
export const readRucRecord = reader((r) =>
  Object.assign(identityOf(r), {
    es_agente_de_retencion: r.optional('es_agente_de_retencion'),
    es_buen_contribuyente: r.optional('es_buen_contribuyente'),
    es_agente_de_percepcion: r.optional('es_agente_de_percepcion'),
    es_agente_de_percepcion_combustible: r.optional('es_agente_de_percepcion_combustible'),
    receivedAt: Date.now(),
  }),
);
export type RucRecord = ReadBy<typeof readRucRecord>;

/** Reads `data` of POST /ruc-sunat (spec 2.3). */
export const readRucSunatRecord = reader((r) =>
  Object.assign(identityOf(r), {
    tipo_contribuyente: r.optional('tipo_contribuyente'),
    fecha_inscripcion: r.optional('fecha_inscripcion'),
    actividades_economicas: r.list('actividades_economicas'),
    receivedAt: Date.now(),
  }),
);
export type RucSunatRecord = ReadBy<typeof readRucSunatRecord>;

/** Reads `data` of POST /licencia-conducir (spec 2.5). */
export const readLicenciaRecord = reader((r) => ({
  num_licencia: r.text('num_licencia'),
  tipo_documento: r.optional('tipo_documento'),
  numero_documento: r.optional('numero_documento'),
  nombres: r.optional('nombres'),
  apellido_paterno: r.optional('apellido_paterno'),
  apellido_materno: r.optional('apellido_materno'),
  receivedAt: Date.now(),
}));
export type LicenciaRecord = ReadBy<typeof readLicenciaRecord>;

/** Reads `data` of POST /dni (upstream-notes: a person of SUNAT's reduced register, by DNI). */
export const readDniRecord = reader((r) => ({
  numero: r.figure('numero'),
  nombre_completo: r.optional('nombre_completo'),
  nombres: r.optional('nombres'),
  apellido_paterno: r.optional('apellido_paterno'),
  apellido_materno: r.optional('apellido_materno'),
  // One character, sent as text or, by some clients' account, as a number.
  codigo_verificacion: r.code('codigo_verificacion'),
  receivedAt: Date.now(),
}));
export type DniRecord = ReadBy<typeof readDniRecord>;

/** A list answer's items, each read by `item`, and stamped as a whole: a list keeps no field of its own through a cache's JSON. */
function listOf<T>(item: Reader<T>): Reader<{ items: T[]; receivedAt: number }> {
  return (data) => {
    if (!Array.isArray(data)) return new Unreadable(['(root): invalid_type']);
    const items: T[] = [];
    for (const [i, one] of data.entries()) {
      const read = item(one);
      if (read instanceof Unreadable) return new Unreadable(read.issues.map((issue) => `${i}.${issue}`));
      items.push(read);
    }
    return { items, receivedAt: Date.now() };
  };
}

/** Reads `data` of POST /ruc-representantes: a company's legal representatives (upstream-notes). */
export const readRepresentantes = listOf(
  reader((r) => ({
    tipo_de_documento: r.optional('tipo_de_documento'),
    numero_de_documento: r.code('numero_de_documento'),
    nombre: r.optional('nombre'),
    cargo: r.optional('cargo'),
    fecha_desde: r.optional('fecha_desde'),
  })),
);
export type RepresentantesRecord = ReadBy<typeof readRepresentantes>;

/** Reads `data` of POST /ruc-establecimientos-anexos: a company's branches, each place read as in /ruc (upstream-notes). */
export const readEstablecimientos = listOf(
  reader((r) => ({
    codigo: r.code('codigo'),
    tipo_de_establecimiento: r.optional('tipo_de_establecimiento'),
    actividad_economica: r.optional('actividad_economica'),
    direccion: r.optional('direccion'),
    direccion_completa: r.optional('direccion_completa'),
    departamento: r.optional('departamento'),
    provincia: r.optional('provincia'),
    distrito: r.optional('distrito'),
    ubigeo_sunat: r.code('ubigeo_sunat'),
    ubigeo: r.levels('ubigeo'),
  })),
);
export type EstablecimientosRecord = ReadBy<typeof readEstablecimientos>;

/** The first of two readings that has a value (both read, so both checked). */
const either = (first: string | null, second: string | null) => first ?? second;

/** The currency whose rate the gateway asks for, as public clients do. */
export const MONEDA = 'USD';

/** A rate's figures, read from the body's own text: never through a binary float. */
const RATE_TEXT = decimalsAsText(['compra', 'venta']);

/**
 * Reads `data` of POST /tipo-de-cambio, for the date asked: `compra` and `venta` as decimal text,
 * the rate's own date by either of its spellings (upstream-notes), and the currency asked for.
 */
export const readTipoDeCambio = (fecha: string) =>
  Object.assign(
    reader((r) => ({
      fecha,
      fecha_sunat: either(r.date('fecha_sunat'), r.date('fecha_busqueda')),
      moneda: r.optional('moneda') ?? MONEDA,
      compra: r.decimal('compra'),
      venta: r.decimal('venta'),
      receivedAt: Date.now(),
    })),
    { parse: RATE_TEXT },
  );
export type TipoDeCambioRecord = ReadBy<ReturnType<typeof readTipoDeCambio>>;

/** One entry of `comprobantes` in the batch result (spec 2.4). */
const readComprobante = reader((r) => ({
  serie_documento: r.figure('serie_documento'),
  numero_documento: r.figure('numero_documento'),
  comprobante_estado_codigo: r.code('comprobante_estado_codigo'),
  comprobante_estado_descripcion: r.optional('comprobante_estado_descripcion'),
  empresa_estado_codigo: r.code('empresa_estado_codigo'),
  // The service also spells it `empresa_estado_description` (upstream-notes); clients read both, and both are checked.
  empresa_estado_descripcion: either(r.optional('empresa_estado_descripcion'), r.optional('empresa_estado_description')),
  empresa_condicion_codigo: r.code('empresa_condicion_codigo'),
  empresa_condicion_descripcion: r.optional('empresa_condicion_descripcion'),
  // The element shape is not shown by the spec; strings pass as sent, anything else as its JSON text.
  observaciones: r.notes('observaciones'),
  observaciones_detalle: r.remarks('observaciones'),
}));
type ComprobanteValidado = ReadBy<typeof readComprobante>;

/** `data` of POST /validacion-multiple-cpe and its -v2 variant (spec 2.4, upstream-notes). */
export interface ValidacionRecord {
  cantidad_de_comprobantes: number;
  comprobantes: ComprobanteValidado[];
}

/** Reads `data` of POST /validacion-multiple-cpe and its -v2 variant: the count, and each receipt as above. */
export function readValidacionRecord(data: unknown): ValidacionRecord | Unreadable {
  if (typeof data !== 'object' || data === null) return new Unreadable(['(root): invalid_type']);
  const { cantidad_de_comprobantes: count, comprobantes: list } = data as Record<string, unknown>;
  if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0)
    return new Unreadable(['cantidad_de_comprobantes: invalid_type']);
  if (!Array.isArray(list)) return new Unreadable(['comprobantes: invalid_type']);
  const comprobantes: ComprobanteValidado[] = [];
  for (const [i, item] of list.entries()) {
    const read = readComprobante(item);
    if (read instanceof Unreadable) return new Unreadable(read.issues.map((issue) => `comprobantes.${i}.${issue}`));
    comprobantes.push(read);
  }
  return { cantidad_de_comprobantes: count, comprobantes };
}

/** What a reader reads. */
type ReadBy<R> = R extends Reader<infer T> ? T : never;

/** One receipt as the upstream takes it (upstream-notes: "the receipt fields"). */
export interface ComprobanteBody {
  ruc_emisor: string;
  codigo_tipo_documento: string;
  serie_documento: string;
  numero_documento: string;
  fecha_de_emision: string;
  total: string;
}

/** SOL credentials for the -v2 variant. Secrets: never logged, cached or echoed. */
export interface CredencialesSol {
  rucEmpresa: string;
  usuario: string;
  clave: string;
}
