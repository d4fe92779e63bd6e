import { randomBytes } from 'node:crypto';
import { TAXPAYERS } from './taxpayers.js';
import { SANDBOX_SUNAT_CREDENTIALS, SUNAT_RATES_HOST } from '../config/sunat.js';
import type { IncomingHttpHeaders } from 'node:http';
import { SUNAT_RATES_PATH } from '../sunat/rates.js';
import { todayInLima } from '../upstream/dates.js';
import { asText, publishedDay, rateOf } from './rates.js';
import type { Answer } from './records.js';

/**
 * SUNAT's free receipt validation, as docs/sunat.md shows it: the token call (OAuth client
 * credentials) and `validarcomprobante`, one receipt a call. Sample credentials are in the
 * banner; every state of a receipt comes from the sample data, and a few series trigger a fault.
 */
export const SUNAT_SAMPLE = SANDBOX_SUNAT_CREDENTIALS;

export const SUNAT_TOKEN_PATH = /^\/v1\/clientesextranet\/([^/]{1,100})\/oauth2\/token\/?$/;
export const SUNAT_RECEIPT_PATH = /^\/v1\/contribuyente\/contribuyentes\/(\d{11})\/validarcomprobante$/;

/** Series (`numeroSerie`) that make SUNAT misbehave, for docs/sunat.md's walk-through and the tests. */
export const SUNAT_TRIGGERS = {
  /** 500, every time. */
  S500: 'error',
  /** 429 with Retry-After: 1, every other call. */
  S429: 'throttled',
  /** Answered after 3 s. */
  SLNT: 'slow',
  /** The token in use expires: 401 the first time a receipt of this series and number is asked, then as usual. */
  S401: 'expired',
  /** `estadoCp` written `"0001"`, as one client reads them. */
  S000: 'padded',
  /** `estadoCp` `"9"`, a code the table lacks. */
  S999: 'unknown',
  /** `success: false`: SUNAT refuses the receipt. */
  SBAD: 'refused',
} as const;

const TOKEN_LIFE_S = 3600;
const ESTADO_RUC: Record<string, string> = { ACTIVO: '00', 'SUSPENSION TEMPORAL': '03', 'BAJA DE OFICIO': '11', 'BAJA DEFINITIVA': '10' };
const CONDICION: Record<string, string> = { HABIDO: '00', 'NO HABIDO': '12', 'NO HALLADO': '20' };
const ISSUERS = new Map(TAXPAYERS.map((t) => [t.ruc, t]));

export class SunatDouble {
  /** Tokens handed out: their clientId, when they expire, and whether they were told expired. */
  readonly #tokens = new Map<string, { clientId: string; expiresAt: number; expired: boolean }>();
  #throttled = 0;
  /** The receipts of the expiring series already asked. */
  readonly #expiredBy = new Set<string>();

  answer(method: string | undefined, path: string, headers: IncomingHttpHeaders, text: string): Answer | undefined {
    if (method !== 'POST') return undefined;
    if (path === SUNAT_RATES_PATH) return rateListing(headers, text);
    const token = SUNAT_TOKEN_PATH.exec(path);
    if (token) return this.#token(decodeURIComponent(token[1]!), text);
    const receipt = SUNAT_RECEIPT_PATH.exec(path);
    if (receipt) return this.#validate(receipt[1]!, headers.authorization, text);
    return undefined;
  }

