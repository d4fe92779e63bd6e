import type { RucRecord } from '../upstream/schemas.js';
import { FLAG_REGISTERS } from './sources.js';
import { ubigeoTable } from './ubigeo.js';

/** A record answered from SUNAT's register kept by the gateway, as `/ruc` answers it, and said to be so. */
export type PadronRecord = RucRecord & { fuente: 'PADRON' };

export const none = (v: string | undefined) => (v === undefined || v === '' || v === '-' ? null : v);

/**
 * What the index keeps of a RUC, read by name: its columns (name, estado, condición, UBIGEO, the
 * address's parts) then its flags as `S`/`N` in FLAG_REGISTERS' order, `|`-separated. The one
 * reader of a kept row: the record, the search's filters and the changes read it here.
 */
export interface KeptRow {
  nombre: string;
  estado: string | null;
  condicion: string | null;
  ubigeo: string | null;
  direccion: string | null;
  /** `SI` or `NO` for each flag register, in FLAG_REGISTERS' order. */
  flags: ('SI' | 'NO')[];
}

export function readKept(kept: string): KeptRow {
  const c = kept.split('|');
  const flags = c[14] ?? '';
  return {
    nombre: c[0] ?? '',
    estado: none(c[1]),
    condicion: none(c[2]),
    ubigeo: none(c[3]),
    direccion: composeAddress(c),
    flags: FLAG_REGISTERS.map((_, i) => (flags[i] === 'S' ? 'SI' : 'NO')),
  };
}

/** A kept row's name and estado alone, as written (the import files millions of rows, and composes no address). */
export function keptHead(kept: string): { nombre: string; estado: string } {
  const bar = kept.indexOf('|');
  const next = kept.indexOf('|', bar + 1);
  return { nombre: kept.slice(0, bar), estado: kept.slice(bar + 1, next < 0 ? kept.length : next) };
}

/** A kept row's name from its bytes alone (a search reads thousands of candidates' names, and decodes nothing else). */
export function keptName(bytes: Buffer): string {
  // LMDB's buffer may be larger than the value: its `length` says the value's.
  const bar = bytes.indexOf(BAR);
  return bytes.toString('utf8', 0, bar < 0 || bar > bytes.length ? bytes.length : bar);
}
const BAR = '|'.charCodeAt(0);

/** How the service writes an address's parts (the vía, then each part by its label, then the zone), none skipped but those with no value. */
function composeAddress(c: readonly string[]): string | null {
  const [, , , , tipoVia, nombreVia, codigoZona, tipoZona, numero, interior, lote, dpto, manzana, km] = c.map(none);
  const labelled = (label: string, v: string | null) => (v === null ? null : `${label} ${v}`);
  const parts = [
    [tipoVia, nombreVia].filter((v) => v !== null).join(' ') || null,
    labelled('NRO.', numero ?? null),
    labelled('INT.', interior ?? null),
    labelled('DPTO.', dpto ?? null),
    labelled('MZA.', manzana ?? null),
    labelled('LOTE.', lote ?? null),
    labelled('KM.', km ?? null),
    [codigoZona, tipoZona].filter((v) => v !== null).join(' ') || null,
  ].filter((p) => p !== null);
  return parts.length ? parts.join(' ') : null;
}

/** Codes the table does not name: each is logged once (the first thousand: a broken register could hold any number). */
const unnamed = new Set<string>();
const MAX_UNNAMED = 1000;

/**
 * The record of one RUC from what the index keeps (`columns`, then its flags as `S`/`N`), dated
 * by the register: the address composed from its parts, the place named from its UBIGEO.
 */
export function padronRecord(ruc: string, kept: string, dateMs: number, onUnnamed?: (code: string) => void): PadronRecord {
  const row = readKept(kept);
  const code = row.ubigeo;
  const place = code === null ? undefined : ubigeoTable().get(code);
  if (code !== null && !place && !unnamed.has(code) && unnamed.size < MAX_UNNAMED) {
    unnamed.add(code);
    onUnnamed?.(code);
  }
  const direccion = row.direccion;
  const record: PadronRecord = {
    ruc,
    nombre_o_razon_social: row.nombre,
    estado: row.estado,
    condicion: row.condicion,
    direccion,
    direccion_completa: direccion && place ? `${direccion}, ${place.departamento} - ${place.provincia} - ${place.distrito}` : direccion,
    departamento: place?.departamento ?? null,
    provincia: place?.provincia ?? null,
    distrito: place?.distrito ?? null,
    ubigeo_sunat: code,
    ubigeo: code === null ? [null, null, null] : [code.slice(0, 2), code.slice(0, 4), code],
    es_agente_de_retencion: 'NO',
    es_buen_contribuyente: 'NO',
    es_agente_de_percepcion: 'NO',
    es_agente_de_percepcion_combustible: 'NO',
    receivedAt: dateMs,
    fuente: 'PADRON',
  };
  FLAG_REGISTERS.forEach(({ flag }, i) => (record[flag] = row.flags[i]!));
  return record;
}
