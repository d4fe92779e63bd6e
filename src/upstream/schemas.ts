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

const optionalText = z.string().nullish();
/** Upstream numbers sometimes arrive as JSON numbers; the contract keeps them as text. */
const text = z.union([z.string(), z.number()]).transform(String);

/** `data` of POST /ruc (spec 2.2). */
export const RucRecordSchema = z.object({
  ruc: z.string(),
  nombre_o_razon_social: z.string(),
  estado: optionalText,
  condicion: optionalText,
  direccion: optionalText,
  departamento: optionalText,
  es_agente_de_retencion: optionalText,
  es_buen_contribuyente: optionalText,
});
export type RucRecord = z.infer<typeof RucRecordSchema>;

/** `data` of POST /ruc-sunat (spec 2.3). */
export const RucSunatRecordSchema = z.object({
  ruc: z.string(),
  nombre_o_razon_social: z.string(),
  estado: optionalText,
  condicion: optionalText,
  direccion_completa: optionalText,
  tipo_contribuyente: optionalText,
  fecha_inscripcion: optionalText,
  actividades_economicas: z
    .array(z.string())
    .nullish()
    .transform((v) => v ?? []),
});
export type RucSunatRecord = z.infer<typeof RucSunatRecordSchema>;

/** `data` of POST /licencia-conducir (spec 2.5). */
export const LicenciaRecordSchema = z.object({
  num_licencia: z.string(),
  tipo_documento: optionalText,
  numero_documento: optionalText,
  nombres: optionalText,
  apellido_paterno: optionalText,
  apellido_materno: optionalText,
});
export type LicenciaRecord = z.infer<typeof LicenciaRecordSchema>;

/** One entry of `comprobantes` in the batch result (spec 2.4). */
export const ComprobanteValidadoSchema = z.object({
  serie_documento: text,
  numero_documento: text,
  comprobante_estado_descripcion: optionalText,
  // The element shape is not shown by the spec; strings pass as sent, anything else as its JSON text.
  observaciones: z
    .array(z.unknown())
    .nullish()
    .transform((v) => (v ?? []).map((o) => (typeof o === 'string' ? o : JSON.stringify(o)))),
});

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
