import type { ServerResponse } from 'node:http';
import type { ComprobanteBody } from '../upstream/schemas.js';
import { SLOW_TAXPAYER_NAME, TAXPAYERS, type SandboxTaxpayer } from './data.js';

/** What the sandbox answers with, and the records and receipts it reads and writes, as the REST spec shapes them. */

export type Answer = {
  status: number;
  json?: unknown;
  raw?: string;
  contentType?: string;
  headers?: Record<string, string>;
  delayMs?: number;
  reset?: boolean;
};

export const ok = (data: unknown): Answer => ({ status: 200, json: { success: true, code: 'found', retryable: false, data, time: 0.01 } });
export const fail = (status: number, code: string, message: string, retryable = false): Answer => ({
  status,
  json: { success: false, code, retryable, message },
});

/** Writes an answer at once (its delay is the server's to keep), or resets the connection. */
export function writeAnswer(res: ServerResponse, answer: Answer): void {
  if (answer.reset) {
    res.socket?.destroy();
    return;
  }
  const payload = answer.raw ?? JSON.stringify(answer.json);
  res.writeHead(answer.status, {
    ...answer.headers,
    ...(answer.status === 204 ? {} : { 'content-type': answer.contentType ?? 'application/json' }),
    'content-length': Buffer.byteLength(payload),
  });
  res.end(payload);
}

/** A receipt as the upstream takes it. */
export type Receipt = ComprobanteBody;
const RECEIPT_FIELDS = ['ruc_emisor', 'codigo_tipo_documento', 'serie_documento', 'numero_documento', 'fecha_de_emision', 'total'] as const;

export function fromObject(item: unknown): Receipt | undefined {
  if (typeof item !== 'object' || item === null) return undefined;
  const r = item as Record<string, unknown>;
  return RECEIPT_FIELDS.every((f) => typeof r[f] === 'string') ? (r as unknown as Receipt) : undefined;
}

export function fromLine(item: unknown): Receipt | undefined {
  if (typeof item !== 'string') return undefined;
  const parts = item.split('|');
  if (parts.length !== 6) return undefined;
  return Object.fromEntries(RECEIPT_FIELDS.map((f, i) => [f, parts[i]])) as unknown as Receipt;
}

/** The six-digit location codes (SUNAT's ubigeo) of the sample districts. */
export const UBIGEO: Readonly<Record<string, string>> = {
  'SAN ISIDRO': '150131',
  AREQUIPA: '040101',
  SANTIAGO: '110111',
  WANCHAQ: '080108',
  HUARAZ: '020101',
  'LA VICTORIA': '150115',
  PAITA: '200501',
  IQUITOS: '160101',
  CHANCHAMAYO: '120301',
  PUNO: '210101',
  TRUJILLO: '130101',
  HUANCAYO: '120101',
  MIRAFLORES: '150122',
  TACNA: '230101',
};

/**
 * The place fields a real record carries beyond the spec's (upstream-notes): the full address,
 * province and district, and the location code twice (`ubigeo_sunat`, and `ubigeo` in three
 * levels); a natural person's come back empty, with `ubigeo: [null, null, null]`.
 */
function place(t: SandboxTaxpayer) {
  const code = UBIGEO[t.distrito];
  return {
    direccion: t.direccion,
    departamento: t.departamento,
    // As upstream-notes show it: `CAR. PANAMERICANA SUR NRO. 241, ICA - PISCO - PARACAS`.
    direccion_completa: code ? `${t.direccion}, ${t.departamento} - ${t.provincia} - ${t.distrito}` : '',
    provincia: t.provincia,
    distrito: t.distrito,
    ubigeo_sunat: code ?? '',
    ubigeo: code ? [code.slice(0, 2), code.slice(0, 4), code] : [null, null, null],
  };
}

export function summary(t: SandboxTaxpayer) {
  const { ruc, nombre_o_razon_social, estado, condicion, es_agente_de_retencion, es_buen_contribuyente } = t;
  return {
    ruc,
    nombre_o_razon_social,
    estado,
    condicion,
    ...place(t),
    es_agente_de_retencion,
    es_buen_contribuyente,
    es_agente_de_percepcion: t.es_agente_de_percepcion ?? 'NO',
    es_agente_de_percepcion_combustible: t.es_agente_de_percepcion_combustible ?? 'NO',
  };
}

export function detail(t: SandboxTaxpayer) {
  return {
    ruc: t.ruc,
    nombre_o_razon_social: t.nombre_o_razon_social,
    estado: t.estado,
    condicion: t.condicion,
    ...place(t),
    tipo_contribuyente: t.tipo_contribuyente,
    fecha_inscripcion: t.fecha_inscripcion,
    actividades_economicas: t.actividades_economicas,
  };
}

export function slowTaxpayer(ruc: string): SandboxTaxpayer {
  return { ...TAXPAYERS[0]!, ruc, nombre_o_razon_social: SLOW_TAXPAYER_NAME };
}
