import { z } from 'zod';
import type { ComprobanteBody } from '../upstream/schemas.js';
import { FIRST_RATE_DATE, todayInLima, tomorrowInLima } from '../upstream/dates.js';

/**
 * Input rules checked before any upstream call, so bad input never costs a query.
 * Each parser returns the normalized value or a Spanish message naming what is wrong.
 */
export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

export const MAX_RUCS = 100;
export const MSG_RUC_INCORRECTO = 'El RUC es incorrecto';
export const MSG_MAX_RUCS = `Enviar máximo ${MAX_RUCS} RUC por consulta.`;
/** Federation's `_entities` takes as many references per operation as `contribuyentes` takes RUCs. */
export const MSG_MAX_REFERENCES = `Enviar máximo ${MAX_RUCS} referencias por consulta.`;
export const MSG_BAD_REFERENCE = 'Cada referencia debe ser un objeto con __typename Contribuyente, LicenciaConducir o Persona.';

const RUC_PREFIXES = new Set(['10', '15', '16', '17', '20']);
const RUC_WEIGHTS = [5, 4, 3, 2, 7, 6, 5, 4, 3, 2] as const;

/** SUNAT's modulo-11 check digit of the first ten digits. */
export function rucCheckDigit(first10: string): number {
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += Number(first10[i]) * RUC_WEIGHTS[i]!;
  const digit = 11 - (sum % 11);
  return digit === 10 ? 0 : digit === 11 ? 1 : digit;
}

/** 11 digits, a known prefix, and a correct check digit. */
export function isValidRuc(ruc: string): boolean {
  return /^\d{11}$/.test(ruc) && RUC_PREFIXES.has(ruc.slice(0, 2)) && rucCheckDigit(ruc) === Number(ruc[10]);
}

export function checkRuc(input: string): Checked<string> {
  const ruc = input.trim();
  return isValidRuc(ruc) ? { ok: true, value: ruc } : { ok: false, message: MSG_RUC_INCORRECTO };
}

/**
 * A licence number, trimmed and in capitals: the service answers a number in any case with the
 * same holder (the client accepts its echo in any case), so `q46779354` and `Q46779354` are one
 * key, looked up and paid for once.
 */
export function checkNumLicencia(input: string): Checked<string> {
  const num = input.trim().toUpperCase();
  if (num === '') return { ok: false, message: 'El parámetro numLicencia es requerido y no puede estar vacío.' };
  // Licence numbers are short codes (a letter and 8 digits today); a long one is a mistake, not a lookup.
  if (num.length > 20 || !/^[0-9A-Za-z-]+$/.test(num) || !/[0-9A-Za-z]/.test(num)) {
    return { ok: false, message: 'El número de licencia solo admite letras, dígitos y guiones (máximo 20 caracteres).' };
  }
  return { ok: true, value: num };
}

/** A DNI: 8 digits. */
export function checkDni(input: string): Checked<string> {
  const dni = input.trim();
  return /^\d{8}$/.test(dni) ? { ok: true, value: dni } : { ok: false, message: 'El DNI debe tener 8 dígitos.' };
}

/** The DNI a RUC 10… holds (digits 3 to 10): a natural person's; any other RUC holds none. */
export function dniOfRuc(ruc: string): Checked<string> {
  return ruc.startsWith('10') && isValidRuc(ruc)
    ? { ok: true, value: ruc.slice(2, 10) }
    : { ok: false, message: 'Solo un RUC 10 tiene DNI.' };
}

/** A person's RUC worked out from the DNI: 10 + DNI + its check digit. */
export function rucOfDni(dni: string): Checked<string> {
  const checked = checkDni(dni);
  if (!checked.ok) return checked;
  const first10 = `10${checked.value}`;
  return { ok: true, value: `${first10}${rucCheckDigit(first10)}` };
}

/** A date (YYYY-MM-DD) that exists; none given is today in Lima. */
export function checkFecha(input: string | null | undefined): Checked<string> {
  if (input == null) return { ok: true, value: todayInLima() };
  const fecha = input.trim();
  if (!isRealDate(fecha)) return { ok: false, message: 'La fecha debe existir y tener el formato AAAA-MM-DD.' };
  if (fecha < FIRST_RATE_DATE) return { ok: false, message: `No hay tipo de cambio publicado antes del ${FIRST_RATE_DATE}.` };
  const tomorrow = tomorrowInLima();
  if (fecha > tomorrow) return { ok: false, message: `La fecha ${fecha} es posterior a mañana en Lima (${tomorrow}): aún no hay tipo de cambio.` };
  return { ok: true, value: fecha };
}

function isRealDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

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
