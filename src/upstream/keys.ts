import { FIRST_RATE_DATE, todayInLima, tomorrowInLima } from './dates.js';

/**
 * The keys lookups are made by, checked before any call so that a bad one never costs a query:
 * each check returns the normalized key or a Spanish message naming what is wrong.
 */
export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

export const MSG_RUC_INCORRECTO = 'El RUC es incorrecto';

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
  if (fecha > tomorrow)
    return { ok: false, message: `La fecha ${fecha} es posterior a mañana en Lima (${tomorrow}): aún no hay tipo de cambio.` };
  return { ok: true, value: fecha };
}

export function isRealDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** A company's RUC: a natural person's (RUC 10) has no representatives nor branches to ask for. */
export function companyRuc(input: string): Checked<string> {
  return input.trim().startsWith('10') ? { ok: false, message: 'Una persona natural no tiene.' } : checkRuc(input);
}
