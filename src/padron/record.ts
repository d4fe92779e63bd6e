import type { RucRecord } from '../upstream/schemas.js';
import { FLAG_REGISTERS } from './sources.js';
import { ubigeoTable } from './ubigeo.js';

/** A record answered from SUNAT's register kept by the gateway, as `/ruc` answers it, and said to be so. */
export type PadronRecord = RucRecord & { fuente: 'PADRON' };

export const none = (v: string | undefined) => (v === undefined || v === '' || v === '-' ? null : v);

/** How the service writes an address's parts (the vía, then each part by its label, then the zone), none skipped but those with no value. */
export function composeAddress(c: readonly string[]): string | null {
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
  const c = kept.split('|');
  const flags = c[14] ?? '';
  const code = none(c[3]);
  const place = code === null ? undefined : ubigeoTable().get(code);
  if (code !== null && !place && !unnamed.has(code) && unnamed.size < MAX_UNNAMED) {
    unnamed.add(code);
    onUnnamed?.(code);
  }
  const direccion = composeAddress(c);
  const record: PadronRecord = {
    ruc,
    nombre_o_razon_social: c[0]!,
    estado: none(c[1]),
    condicion: none(c[2]),
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
  FLAG_REGISTERS.forEach(({ flag }, i) => (record[flag] = flags[i] === 'S' ? 'SI' : 'NO'));
  return record;
}
