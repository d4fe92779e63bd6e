/**
 * Sample data of the built-in sandbox. Invented names and addresses; every RUC has a
 * valid modulo-11 check digit. Nothing here is real registry data.
 */

export { TAXPAYERS, type SandboxTaxpayer } from './taxpayers.js';
import { TAXPAYERS } from './taxpayers.js';

/** A person of POST /dni, as public clients read one (upstream-notes). */
export interface SandboxPerson {
  numero: string;
  nombre_completo: string;
  nombres: string;
  apellido_paterno: string;
  apellido_materno: string;
  codigo_verificacion: string;
}

/** A person as SUNAT's register names one: `APELLIDO_PATERNO APELLIDO_MATERNO NOMBRES`. */
function person(dni: string, name: string): SandboxPerson {
  const [paterno = '', materno = '', ...nombres] = name.split(' ');
  return {
    numero: dni,
    nombre_completo: name,
    nombres: nombres.join(' '),
    apellido_paterno: paterno,
    apellido_materno: materno,
    codigo_verificacion: String([...dni].reduce((sum, d, i) => sum + Number(d) * (i + 2), 0) % 10),
  };
}

/** A company's representatives and branches (`/ruc-representantes`, `/ruc-establecimientos-anexos`), by RUC; none for any other taxpayer. */
export const REPRESENTATIVES: Readonly<Record<string, readonly Record<string, string>[]>> = {
  '20100123453': [
    {
      tipo_de_documento: 'DNI',
      numero_de_documento: '46779354',
      nombre: 'QUISPE MAMANI ROSA ELENA',
      cargo: 'GERENTE GENERAL',
      fecha_desde: '01/03/2015',
    },
    { tipo_de_documento: 'CE', numero_de_documento: '001234567', nombre: 'SMITH JOHN', cargo: 'APODERADO', fecha_desde: '15/06/2020' },
  ],
  '20501234568': [
    { tipo_de_documento: 'DNI', numero_de_documento: '72345678', nombre: 'GARCIA TORRES LUIS ALBERTO', cargo: 'GERENTE', fecha_desde: '-' },
  ],
};
export const BRANCHES: Readonly<Record<string, readonly Record<string, unknown>[]>> = {
  '20100123453': [
    {
      codigo: '0001',
      tipo_de_establecimiento: 'SU. SUCURSAL',
      actividad_economica: '',
      direccion: 'AV. ARGENTINA NRO. 1234',
      direccion_completa: 'AV. ARGENTINA NRO. 1234, LIMA - LIMA - LIMA',
      departamento: 'LIMA',
      provincia: 'LIMA',
      distrito: 'LIMA',
      ubigeo: ['15', '1501', '150101'],
    },
    {
      codigo: '0002',
      tipo_de_establecimiento: 'DE. DEPOSITO',
      actividad_economica: '-',
      direccion: 'CAL. LOS PINOS NRO. 45',
      direccion_completa: 'CAL. LOS PINOS NRO. 45, CALLAO - CALLAO - CALLAO',
      departamento: 'CALLAO',
      provincia: 'CALLAO',
      distrito: 'CALLAO',
      ubigeo_sunat: '070101',
      ubigeo: ['07', '0701', '070101'],
    },
  ],
};

/**
 * The persons `/dni` knows: every natural person among the taxpayers (RUC 10 + DNI + check
 * digit, the licence holders among them), and one with no RUC (`70123456`).
 */
export const PERSONS: readonly SandboxPerson[] = [
  ...TAXPAYERS.filter((t) => t.ruc.startsWith('10')).map((t) => person(t.ruc.slice(2, 10), t.nombre_o_razon_social)),
  person('70123456', 'VARGAS LLOSA ANA MARIA'),
];

export interface SandboxLicence {
  num_licencia: string;
  tipo_documento: string;
  numero_documento: string;
  nombres: string;
  apellido_paterno: string;
  apellido_materno: string;
}

export const LICENCES: readonly SandboxLicence[] = [
  {
    num_licencia: 'Q46779354',
    tipo_documento: 'DNI',
    numero_documento: '46779354',
    nombres: 'ROSA ELENA',
    apellido_paterno: 'QUISPE',
    apellido_materno: 'MAMANI',
  },
  {
    num_licencia: 'Q72345678',
    tipo_documento: 'DNI',
    numero_documento: '72345678',
    nombres: 'LUIS ALBERTO',
    apellido_paterno: 'GARCIA',
    apellido_materno: 'TORRES',
  },
  {
    num_licencia: 'Q40123456',
    tipo_documento: 'DNI',
    numero_documento: '40123456',
    nombres: 'CARMEN',
    apellido_paterno: 'FLORES',
    apellido_materno: 'HUAMAN',
  },
  {
    num_licencia: 'B12345678',
    tipo_documento: 'DNI',
    numero_documento: '12345678',
    nombres: 'JORGE',
    apellido_paterno: 'MENDOZA',
    apellido_materno: 'RAMOS',
  },
  {
    num_licencia: 'Q001234567',
    tipo_documento: 'CE',
    numero_documento: '001234567',
    nombres: 'JOHN PAUL',
    apellido_paterno: 'RODRIGUEZ',
    apellido_materno: 'SMITH',
  },
];

