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
