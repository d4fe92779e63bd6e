import type { ComprobanteBody } from '../upstream/schemas.js';
import type { SunatCalls } from './calls.js';
import { CONDICION_DOMICILIO, describe, ESTADO_COMPROBANTE, ESTADO_RUC, estadoCpOf } from './codes.js';
import { SunatCredentialsRejected, SunatError, SunatRefused, SunatUnavailable } from './errors.js';
import type { SunatCredentials, SunatTokens } from './tokens.js';

/** One receipt as SUNAT answered it, in the shape of the paid service's (`ComprobanteValidado`'s fields). */
export interface SunatReceipt {
  serie_documento: string;
  numero_documento: string;
  comprobante_estado_codigo: string | null;
  comprobante_estado_descripcion: string | null;
  empresa_estado_codigo: string | null;
  empresa_estado_descripcion: string | null;
  empresa_condicion_codigo: string | null;
  empresa_condicion_descripcion: string | null;
  observaciones: string[];
  observaciones_detalle: { codigo: string | null; descripcion: string | null }[];
}

/** Each receipt's answer, in the order asked: SUNAT's, or why it has none. */
export type SunatResult = { receipt: SunatReceipt } | { error: SunatError };

/**
 * Receipts validated through SUNAT's free API (`validarcomprobante`, one receipt a call), with a
 * company's credentials: their token first (refused credentials fail everything before any
 * receipt is asked), each distinct receipt asked once, a 401 answered by one new token and one
 * new try, and one receipt's failure kept to that receipt.
 */
export class SunatReceipts {
  constructor(
    readonly calls: SunatCalls,
    readonly tokens: SunatTokens,
  ) {}

  /** `signal` aborted: what is not asked yet is not asked, and the call rejects with its reason. */
  async validate(credentials: SunatCredentials, receipts: readonly ComprobanteBody[], signal?: AbortSignal): Promise<SunatResult[]> {
    await this.tokens.get(credentials);
    const asked = new Map<string, Promise<SunatResult>>();
    return Promise.all(
      receipts.map((receipt) => {
        const key = keyOf(receipt);
        let answer = asked.get(key);
        if (!answer) asked.set(key, (answer = this.#one(credentials, receipt, signal)));
        return answer;
      }),
    );
  }

  async #one(credentials: SunatCredentials, receipt: ComprobanteBody, signal: AbortSignal | undefined): Promise<SunatResult> {
    try {
      for (let tries = 0; ; tries++) {
        const token = await this.tokens.get(credentials);
        const answer = await this.calls.call(
          credentials.clientId,
          'api',
          `/v1/contribuyente/contribuyentes/${encodeURIComponent(credentials.rucEmpresa)}/validarcomprobante`,
          {
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify(bodyOf(receipt)),
            signal,
          },
        );
        if (answer.status === 401 && tries === 0) {
          await this.tokens.drop(credentials, token);
          continue;
        }
        if (answer.status === 401 || answer.status === 403) throw new SunatCredentialsRejected(messageOf(answer.body));
        return { receipt: readAnswer(receipt, answer.status, answer.body) };
      }
    } catch (error) {
      if (error instanceof SunatError) return { error };
      throw error;
    }
  }
}

/** The receipt as SUNAT takes it: the date as dd/mm/yyyy, the total as `monto`. */
function bodyOf(r: ComprobanteBody) {
  const [y, m, d] = r.fecha_de_emision.split('-');
  return {
    numRuc: r.ruc_emisor,
    codComp: r.codigo_tipo_documento,
    numeroSerie: r.serie_documento,
    numero: r.numero_documento,
    fechaEmision: `${d}/${m}/${y}`,
    monto: r.total,
  };
}

/** One receipt's key: the same receipt twice in a list is asked once. */
export const keyOf = (r: ComprobanteBody) =>
  [r.ruc_emisor, r.codigo_tipo_documento, r.serie_documento, Number(r.numero_documento), r.fecha_de_emision, r.total].join('|');

/** SUNAT's answer read leniently: `success: false` at any status is its refusal of this receipt, in its words. */
function readAnswer(receipt: ComprobanteBody, status: number, body: unknown): SunatReceipt {
  const answer = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const data = answer['data'];
  if (answer['success'] !== true || typeof data !== 'object' || data === null) {
    const message = messageOf(body);
    if (answer['success'] === false || (status >= 400 && message)) throw new SunatRefused(message ?? `HTTP ${status}`);
    throw new SunatUnavailable(`an answer without data (HTTP ${status})`);
  }
  const d = data as Record<string, unknown>;
  const estadoCp = codeOf(d['estadoCp']);
  const comprobante = estadoCp === null ? null : estadoCpOf(estadoCp);
  const estadoRuc = codeOf(d['estadoRuc']);
  const condicion = codeOf(d['condDomiRuc']);
  const notes = Array.isArray(d['observaciones']) ? d['observaciones'].map((o) => (typeof o === 'string' ? o : JSON.stringify(o))) : [];
  const observaciones = notes.map((o) => o.replace(/^\s*-\s*/, '').trim()).filter((o) => o !== '');
  return {
    serie_documento: receipt.serie_documento,
    numero_documento: receipt.numero_documento,
    comprobante_estado_codigo: comprobante,
    comprobante_estado_descripcion: describe(ESTADO_COMPROBANTE, comprobante),
    empresa_estado_codigo: estadoRuc,
    empresa_estado_descripcion: describe(ESTADO_RUC, estadoRuc),
    empresa_condicion_codigo: condicion,
    empresa_condicion_descripcion: describe(CONDICION_DOMICILIO, condicion),
    observaciones,
    observaciones_detalle: observaciones.map((descripcion) => ({ codigo: null, descripcion })),
  };
}

const codeOf = (value: unknown) =>
  typeof value === 'number' ? String(value) : typeof value === 'string' && value.trim() ? value.trim().slice(0, 20) : null;

/** SUNAT's words about a failure, whatever it names them (`message`, `msg`, `error_description`). */
function messageOf(body: unknown): string | undefined {
  if (typeof body === 'string') return body.trim().slice(0, 300) || undefined;
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  for (const name of ['message', 'msg', 'error_description', 'error'])
    if (typeof b[name] === 'string' && (b[name] as string).trim()) return (b[name] as string).trim().slice(0, 300);
  return undefined;
}
