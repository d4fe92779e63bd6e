/**
 * Sample data of the built-in sandbox. Invented names and addresses; every RUC has a
 * valid modulo-11 check digit. Nothing here is real registry data.
 */

export interface SandboxTaxpayer {
  ruc: string;
  nombre_o_razon_social: string;
  estado: string;
  condicion: string;
  direccion: string;
  departamento: string;
  /** Absent on purpose for some records, and odd values for others, to exercise null flags. */
  es_agente_de_retencion?: string;
  es_buen_contribuyente?: string;
  tipo_contribuyente: string;
  fecha_inscripcion: string;
  actividades_economicas: string[];
  distrito: string;
  provincia: string;
}

const t = (x: SandboxTaxpayer) => x;

export const TAXPAYERS: readonly SandboxTaxpayer[] = [
  t({
    ruc: '20100123453',
    nombre_o_razon_social: 'COMERCIAL ANDINA S.A.C.',
    estado: 'ACTIVO',
    condicion: 'HABIDO',
    direccion: 'AV. JAVIER PRADO ESTE NRO. 1234',
    distrito: 'SAN ISIDRO',
    provincia: 'LIMA',
    departamento: 'LIMA',
    es_agente_de_retencion: 'SI',
    es_buen_contribuyente: 'NO',
    tipo_contribuyente: 'SOCIEDAD ANONIMA CERRADA',
    fecha_inscripcion: '1995-03-14',
    actividades_economicas: [
      'Principal - 4690 - VENTA AL POR MAYOR NO ESPECIALIZADA',
      'Secundaria 1 - 4923 - TRANSPORTE DE CARGA POR CARRETERA',
    ],
  }),
  t({
    ruc: '20501234568',
    nombre_o_razon_social: 'INVERSIONES PACIFICO DEL SUR S.A.',
    estado: 'ACTIVO',
    condicion: 'HABIDO',
    direccion: 'CAL. MERCADERES NRO. 210',
    distrito: 'AREQUIPA',
    provincia: 'AREQUIPA',
    departamento: 'AREQUIPA',
    es_agente_de_retencion: 'NO',
    es_buen_contribuyente: 'SI',
    tipo_contribuyente: 'SOCIEDAD ANONIMA',
    fecha_inscripcion: '2002-07-01',
    actividades_economicas: ['Principal - 6810 - ACTIVIDADES INMOBILIARIAS CON BIENES PROPIOS'],
  }),
  t({
    ruc: '20602345671',
    nombre_o_razon_social: 'AGROEXPORTADORA VALLE VERDE S.A.C.',
    estado: 'ACTIVO',
    condicion: 'HABIDO',
    direccion: 'CAR. PANAMERICANA SUR KM. 300',
    distrito: 'SANTIAGO',
    provincia: 'ICA',
    departamento: 'ICA',
    es_agente_de_retencion: 'NO',
    es_buen_contribuyente: 'NO',
    tipo_contribuyente: 'SOCIEDAD ANONIMA CERRADA',
    fecha_inscripcion: '2017-10-20',
    actividades_economicas: [
      'Principal - 0122 - CULTIVO DE FRUTAS TROPICALES Y SUBTROPICALES',
      'Secundaria 1 - 4630 - VENTA AL POR MAYOR DE ALIMENTOS',
    ],
  }),
  t({
    ruc: '20603456786',
    nombre_o_razon_social: 'TRANSPORTES CORDILLERA E.I.R.L.',
    estado: 'SUSPENSION TEMPORAL',
    condicion: 'HABIDO',
    direccion: 'AV. DE LA CULTURA NRO. 905',
    distrito: 'WANCHAQ',
    provincia: 'CUSCO',
    departamento: 'CUSCO',
    es_agente_de_retencion: 'NO',
    es_buen_contribuyente: 'NO',
    tipo_contribuyente: 'EMPRESA INDIVIDUAL DE RESP. LTDA',
    fecha_inscripcion: '2018-02-05',
    actividades_economicas: ['Principal - 4922 - OTRAS ACTIVIDADES DE TRANSPORTE POR VIA TERRESTRE'],
  }),
  t({
    ruc: '20484567892',
    nombre_o_razon_social: 'MINERA CERRO AZUL S.A.A.',
    estado: 'ACTIVO',
    condicion: 'HABIDO',
    direccion: 'JR. SUCRE NRO. 455',
    distrito: 'HUARAZ',
    provincia: 'HUARAZ',
    departamento: 'ANCASH',
    es_agente_de_retencion: 'SI',
    es_buen_contribuyente: 'SI',
    tipo_contribuyente: 'SOCIEDAD ANONIMA ABIERTA',
    fecha_inscripcion: '1993-11-30',
    actividades_economicas: ['Principal - 0729 - EXTRACCION DE OTROS MINERALES METALIFEROS NO FERROSOS'],
  }),
  t({
    ruc: '20555678909',
    nombre_o_razon_social: 'TEXTIL GAMARRA UNIDOS S.R.L.',
    estado: 'BAJA DE OFICIO',
    condicion: 'NO HABIDO',
    direccion: 'JR. GAMARRA NRO. 1001 INT. 305',
    distrito: 'LA VICTORIA',
    provincia: 'LIMA',
    departamento: 'LIMA',
    es_agente_de_retencion: 'NO',
    es_buen_contribuyente: 'NO',
    tipo_contribuyente: 'SOC.COM.RESPONS. LTDA',
    fecha_inscripcion: '2013-06-12',
    actividades_economicas: ['Principal - 1410 - FABRICACION DE PRENDAS DE VESTIR'],
  }),
  t({
    ruc: '20136789016',
    nombre_o_razon_social: 'PESQUERA MAR DE GRAU S.A.',
    estado: 'ACTIVO',
    condicion: 'HABIDO',
    direccion: 'AV. GRAU NRO. 120',
    distrito: 'PAITA',
    provincia: 'PAITA',
    departamento: 'PIURA',
    es_agente_de_retencion: 'SI',
    es_buen_contribuyente: 'NO',
    tipo_contribuyente: 'SOCIEDAD ANONIMA',
    fecha_inscripcion: '1994-01-17',
    actividades_economicas: ['Principal - 0311 - PESCA MARITIMA', 'Secundaria 1 - 1020 - ELABORACION Y CONSERVACION DE PESCADO'],
  }),
  t({
    ruc: '20457890126',
    nombre_o_razon_social: 'CONSTRUCTORA SELVA NORTE S.A.C.',
    estado: 'ACTIVO',
    condicion: 'NO HALLADO',
    direccion: 'CAL. PROSPERO NRO. 77',
    distrito: 'IQUITOS',
    provincia: 'MAYNAS',
    departamento: 'LORETO',
    es_agente_de_retencion: '-',
    es_buen_contribuyente: '',
    tipo_contribuyente: 'SOCIEDAD ANONIMA CERRADA',
    fecha_inscripcion: '2001-09-03',
    actividades_economicas: ['Principal - 4100 - CONSTRUCCION DE EDIFICIOS'],
  }),
  t({
    ruc: '20600000013',
    nombre_o_razon_social: 'CAFE DE ALTURA CHANCHAMAYO S.A.C.',
    estado: 'ACTIVO',
    condicion: 'HABIDO',
    direccion: 'AV. PERENE NRO. 300',
    distrito: 'CHANCHAMAYO',
    provincia: 'CHANCHAMAYO',
    departamento: 'JUNIN',
    tipo_contribuyente: 'SOCIEDAD ANONIMA CERRADA',
    fecha_inscripcion: '2015-04-22',
    actividades_economicas: [],
  }),
  t({
    ruc: '10467793549',
    nombre_o_razon_social: 'QUISPE MAMANI ROSA ELENA',
    estado: 'ACTIVO',
    condicion: 'HABIDO',
    direccion: 'JR. LIMA NRO. 540',
    distrito: 'PUNO',
    provincia: 'PUNO',
    departamento: 'PUNO',
    es_agente_de_retencion: 'NO',
    es_buen_contribuyente: 'NO',
    tipo_contribuyente: 'PERSONA NATURAL CON NEGOCIO',
    fecha_inscripcion: '2010-08-09',
    actividades_economicas: ['Principal - 4711 - VENTA AL POR MENOR EN COMERCIOS NO ESPECIALIZADOS'],
  }),
  t({
    ruc: '10723456784',
    nombre_o_razon_social: 'GARCIA TORRES LUIS ALBERTO',
    estado: 'ACTIVO',
    condicion: 'HABIDO',
    direccion: 'AV. ESPAÑA NRO. 1820',
    distrito: 'TRUJILLO',
    provincia: 'TRUJILLO',
    departamento: 'LA LIBERTAD',
    es_agente_de_retencion: 'NO',
    es_buen_contribuyente: 'NO',
    tipo_contribuyente: 'PERSONA NATURAL SIN NEGOCIO',
    fecha_inscripcion: '2019-12-02',
    actividades_economicas: ['Principal - 6920 - ACTIVIDADES DE CONTABILIDAD'],
  }),
  t({
    ruc: '10401234565',
    nombre_o_razon_social: 'FLORES HUAMAN CARMEN',
    estado: 'BAJA DEFINITIVA',
    condicion: 'HABIDO',
    direccion: 'PJ. LOS PINOS NRO. 12',
    distrito: 'HUANCAYO',
    provincia: 'HUANCAYO',
    departamento: 'JUNIN',
    es_agente_de_retencion: 'NO',
    es_buen_contribuyente: 'NO',
    tipo_contribuyente: 'PERSONA NATURAL CON NEGOCIO',
    fecha_inscripcion: '2008-05-19',
    actividades_economicas: ['Principal - 5610 - ACTIVIDADES DE RESTAURANTES'],
  }),
  t({
    ruc: '15432198763',
    nombre_o_razon_social: 'RODRIGUEZ SMITH JOHN PAUL',
    estado: 'ACTIVO',
    condicion: 'HABIDO',
    direccion: 'CAL. LAS BEGONIAS NRO. 44',
    distrito: 'MIRAFLORES',
    provincia: 'LIMA',
    departamento: 'LIMA',
    es_agente_de_retencion: 'NO',
    es_buen_contribuyente: 'NO',
    tipo_contribuyente: 'PERSONA NATURAL NO DOMICILIADA',
    fecha_inscripcion: '2021-03-01',
    actividades_economicas: ['Principal - 7490 - OTRAS ACTIVIDADES PROFESIONALES'],
  }),
  t({
    ruc: '17123456785',
    nombre_o_razon_social: 'VARGAS LEON MARIA ISABEL',
    estado: 'ACTIVO',
    condicion: 'HABIDO',
    direccion: 'AV. BOLOGNESI NRO. 330',
    distrito: 'TACNA',
    provincia: 'TACNA',
    departamento: 'TACNA',
    es_agente_de_retencion: 'NO',
    es_buen_contribuyente: 'SI',
    tipo_contribuyente: 'PERSONA NATURAL CON NEGOCIO',
    fecha_inscripcion: '1999-07-26',
    actividades_economicas: ['Principal - 4773 - VENTA AL POR MENOR DE OTROS PRODUCTOS'],
  }),
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
 * shown end to end. A RUC trigger works on /ruc and /ruc-sunat, and on a batch whose
 * receipts name it as issuer; a licence trigger on /licencia-conducir.
 * Any valid RUC or licence not in the data above answers 404.
 */
export const TRIGGERS = {
  /** 503 upstream_unavailable, retryable. */
  unavailable: { ruc: '20600000021', licencia: 'T503' },
  /** 502 with an HTML body: another 5xx, not JSON. */
  badGateway: { ruc: '20600000030', licencia: 'T502' },
  /** A correct answer after `slowMs` (default 3000 ms). */
  slow: { ruc: '20600000048', licencia: 'TSLOW' },
  /** 200 with a truncated, unparseable JSON body (billed, as every 2xx). */
  brokenBody: { ruc: '20600000056', licencia: 'TBROKEN' },
  /** 200 with a record that breaks the schema (no name; billed). */
  badRecord: { ruc: '20600000064', licencia: 'TBADRECORD' },
  /** 400 invalid_input: the upstream rejects a RUC the gateway accepted. */
  rejected: { ruc: '20600000072', licencia: 'T400' },
  /** 422 with an unknown code: some other 4xx. */
  otherClientError: { ruc: '20600000081', licencia: 'T422' },
  /** The connection is reset without an answer. */
  reset: { ruc: '20600000099', licencia: 'TRESET' },
  /** 200 with another document's record (billed). */
  otherDocument: { ruc: '20600000102', licencia: 'TOTHER' },
  /** 302 to another address, which a client must not follow. */
  redirect: { ruc: '20600000111', licencia: 'T302' },
  /** As a receipt's issuer: a batch answer whose count is over 2^31 (billed). */
  hugeCount: { ruc: '20600000145', licencia: 'THUGE' },
  /** 400 whose message quotes the caller's token back (some services do). */
  echoesToken: { ruc: '20600000137', licencia: 'TECHO' },
  /** 204 with no body (billed). */
  noContent: { ruc: '20600000129', licencia: 'T204' },
  /** A valid RUC / licence with no data: 404 document_not_found. */
  notFound: { ruc: '20999999990', licencia: 'Q99999999' },
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
export const DEFAULT_TOKENS: readonly SandboxTokenPlan[] = [
  { token: 'sandbox-pro', plan: 'pro', quota: 1_000_000 },
  { token: 'sandbox-free', plan: 'free', quota: 100 },
  { token: 'sandbox-low', plan: 'pro', quota: 3 },
];
