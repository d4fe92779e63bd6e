import { z } from 'zod';
import type { ComprobanteBody } from '../upstream/schemas.js';
import { isRealDate, isValidRuc, MSG_RUC_INCORRECTO, type Checked } from '../upstream/keys.js';

export {
  checkDni,
  checkFecha,
  checkNumLicencia,
  checkRuc,
  dniOfRuc,
  isValidRuc,
  rucCheckDigit,
  rucOfDni,
  MSG_RUC_INCORRECTO,
  type Checked,
} from '../upstream/keys.js';

/**
 * Input rules checked before any upstream call, so bad input never costs a query.
 * Each parser returns the normalized value or a Spanish message naming what is wrong.
 */

export const MAX_RUCS = 100;

/** The six receipt fields, in upstream order, with the rule each must meet. */
const FIELD_RULES = {
  rucEmisor: z.string().refine(isValidRuc, 'RUC del emisor incorrecto (11 dígitos con dígito verificador válido)'),
  codigoTipoDocumento: z.string().regex(/^[0-9A-Z]{2}$/, 'debe tener 2 caracteres (01, 03, 07, 08, R1, ...)'),
  serieDocumento: z.string().regex(/^[0-9A-Z]{4}$/, 'debe tener 4 caracteres en mayúsculas o dígitos (F001, B001, E001, 0001)'),
  numeroDocumento: z.string().regex(/^\d{1,8}$/, 'debe tener de 1 a 8 dígitos'),
  fechaDeEmision: z.string().refine(isRealDate, 'debe ser una fecha existente con formato AAAA-MM-DD'),
  total: z.string().regex(/^\d{1,12}(\.\d{1,2})?$/, 'debe ser un importe decimal, por ejemplo 1180.00'),
} as const;
type FieldName = keyof typeof FIELD_RULES;
const FIELD_ORDER = Object.keys(FIELD_RULES) as FieldName[];

export type ComprobanteInput = Record<FieldName, string>;

function checkList<T>(list: readonly T[], max: number): string | undefined {
  if (list.length === 0) return 'Enviar al menos un comprobante.';
  if (list.length > max) return `Enviar máximo ${max} comprobantes por consulta (MAX_RECEIPTS).`;
  return undefined;
}

/** Problems of one receipt, each naming its position and field: `comprobantes[2].serieDocumento: ...`. */
function receiptProblems(fields: Record<FieldName, string>, where: string): string[] {
  const problems: string[] = [];
  for (const name of FIELD_ORDER) {
    const result = FIELD_RULES[name].safeParse(fields[name]);
    if (!result.success) problems.push(`${where}.${name}: ${result.error.issues[0]?.message ?? 'valor inválido'}`);
  }
  return problems;
}

function summarize(problems: string[]): string {
  const shown = problems.slice(0, 10).join('; ');
  return problems.length > 10 ? `${shown}; y ${problems.length - 10} problemas más` : shown;
}

/** Validates receipt objects and returns them in the upstream's snake_case shape (fields trimmed). */
export function checkComprobantes(list: readonly ComprobanteInput[], max: number): Checked<ComprobanteBody[]> {
  const listProblem = checkList(list, max);
  if (listProblem) return { ok: false, message: listProblem };
  const problems: string[] = [];
  const bodies = list.map((raw, i) => {
    const f = Object.fromEntries(FIELD_ORDER.map((k) => [k, raw[k].trim()])) as ComprobanteInput;
    problems.push(...receiptProblems(f, `comprobantes[${i}]`));
    return {
      ruc_emisor: f.rucEmisor,
      codigo_tipo_documento: f.codigoTipoDocumento,
      serie_documento: f.serieDocumento,
      numero_documento: f.numeroDocumento,
      fecha_de_emision: f.fechaDeEmision,
      total: f.total,
    };
  });
  return problems.length ? { ok: false, message: summarize(problems) } : { ok: true, value: bodies };
}

/** Validates `ruc|tipo|serie|numero|fecha|total` lines; they are sent exactly as given. */
export function checkLineas(lines: readonly string[], max: number): Checked<string[]> {
  const listProblem = checkList(lines, max);
  if (listProblem) return { ok: false, message: listProblem };
  const problems: string[] = [];
  lines.forEach((line, i) => {
    const parts = line.split('|');
    if (parts.length !== FIELD_ORDER.length) {
      problems.push(`comprobantes[${i}]: debe tener 6 partes separadas por '|' (ruc|tipo|serie|numero|fecha|total), tiene ${parts.length}`);
      return;
    }
    const fields = Object.fromEntries(FIELD_ORDER.map((k, j) => [k, parts[j]])) as ComprobanteInput;
    problems.push(...receiptProblems(fields, `comprobantes[${i}]`));
  });
  return problems.length ? { ok: false, message: summarize(problems) } : { ok: true, value: [...lines] };
}

