import { fail, ok, type Answer } from './records.js';

/**
 * SUNAT's exchange rate as the sandbox publishes it (invented figures): one rate per business
 * day, none on weekends or Peru's fixed holidays, when the service answers the last business day
 * before. Figures are thousandths, so that no float is involved.
 */

/** Peru's fixed public holidays, MM-DD. */
const HOLIDAYS = new Set(['01-01', '05-01', '06-29', '07-28', '07-29', '08-30', '10-08', '11-01', '12-08', '12-25']);

/** Rates written down, as [compra, venta] in thousandths: 2026-11-20's compra 3.750 travels as the JSON number 3.75. */
const PUBLISHED: Readonly<Record<string, readonly [number, number]>> = {
  '2026-11-20': [3750, 3758],
  '2025-12-31': [3361, 3368],
};

/** The first date the sandbox has a rate for. */
const FIRST_RATE_DATE = '2000-01-01';

const DAY_MS = 86_400_000;

function isBusinessDay(date: Date): boolean {
  const weekday = date.getUTCDay();
  return weekday !== 0 && weekday !== 6 && !HOLIDAYS.has(date.toISOString().slice(5, 10));
}

/** The business day a rate asked for `fecha` (YYYY-MM-DD) is: that day, or the last one before it. */
export function publishedDay(fecha: string): string {
  let day = new Date(`${fecha}T00:00:00Z`);
  while (!isBusinessDay(day)) day = new Date(day.getTime() - DAY_MS);
  return day.toISOString().slice(0, 10);
}

/** The rate of a business day, in thousandths: written down, or made up from the day. */
export function rateOf(day: string): readonly [number, number] {
  const known = PUBLISHED[day];
  if (known) return known;
  const compra = 3300 + (((Date.parse(day) / DAY_MS) * 37) % 500);
  return [compra, compra + 7];
}

/** Thousandths as SUNAT writes them: "3.750". */
export const asText = (thousandths: number) => `${Math.trunc(thousandths / 1000)}.${String(thousandths % 1000).padStart(3, '0')}`;

/** A date that exists, YYYY-MM-DD. */
export const isRealDate = (fecha: string) =>
  /^\d{4}-\d{2}-\d{2}$/.test(fecha) && !Number.isNaN(Date.parse(fecha)) && new Date(`${fecha}T00:00:00Z`).toISOString().startsWith(fecha);

/**
 * The service's answer for `fecha`: from 2026 the rate's date as `fecha_sunat` and its figures
 * as JSON numbers (3.75 for 3.750), before it `fecha_busqueda` and decimal texts, the two
 * spellings public clients read; `moneda` when it was sent. None before FIRST_RATE_DATE, unless `always`.
 */
export function rateAnswer(fecha: string, moneda: unknown, always = false): Answer {
  if (fecha < FIRST_RATE_DATE && !always) return fail(404, 'document_not_found', 'No hay tipo de cambio publicado para la fecha indicada.');
  const day = publishedDay(fecha);
  const [compra, venta] = rateOf(day);
  const sent = moneda === undefined ? {} : { moneda };
  return day >= '2026-01-01'
    ? ok({ fecha_sunat: day, compra: Number(asText(compra)), venta: Number(asText(venta)), ...sent })
    : ok({ fecha_busqueda: day, compra: asText(compra), venta: asText(venta), ...sent });
}