/**
 * Keys that make the sandbox misbehave on purpose, so that every error path can be
 * shown end to end. A RUC trigger works on every lookup by RUC, and on a batch whose
 * receipts name it as issuer; a licence trigger on /licencia-conducir, a DNI on /dni, a
 * date (weekdays of January 1990) on /tipo-de-cambio.
 * Any valid RUC, licence or DNI not in the data above answers 404, as any date before 2000.
 */
export const TRIGGERS = {
  /** 503 upstream_unavailable, retryable. */
  unavailable: { ruc: '20600000021', licencia: 'T503', dni: '00000503', fecha: '1990-01-01' },
  /** 502 with an HTML body: another 5xx, not JSON. */
  badGateway: { ruc: '20600000030', licencia: 'T502', dni: '00000502', fecha: '1990-01-02' },
  /** A correct answer after `slowMs` (default 3000 ms). */
  slow: { ruc: '20600000048', licencia: 'TSLOW', dni: '00000001', fecha: '1990-01-03' },
  /** 200 with a truncated, unparseable JSON body (billed, as every 2xx). */
  brokenBody: { ruc: '20600000056', licencia: 'TBROKEN', dni: '00000002', fecha: '1990-01-04' },
  /** 200 with a record that breaks the schema (no name; billed). */
  badRecord: { ruc: '20600000064', licencia: 'TBADRECORD', dni: '00000004', fecha: '1990-01-05' },
  /** 400 invalid_input: the upstream rejects a RUC the gateway accepted. */
  rejected: { ruc: '20600000072', licencia: 'T400', dni: '00000400', fecha: '1990-01-08' },
  /** 422 with an unknown code: some other 4xx. */
  otherClientError: { ruc: '20600000081', licencia: 'T422', dni: '00000422', fecha: '1990-01-09' },
  /** The connection is reset without an answer. */
  reset: { ruc: '20600000099', licencia: 'TRESET', dni: '00000005', fecha: '1990-01-10' },
  /** 200 with another document's record (billed). */
  otherDocument: { ruc: '20600000102', licencia: 'TOTHER', dni: '00000008', fecha: '1990-01-11' },
  /** 302 to another address, which a client must not follow. */
  redirect: { ruc: '20600000111', licencia: 'T302', dni: '00000302', fecha: '1990-01-12' },
  /** As a receipt's issuer: a batch answer whose count is over 2^31 (billed). */
  hugeCount: { ruc: '20600000145', licencia: 'THUGE', dni: '00000007', fecha: '1990-01-15' },
  /** 400 whose message quotes the caller's token back (some services do), and a v2 batch's SOL credentials. */
  echoesToken: { ruc: '20600000137', licencia: 'TECHO', dni: '00000006', fecha: '1990-01-16' },
  /** 204 with no body (billed). */
  noContent: { ruc: '20600000129', licencia: 'T204', dni: '00000204', fecha: '1990-01-17' },
  /** As the real service answers a lookup that found nothing: HTTP 200, success false, "No se encontraron registros", no code. */
  notFoundWithoutCode: { ruc: '20600000153', licencia: 'T200VACIO', dni: '00000200', fecha: '1990-01-18' },
  /** As the real service answers an exhausted plan: HTTP 200, success false, "Ha superado la cantidad de consultas mensuales". */
  planExhausted: { ruc: '20600000161', licencia: 'T200AGOTADO', dni: '00000201', fecha: '1990-01-19' },
  /** A plan that does not include the operation, as the service has answered it: HTTP 200, success false, code PLAN_DENIED. */
  planDenied: { ruc: '20600000188', licencia: 'T200PLAN', dni: '00000202', fecha: '1990-01-22' },
  /** Throttling as web frameworks answer it: 429 `{"message": "Too Many Attempts."}`, `Retry-After: 30`, no code. */
  throttled: { ruc: '20600000170', licencia: 'T429', dni: '00000429', fecha: '1990-01-23' },
  /** A valid RUC / licence with no data: 404 document_not_found. */
  notFound: { ruc: '20999999990', licencia: 'Q99999999', dni: '00000404', fecha: '1990-01-24' },
} as const;

export type TriggerName = keyof typeof TRIGGERS;

/** Name shown for the slow trigger's record. */
export const SLOW_TAXPAYER_NAME = 'EMPRESA DE RESPUESTA LENTA S.A.C.';

export interface SandboxTokenPlan {
  token: string;
  plan: 'free' | 'pro';
  /** Plan queries left. */
  quota: number;
}

/** Tokens the sandbox accepts unless told otherwise. */
/** The sandbox's token with a large plan: GraphiQL opens with it, and the tests and examples use it. */
export const SANDBOX_TOKEN = 'sandbox-pro';

export const DEFAULT_TOKENS: readonly SandboxTokenPlan[] = [
  { token: SANDBOX_TOKEN, plan: 'pro', quota: 1_000_000 },
  { token: 'sandbox-free', plan: 'free', quota: 100 },
  { token: 'sandbox-low', plan: 'pro', quota: 3 },
];
