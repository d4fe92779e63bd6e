/**
 * One line of SUNAT's registers, as importers of them meet it (upstream-notes): ISO-8859-1,
 * `|`-separated, a trailing `|`. What they trip on is skipped and counted by its reason.
 */
export type SkipReason = 'fields' | 'ruc' | 'name';

/** The 14 columns after the RUC, in the register's order, as the index keeps them. */
export const PADRON_COLUMNS = [
  'nombre',
  'estado',
  'condicion',
  'ubigeo',
  'tipoVia',
  'nombreVia',
  'codigoZona',
  'tipoZona',
  'numero',
  'interior',
  'lote',
  'departamento',
  'manzana',
  'kilometro',
] as const;

/** 15 columns and the empty text after the trailing `|`. */
const PARTS = PADRON_COLUMNS.length + 2;

/** A name whose Ñ was written as UTF-8's replacement character, then read as ISO-8859-1 (or as the character itself). */
const LOST_ENYE = /ï¿½|\uFFFD/g;

/**
 * A line of padron_reducido_ruc.txt: its RUC and what the index keeps of it (the 14 other
 * columns, trimmed, joined by `|`), or why it is skipped. A `"` in a name is kept; an Ñ written
 * as a replacement character is an Ñ again.
 */
export function padronLine(line: string): { ruc: string; columns: string } | SkipReason {
  const parts = line.split('|');
  if (parts.length !== PARTS || parts[PARTS - 1]!.trim() !== '') return 'fields';
  const ruc = parts[0]!.trim();
  if (ruc.length !== 11 || !/^\d{11}$/.test(ruc)) return 'ruc';
  const name = parts[1]!.trim();
  if (name === '' || name === '-') return 'name';
  parts[1] = name.includes('ï') || name.includes('\uFFFD') ? name.replace(LOST_ENYE, 'Ñ') : name;
  for (let i = 2; i < PARTS - 1; i++) parts[i] = parts[i]!.trim();
  return { ruc, columns: parts.slice(1, PARTS - 1).join('|') };
}

/** The RUC a flag register's line lists (`Ruc|Nombre/Razon|A partir del|Resolucion|`), or undefined for its header or a bad line. */
export function flagLine(line: string): string | undefined {
  const bar = line.indexOf('|');
  const ruc = (bar < 0 ? line : line.slice(0, bar)).trim();
  return /^\d{11}$/.test(ruc) ? ruc : undefined;
}