/** SUNAT API credentials: a valid company RUC, a client id and a secret. The secret is never put in a message. */
export function checkCredencialesApi(c: { rucEmpresa: string; clientId: string; clientSecret: string }): Checked<typeof c> {
  const rucEmpresa = c.rucEmpresa.trim();
  const clientId = c.clientId.trim();
  const problems: string[] = [];
  if (!isValidRuc(rucEmpresa)) problems.push('credencialesApi.rucEmpresa: RUC incorrecto');
  if (clientId === '' || clientId.length > 200) problems.push('credencialesApi.clientId: de 1 a 200 caracteres');
  if (c.clientSecret.trim() === '' || c.clientSecret.length > 500) problems.push('credencialesApi.clientSecret: de 1 a 500 caracteres');
  return problems.length
    ? { ok: false, message: problems.join('; ') }
    : { ok: true, value: { rucEmpresa, clientId, clientSecret: c.clientSecret.trim() } };
}

/** SOL credentials: a valid company RUC and non-blank user and key. The key is never put in a message. */
export function checkCredencialesSol(c: { rucEmpresa: string; usuario: string; clave: string }): Checked<typeof c> {
  const rucEmpresa = c.rucEmpresa.trim();
  const problems: string[] = [];
  if (!isValidRuc(rucEmpresa)) problems.push('credencialesSol.rucEmpresa: RUC incorrecto');
  if (c.usuario.trim() === '') problems.push('credencialesSol.usuario: no puede estar vacío');
  if (c.clave === '') problems.push('credencialesSol.clave: no puede estar vacía');
  return problems.length
    ? { ok: false, message: problems.join('; ') }
    : { ok: true, value: { rucEmpresa, usuario: c.usuario.trim(), clave: c.clave } };
}

/** The receipts of a background validation, as a list: from 1 to `max` (VALIDACION_MASIVA_MAX), each checked as anywhere. */
export function checkJobList(list: readonly ComprobanteInput[], max: number): Checked<ComprobanteBody[]> {
  if (list.length === 0) return { ok: false, message: 'comprobantes: al menos uno' };
  if (list.length > max) return { ok: false, message: `comprobantes: a lo más ${max} (VALIDACION_MASIVA_MAX)` };
  return checkComprobantes(list, list.length);
}

/** Lines of `texto` checked between two turns of the event loop (about 10 ms of work). */
const LINES_A_TURN = 4000;

/**
 * The receipts of a background validation, as text: a line `ruc|tipo|serie|numero|fecha|total`
 * each (the date as YYYY-MM-DD or dd/mm/yyyy), blank lines skipped; each problem names its line,
 * counted from 1 over every line, blank ones included.
 */
export async function checkTexto(texto: string, max: number): Promise<Checked<ComprobanteBody[]>> {
  const problems: string[] = [];
  const bodies: ComprobanteBody[] = [];
  const lines = texto.split(/\r\n|\n|\r/);
  for (let i = 0; i < lines.length; i++) {
    // A month of lines is checked in turns: the other callers' answers go out between them.
    if (i > 0 && i % LINES_A_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
    const line = lines[i]!;
    if (line.trim() === '') continue;
    if (bodies.length + problems.length >= max)
      return { ok: false, message: `texto: a lo más ${max} comprobantes (VALIDACION_MASIVA_MAX)` };
    const parts = line.split('|').map((p) => p.trim());
    if (parts.length !== FIELD_ORDER.length) {
      problems.push(`línea ${i + 1}: debe tener 6 partes separadas por '|' (ruc|tipo|serie|numero|fecha|total), tiene ${parts.length}`);
      continue;
    }
    const [rucEmisor, codigoTipoDocumento, serieDocumento, numeroDocumento, fecha, total] = parts as [string, ...string[]];
    const dmy = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(fecha!);
    const fechaDeEmision = dmy ? `${dmy[3]}-${dmy[2]}-${dmy[1]}` : fecha!;
    const fields = { rucEmisor, codigoTipoDocumento, serieDocumento, numeroDocumento, fechaDeEmision, total } as ComprobanteInput;
    const found = receiptProblems(fields, `línea ${i + 1}`);
    if (found.length) problems.push(...found);
    else
      bodies.push({
        ruc_emisor: rucEmisor,
        codigo_tipo_documento: codigoTipoDocumento!,
        serie_documento: serieDocumento!,
        numero_documento: numeroDocumento!,
        fecha_de_emision: fechaDeEmision,
        total: total!,
      });
  }
  if (problems.length) return { ok: false, message: summarize(problems) };
  if (bodies.length === 0)
    return { ok: false, message: 'texto: ningún comprobante (una línea ruc|tipo|serie|numero|fecha|total cada uno)' };
  return { ok: true, value: bodies };
}
