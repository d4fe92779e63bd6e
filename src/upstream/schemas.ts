import { z } from 'zod';

/** The common envelope (spec 2.1). Lenient on error fields: an unknown code is still an error. */
export const EnvelopeSchema = z.object({
  success: z.boolean(),
  code: z.string().optional(),
  retryable: z.boolean().optional(),
  data: z.unknown().optional(),
  message: z.string().optional(),
  time: z.number().optional(),
});

/** Upstream numbers sometimes arrive as JSON numbers; the contract keeps them as text. */
const text = z.union([z.string(), z.number()]).transform(String);
/** A text the record may leave out; `withoutEmpty` makes "no value" null. */
const optionalText = z.string().nullish();
/** A code that may arrive as text or a number, or be left out. */
const optionalCode = z.union([z.string(), z.number()]).nullish();
/** `ubigeo`: the location code's three levels (department, province, district), any of them null. */
const ubigeoLevels = z.array(z.union([z.string(), z.number()]).nullable()).nullish();

/** The place fields a real record carries beyond the spec's (upstream-notes), on /ruc and /ruc-sunat alike. */
const place = {
  direccion: optionalText,
  direccion_completa: optionalText,
  departamento: optionalText,
  provincia: optionalText,
  distrito: optionalText,
  ubigeo_sunat: optionalCode,
  ubigeo: ubigeoLevels,
};

/** What the service writes for "no value": empty or blank text, or a lone dash (upstream-notes: a natural person's address). */
const NO_VALUE = /^\s*-?\s*$/;
// A test of the text as it is: trimming it made two strings a field (docs/performance.md).
// Most values start with a letter or a digit and end with no space: the pattern only for the rest.
const noValue = (v: string) => v.length === 0 || ((v.charCodeAt(0) <= 45 || v.charCodeAt(v.length - 1) <= 32) && NO_VALUE.test(v));
type Cleaned<T> = {
  [K in keyof T]-?: K extends 'ubigeo'
    ? (string | null)[]
    : NonNullable<T[K]> extends readonly unknown[]
      ? NonNullable<T[K]>
      : undefined extends T[K]
        ? string | null
        : T[K];
};

/**
 * One pass over a parsed record's optional fields, after zod's own (one transform per record
 * rather than one per field keeps zod's compiled object parsing: docs/performance.md): absent,
 * `""`, blank and `"-"` become null, a numeric code its text, `ubigeo`'s levels likewise.
 */
function withoutEmpty<T extends object>(record: T, optional: readonly string[]): Cleaned<T> {
  const out = record as Record<string, unknown>;
  for (const key of optional) {
    const v = out[key];
    if (key === 'ubigeo') out[key] = Array.isArray(v) ? v.map((l: unknown) => (l == null || noValue(String(l)) ? null : String(l))) : [];
    else if (!Array.isArray(v)) out[key] = v == null || noValue(String(v)) ? null : String(v);
  }
  return out as Cleaned<T>;
}

/** `schema` whose optional texts, codes and levels come out with "no value" as null. */
/** The fields a record may leave out: the ones cleaned. */
const optionalKeys = (schema: z.ZodObject) =>
  Object.keys(schema.shape).filter((key) => (schema.shape[key] as z.ZodType).safeParse(undefined).success);

function cleaned<S extends z.ZodObject>(schema: S) {
  const optional = optionalKeys(schema);
  return schema.transform((record: z.output<S>) => withoutEmpty(record, optional));
}

/**
 * A looked-up record as received: cleaned, and stamped with when it was read (epoch ms), which
 * travels with it through every cache. Stamped here, where the answer is read, rather than in
 * a step of its own: a promise per call less (docs/performance.md).
 */
function received<S extends z.ZodObject>(schema: S) {
  const optional = optionalKeys(schema);
  return schema.transform((record: z.output<S>) => {
    const stamped = withoutEmpty(record, optional) as Cleaned<z.output<S>> & { receivedAt: number };
    stamped.receivedAt = Date.now();
    return stamped;
  });
}

/** What both records open with: the document, its name, state and condition, and the place fields. */
const identity = {
  ruc: z.string(),
  nombre_o_razon_social: z.string(),
  estado: optionalText,
  condicion: optionalText,
  ...place,
};

/** The six-digit location code: `ubigeo_sunat`, else the last level of `ubigeo` that has a value. */
export function ubigeoOf(record: { ubigeo_sunat: string | null; ubigeo: readonly (string | null)[] }): string | null {
  return record.ubigeo_sunat ?? record.ubigeo.findLast((level) => level !== null) ?? null;
}

/** `data` of POST /ruc (spec 2.2). */
export const RucRecordSchema = received(
  z.object({
    ...identity,
    es_agente_de_retencion: optionalText,
    es_buen_contribuyente: optionalText,
    es_agente_de_percepcion: optionalText,
    es_agente_de_percepcion_combustible: optionalText,
  }),
);
export type RucRecord = z.infer<typeof RucRecordSchema>;

/** `data` of POST /ruc-sunat (spec 2.3). */
export const RucSunatRecordSchema = received(
  z.object({
    ...identity,
    tipo_contribuyente: optionalText,
    fecha_inscripcion: optionalText,
    actividades_economicas: z
      .array(z.string())
      .nullish()
      .transform((v) => v ?? []),
  }),
);
export type RucSunatRecord = z.infer<typeof RucSunatRecordSchema>;

/** `data` of POST /licencia-conducir (spec 2.5). */
export const LicenciaRecordSchema = received(
  z.object({
    num_licencia: z.string(),
    tipo_documento: optionalText,
    numero_documento: optionalText,
    nombres: optionalText,
    apellido_paterno: optionalText,
    apellido_materno: optionalText,
  }),
);
export type LicenciaRecord = z.infer<typeof LicenciaRecordSchema>;

/** One entry of `comprobantes` in the batch result (spec 2.4). */
export const ComprobanteValidadoSchema = cleaned(
  z.object({
    serie_documento: text,
    numero_documento: text,
    comprobante_estado_codigo: optionalCode,
    comprobante_estado_descripcion: optionalText,
    empresa_estado_codigo: optionalCode,
    empresa_estado_descripcion: optionalText,
    // The service also spells it this way (upstream-notes); clients read both.
    empresa_estado_description: optionalText,
    empresa_condicion_codigo: optionalCode,
    empresa_condicion_descripcion: optionalText,
    // The element shape is not shown by the spec; strings pass as sent, anything else as its JSON text.
    observaciones: z
      .array(z.unknown())
      .nullish()
      .transform((v) => (v ?? []).map((o) => (typeof o === 'string' ? o : JSON.stringify(o)))),
  }),
).transform(({ empresa_estado_description, ...r }) => ({
  ...r,
  empresa_estado_descripcion: r.empresa_estado_descripcion ?? empresa_estado_description,
}));

/** `data` of POST /validacion-multiple-cpe and its -v2 variant (spec 2.4, upstream-notes). */
export const ValidacionRecordSchema = z.object({
  cantidad_de_comprobantes: z.number().int().nonnegative(),
  comprobantes: z.array(ComprobanteValidadoSchema),
});
export type ValidacionRecord = z.infer<typeof ValidacionRecordSchema>;

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
