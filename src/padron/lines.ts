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
  return quickLine(line) ?? slowLine(line);
}

/** A line with nothing to trim or mend, read without splitting it (most of SUNAT's): undefined for any other. */
function quickLine(line: string): { ruc: string; columns: string } | undefined {
  if (line.length < 29 || line.charCodeAt(11) !== 124 || line.charCodeAt(line.length - 1) !== 124 || NEEDS_CARE.test(line))
    return undefined;
  let bars = 0;
  for (let at = line.indexOf('|'); at >= 0; at = line.indexOf('|', at + 1)) bars++;
  const nameEnd = line.indexOf('|', 12);
  const ruc = line.slice(0, 11);
  if (bars !== PARTS - 1 || !DIGITS.test(ruc) || nameEnd === 12) return undefined;
  const name = line.slice(12, nameEnd);
  return name === '-' ? undefined : { ruc, columns: line.slice(12, -1) };
}

/** What only the full reading handles: a blank beside a `|`, a lost Ñ, or bytes that may be UTF-8 or C1 controls. */
const NEEDS_CARE = /\s\||\|\s|^\s|[\u0080-\u00c3\uFFFD\u00ef]/;
const DIGITS = /^\d{11}$/;

function slowLine(line: string): { ruc: string; columns: string } | SkipReason {
  const parts = line.split('|');
  if (parts.length !== PARTS || parts[PARTS - 1]!.trim() !== '') return 'fields';
  const ruc = parts[0]!.trim();
  if (ruc.length !== 11 || !/^\d{11}$/.test(ruc)) return 'ruc';
  const name = textOf(parts[1]!.trim());
  if (name === undefined || name === '' || name === '-') return 'name';
  parts[1] = name.includes('ï') || name.includes('\uFFFD') ? name.replace(LOST_ENYE, 'Ñ') : name;
  for (let i = 2; i < PARTS - 1; i++) parts[i] = parts[i]!.trim();
  return { ruc, columns: parts.slice(1, PARTS - 1).join('|') };
}

/** A C1 control character: never in ISO-8859-1 text, so a sign of bytes in another encoding. */
const C1 = /[\u0080-\u009f]/;
/** A two-byte UTF-8 sequence of Latin letters (Ñ, Á…) as ISO-8859-1 reads it; Spanish names never hold Ã or Â before such a byte. */
const UTF8_PAIR = /[\u00c2\u00c3][\u0080-\u00bf]/;

/** A name read as ISO-8859-1, or as UTF-8 when its bytes are that; undefined when they are neither (skipped, counted). */
function textOf(name: string): string | undefined {
  if (UTF8_PAIR.test(name)) {
    const utf8 = Buffer.from(name, 'latin1').toString('utf8');
    if (!utf8.includes('\ufffd') && !C1.test(utf8)) return utf8;
  }
  return C1.test(name) ? undefined : name;
}

/** The RUC a flag register's line lists (`Ruc|Nombre/Razon|A partir del|Resolucion|`), or undefined for its header or a bad line. */
export function flagLine(line: string): string | undefined {
  const bar = line.indexOf('|');
  const ruc = (bar < 0 ? line : line.slice(0, bar)).trim();
  return /^\d{11}$/.test(ruc) ? ruc : undefined;
}