  #token(clientId: string, text: string): Answer {
    const form = new URLSearchParams(text);
    const refused = (error: string, description: string): Answer => ({ status: 401, json: { error, error_description: description } });
    if (form.get('grant_type') !== 'client_credentials')
      return { status: 400, json: { error: 'unsupported_grant_type', error_description: 'grant_type' } };
    if (clientId !== SUNAT_SAMPLE.clientId || form.get('client_id') !== clientId || form.get('client_secret') !== SUNAT_SAMPLE.clientSecret)
      return refused('invalid_client', 'Cliente no autorizado');
    const token = `sunat-sandbox.${randomBytes(18).toString('base64url')}`;
    this.#tokens.set(token, { clientId, expiresAt: Date.now() + TOKEN_LIFE_S * 1000, expired: false });
    return { status: 200, json: { access_token: token, token_type: 'JWT', expires_in: TOKEN_LIFE_S } };
  }

  #validate(rucConsultante: string, authorization: string | undefined, text: string): Answer {
    const held = this.#tokens.get(/^Bearer (.+)$/.exec(authorization ?? '')?.[1] ?? '');
    if (!held || held.expiresAt < Date.now() || held.expired || rucConsultante !== SUNAT_SAMPLE.rucEmpresa)
      return { status: 401, json: { message: 'Token inválido o expirado' } };
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return { status: 400, json: { success: false, message: 'Cuerpo no válido' } };
    }
    const serie = String(body['numeroSerie'] ?? '');
    switch (SUNAT_TRIGGERS[serie as keyof typeof SUNAT_TRIGGERS]) {
      case 'error':
        return { status: 500, json: { message: 'Error interno (falla inyectada)' } };
      case 'throttled':
        if (this.#throttled++ % 2 === 0) return { status: 429, headers: { 'retry-after': '1' }, json: { message: 'Too Many Requests' } };
        break;
      case 'slow':
        return { ...this.#state(body), delayMs: 3000 };
      case 'expired':
        if (this.#expiredBy.has(String(body['numero']))) break;
        this.#expiredBy.add(String(body['numero']));
        held.expired = true;
        return { status: 401, json: { message: 'Token expirado' } };
      case 'refused':
        return { status: 200, json: { success: false, message: 'El comprobante ingresado no es válido' } };
    }
    return this.#state(body);
  }

  /** A receipt's state by the same rules as the paid service's sandbox (./service.ts), in SUNAT's codes. */
  #state(body: Record<string, unknown>): Answer {
    const fecha = String(body['fechaEmision'] ?? '');
    const tipo = String(body['codComp'] ?? '');
    if (!/^\d{2}\/\d{2}\/\d{4}$/.test(fecha))
      return { status: 200, json: { success: false, message: 'La fecha de emisión no es válida (dd/mm/aaaa)' } };
    if (!['01', '03', '04', '07', '08', 'R1', 'R7'].includes(tipo))
      return { status: 200, json: { success: false, message: 'Tipo de comprobante incorrecto' } };
    const issuer = ISSUERS.get(String(body['numRuc'] ?? ''));
    const numero = String(body['numero'] ?? '');
    const data = (estadoCp: string, observaciones: string[] = []) => ({
      status: 200,
      json: {
        success: true,
        message: 'Operation Success! ',
        data: issuer
          ? { estadoCp, estadoRuc: ESTADO_RUC[issuer.estado] ?? '01', condDomiRuc: CONDICION[issuer.condicion] ?? '09', observaciones }
          : { estadoCp, observaciones },
      },
    });
    const serie = String(body['numeroSerie'] ?? '');
    if (serie === 'S000') return data('0001');
    if (serie === 'S999') return data('9');
    if (!issuer || Number(body['monto']) === 0) return data('0');
    if (numero.endsWith('0')) return data('2');
    if (numero.endsWith('4')) return data('4');
    if (tipo === '07' || tipo === '08') return data('1', ['- Nota vinculada a un comprobante de referencia']);
    if (tipo === 'R1') return data('3');
    return data('1');
  }
}

/**
 * SUNAT's month listing of exchange rates (sunat-api.md): `mes` from 0, `[]` for an empty token,
 * a 403 page without the browser's Referer and Origin, and the same rates as the paid sandbox's,
 * for each business day of the month up to today in Lima.
 */
function rateListing(headers: IncomingHttpHeaders, text: string): Answer {
  if (!String(headers.referer ?? '').startsWith(SUNAT_RATES_HOST) || headers.origin !== SUNAT_RATES_HOST)
    return { status: 403, contentType: 'text/html', raw: '<html><body>Request Rejected</body></html>' };
  let asked: { anio?: unknown; mes?: unknown; token?: unknown };
  try {
    asked = JSON.parse(text) as typeof asked;
  } catch {
    return { status: 400, json: [] };
  }
  const { anio, mes, token } = asked;
  if (typeof token !== 'string' || token === '' || !Number.isInteger(anio) || !Number.isInteger(mes) || Number(mes) < 0 || Number(mes) > 11)
    return { status: 200, json: [] };
  const month = `${String(anio).padStart(4, '0')}-${String(Number(mes) + 1).padStart(2, '0')}`;
  const today = todayInLima();
  const rows: { fecPublica: string; valTipo: string; codTipo: 'C' | 'V' }[] = [];
  for (let d = 1; d <= 31; d++) {
    const day = `${month}-${String(d).padStart(2, '0')}`;
    if (day > today || Number.isNaN(Date.parse(day)) || !new Date(`${day}T00:00:00Z`).toISOString().startsWith(day)) break;
    if (day < '2000-01-01' || publishedDay(day) !== day) continue;
    const [compra, venta] = rateOf(day);
    const fecPublica = `${day.slice(8, 10)}/${day.slice(5, 7)}/${day.slice(0, 4)}`;
    rows.push({ fecPublica, valTipo: asText(compra), codTipo: 'C' }, { fecPublica, valTipo: asText(venta), codTipo: 'V' });
  }
  return { status: 200, json: rows };
}
