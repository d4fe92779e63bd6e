/** SUNAT's calendar is Lima's (UTC-5 all year: Peru keeps no summer time). */
const LIMA = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Lima', year: 'numeric', month: '2-digit', day: '2-digit' });

/** The date in Lima at `now`, as YYYY-MM-DD. */
export function todayInLima(now = Date.now()): string {
  return LIMA.format(now);
}

/** Whether `fecha` (YYYY-MM-DD) has already ended in Lima: its exchange rate will not change. */
export function isPastInLima(fecha: string, now = Date.now()): boolean {
  return fecha < todayInLima(now);
}

/**
 * The earliest date an exchange rate is asked for: SUNAT's series starts after it (the sol
 * replaced the inti in 1991), so an earlier date can only find nothing, and is refused for free.
 */
export const FIRST_RATE_DATE = '1990-01-01';

/** Tomorrow in Lima: a later date has no rate yet, and a client a time zone ahead may still ask tomorrow's. */
export function tomorrowInLima(now = Date.now()): string {
  return LIMA.format(now + 86_400_000);
}
