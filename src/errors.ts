import { GraphQLError } from 'graphql';
import { maskError as yogaMaskError } from 'graphql-yoga';
import { GRAPHQL_PATH } from './config.js';
import {
  UpstreamError,
  UpstreamInvalidResponseError,
  type HttpRefusal,
  type InvalidResponseReason,
  UpstreamHttpError,
} from './upstream/errors.js';
import { BudgetExceededError, BudgetUnavailableError } from './data/budgets.js';
import { OperationCostError } from './upstream/spend.js';
import { RegisterUnavailableError, PadronRefused } from './padron/search.js';
import { SunatCredentialsRejected, SunatError, SunatRefused, SunatUnavailable } from './sunat/errors.js';

/**
 * The one place that turns failures into GraphQL errors. Every error the gateway
 * emits carries `extensions.code` (one of ERROR_CODES) and a boolean `extensions.retryable`.
 */
export const ERROR_CODES = {
  INVALID_INPUT: 'Entrada inválida: se rechaza localmente (sin consumir consultas) o la rechazó el servicio (HTTP 400).',
  DOCUMENT_NOT_FOUND: 'El documento consultado no existe en el servicio (HTTP 404).',
  QUOTA_EXCEEDED: 'Las consultas restantes del plan no alcanzan (HTTP 429 quota_exceeded, o el aviso del servicio de que se agotaron).',
  RATE_LIMITED:
    'El servicio limita la frecuencia de consultas del token (HTTP 429 sin quota_exceeded): reintente pasados extensions.retryAfterSeconds; ' +
    'o quien llama tiene ya VALIDACION_MASIVA_POR_LLAMANTE validaciones masivas sin terminar. Reintentable.',
  UNAUTHENTICATED:
    'Falta el token Bearer, o el servicio lo rechazó (HTTP 401); con AUTH_JWKS_URL, el ' +
    'JWT de inicio de sesión falta o no es válido (HTTP 401, sin llamar al servicio).',
  AUTH_UNAVAILABLE:
    'Con AUTH_JWKS_URL: el proveedor de identidad no responde y ninguna clave guardada verifica el JWT (HTTP 503, sin llamar al servicio). Reintentable.',
  BUDGET_EXCEEDED:
    'Con AUTH_JWKS_URL: el usuario gastó su presupuesto de consultas del plan (BUDGET_QUERIES por BUDGET_WINDOW_MS); ' +
    'extensions.budget dice cuándo se renueva.',
  BUDGET_UNAVAILABLE:
    'Con AUTH_JWKS_URL y BUDGET_WHEN_STORE_DOWN=refuse: el contador compartido de presupuestos (Redis) no responde; no se llamó al servicio. Reintentable.',
  FORBIDDEN: 'El plan del token no permite la operación (HTTP 403), p. ej. licencias en el plan gratuito.',
  UPSTREAM_UNAVAILABLE:
    'El servicio no está disponible: 503 u otro 5xx, error de red o tiempo agotado antes de una respuesta 2xx. Reintentable.',
  UPSTREAM_ERROR:
    'El servicio respondió algo inutilizable: un 2xx ilegible, incompleto, de otro ' +
    'documento o fuera de esquema (ya cobrado, nunca reintentado), un 3xx u otro 4xx.',
  INTERNAL_SERVER_ERROR: 'Falla interna del gateway (el detalle se oculta).',
  GRAPHQL_PARSE_FAILED: 'El documento GraphQL no se pudo analizar.',
  GRAPHQL_VALIDATION_FAILED: 'El documento GraphQL no es válido para el esquema.',
  BAD_USER_INPUT: 'Las variables no tienen el tipo que declara la operación.',
  SECRET_IN_DOCUMENT:
    'Credenciales SOL escritas en el documento en lugar de una variable: se rechaza sin mostrarlas, y el documento no se guarda.',
  BAD_REQUEST: 'La petición HTTP no es una petición GraphQL válida (cuerpo, método o tipo de contenido).',
  REQUEST_ENTITY_TOO_LARGE: 'El cuerpo de la petición supera MAX_BODY_BYTES (HTTP 413).',
  REQUEST_TIMEOUT: 'El cuerpo de la petición no llegó completo en HTTP_REQUEST_TIMEOUT_MS (HTTP 408). Reintentable.',
  OVERLOADED:
    'El gateway atiende ya MAX_CONCURRENT_REQUESTS operaciones, o demasiados documentos nuevos esperan su análisis (HTTP 503 con Retry-After), ' +
    'o envía ya todas las listas largas con @stream que puede. Reintentable.',
  NOT_FOUND:
    `La ruta no existe: el endpoint GraphQL es ${GRAPHQL_PATH} (HTTP 404); o la suscripción (webhook) ` +
    'o la validación masiva no existe o no es de quien llama.',
  OPERATION_NOT_SUPPORTED: 'Una suscripción pedida sin Accept: text/event-stream (HTTP 406): sus eventos llegan solo por SSE.',
  PERSISTED_QUERY_NOT_FOUND: 'El hash de la consulta persistida (APQ) no se conoce: envíe el documento junto con su hash.',
  PERSISTED_QUERY_MISMATCH: 'El hash de la consulta persistida (APQ) no corresponde al documento enviado.',
  DOCUMENT_NOT_TRUSTED: 'Con TRUSTED_DOCUMENTS solo se ejecutan los documentos del manifiesto, por su documentId o su hash (HTTP 400).',
  CSRF_HEADER_REQUIRED: 'Petición de navegador sin preflight CORS y sin la cabecera x-graphql-yoga-csrf (HTTP 403).',
  TOKEN_LIMIT_EXCEEDED: 'El documento supera MAX_TOKENS.',
  DEPTH_LIMIT_EXCEEDED: 'La operación supera MAX_DEPTH.',
  ALIAS_LIMIT_EXCEEDED: 'La operación supera MAX_ALIASES; para muchos RUC use contribuyentes(rucs).',
  DIRECTIVE_LIMIT_EXCEEDED: 'La operación supera MAX_DIRECTIVES.',
  REGISTER_UNAVAILABLE:
    'El padrón que guarda el gateway no está disponible para buscar: PADRON apagado (no reintentable), ' +
    'aún sin importar o más antiguo que PADRON_MAX_AGE_MS (reintentable). No se llamó al servicio.',
  COST_LIMIT_EXCEEDED: 'Más consultas del plan que MAX_OPERATION_COST: la operación, antes de llamar; o el campo cuya llamada lo pasaría.',
  SUNAT_CREDENTIALS_REJECTED:
    'SUNAT rechazó las credenciales de su API (credencialesApi o SUNAT_API_*): no se validó ningún comprobante con ellas. No reintentable.',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * Every refusal the gateway words itself: its code, its words, whether trying again may help (when
 * not the code's default) and its HTTP status (when it has one of its own), here alone. The layers
 * name a refusal by its key (the register, below this floor, through PadronRefused's key); `refusal`
 * makes the typed error. Rules that name a field's fault (src/schema/validation.ts, the webhook
 * address checks) give the words after the field's name.
 */
interface Refusal {
  code: ErrorCode;
  words: string | ((args: never) => string);
  retryable?: boolean;
  status?: number;
}

export const REFUSALS = {
  // The HTTP request, before any GraphQL work.
  routeNotFound: {
    code: 'NOT_FOUND',
    status: 404,
    words: ({ path }: { path: string }) => `La ruta no existe; el endpoint GraphQL es ${path}.`,
  },
  graphiqlFileNotFound: {
    code: 'NOT_FOUND',
    status: 404,
    words: ({ path }: { path: string }) => `Ese archivo de GraphiQL no existe; el endpoint GraphQL es ${path}.`,
  },
  internal: { code: 'INTERNAL_SERVER_ERROR', status: 500, words: 'Error interno del gateway.' },
  headersTooLarge: {
    code: 'BAD_REQUEST',
    status: 431,
    words: 'Las cabeceras de la petición superan el máximo que el servidor acepta (16 KB): revise el token de Authorization y las cookies.',
  },
  acceptNothing: {
    code: 'BAD_REQUEST',
    status: 406,
    words:
      'La cabecera Accept no admite ninguna respuesta que el gateway envíe: acepte application/json ' +
      '(o multipart/mixed o text/event-stream para @defer y @stream), en UTF-8.',
  },
  unsupportedContentType: {
    code: 'BAD_REQUEST',
    status: 415,
    words: 'Tipo de contenido no admitido: envíe Content-Type: application/json (o una consulta GET con ?query=).',
  },
  paramNotJson: { code: 'BAD_REQUEST', status: 400, words: ({ name }: { name: string }) => `El parámetro "${name}" no es JSON válido.` },
  bodyNotJson: { code: 'BAD_REQUEST', status: 400, words: 'El cuerpo de la petición no es JSON válido.' },
  bodyEmpty: { code: 'BAD_REQUEST', status: 400, words: ({ send }: { send: string }) => `El cuerpo de la petición está vacío: ${send}` },
  formWithoutQuery: {
    code: 'BAD_REQUEST',
    status: 400,
    words: ({ send }: { send: string }) => `El formulario (application/x-www-form-urlencoded, lo que envía curl -d) no trae query: ${send}`,
  },
  batch: { code: 'BAD_REQUEST', status: 400, words: 'Una petición lleva una sola operación: no se aceptan lotes (arrays).' },
  noDocument: { code: 'BAD_REQUEST', status: 400, words: 'Falta el documento GraphQL: envíe query (o documentId).' },
  bodyTooLarge: {
    code: 'REQUEST_ENTITY_TOO_LARGE',
    status: 413,
    words: ({ limit }: { limit: number }) => `El cuerpo de la petición supera ${limit} bytes (MAX_BODY_BYTES).`,
  },
  bodyTooSlow: {
    code: 'REQUEST_TIMEOUT',
    status: 408,
    words: ({ ms }: { ms: number }) => `El cuerpo de la petición no llegó completo en ${ms} ms.`,
  },
  newDocumentsWaiting: {
    code: 'OVERLOADED',
    status: 503,
    words: ({ waiting }: { waiting: number }) =>
      `El gateway tiene ${waiting} documentos nuevos esperando su análisis; reintente en un segundo o use uno ya enviado.`,
  },
  callerHasItsShare: {
    code: 'OVERLOADED',
    status: 503,
    words: ({ max }: { max: number }) =>
      `El gateway está al máximo de operaciones simultáneas (${max}) y quien llama ya tiene su parte; reintente en un segundo.`,
  },
  csrf: {
    code: 'CSRF_HEADER_REQUIRED',
    status: 403,
    words: ({ header }: { header: string }) => `Petición sin preflight CORS: envíe Content-Type: application/json o la cabecera ${header}.`,
  },

  // Signing in (AUTH_JWKS_URL).
  signInMissing: {
    code: 'UNAUTHENTICATED',
    status: 401,
    words: 'Falta el token de inicio de sesión: envíe Authorization: Bearer <JWT> de su proveedor de identidad.',
  },
  signInNotAJwt: {
    code: 'UNAUTHENTICATED',
    status: 401,
    words:
      'El token enviado no es un JWT. Este gateway pide iniciar sesión: envíe Authorization: Bearer <JWT> de su proveedor de identidad, ' +
      'no el token del plan del servicio (el gateway usa el suyo).',
  },
  signInInvalid: {
    code: 'UNAUTHENTICATED',
    status: 401,
    words: 'El token de inicio de sesión no es válido (firma, algoritmo, emisor, audiencia, vigencia o formato).',
  },
  signInExpired: { code: 'UNAUTHENTICATED', status: 401, words: 'El token de inicio de sesión venció: inicie sesión de nuevo.' },
  signInNoSubject: {
    code: 'UNAUTHENTICATED',
    status: 401,
    words: 'El token de inicio de sesión no dice quién es el usuario (falta la claim de AUTH_SUBJECT_CLAIM).',
  },
  signInUnavailable: {
    code: 'AUTH_UNAVAILABLE',
    status: 503,
    words: 'El proveedor de identidad no responde y ninguna clave guardada verifica el token; reintente en unos segundos.',
  },

  // The document and its limits, before any resolver.
  syntax: {
    code: 'GRAPHQL_PARSE_FAILED',
    words: ({ place, found }: { place: string; found: string }) =>
      `Error de sintaxis${place}: ${found}. Los errores no repiten el documento.`,
  },
  tokens: {
    code: 'TOKEN_LIMIT_EXCEEDED',
    words: ({ max }: { max: number }) => `El documento GraphQL tiene más de ${max} tokens (MAX_TOKENS).`,
  },
  depth: {
    code: 'DEPTH_LIMIT_EXCEEDED',
    words: ({ found, max }: { found: string; max: number }) => `La operación tiene profundidad ${found}; el máximo es ${max} (MAX_DEPTH).`,
  },
  introspectionDepth: {
    code: 'DEPTH_LIMIT_EXCEEDED',
    words: ({ found, max }: { found: string; max: number }) =>
      `La operación tiene profundidad ${found} contando la introspección; el máximo es ${max}.`,
  },
  nesting: {
    code: 'DEPTH_LIMIT_EXCEEDED',
    words: ({ found, max }: { found: number; max: number }) => `El documento anida ${found} niveles de llaves; el máximo es ${max}.`,
  },
  aliases: {
    code: 'ALIAS_LIMIT_EXCEEDED',
    words: ({ found, max }: { found: string; max: number }) =>
      `La operación usa ${found} alias; el máximo es ${max} (MAX_ALIASES). ` +
      'Para consultar muchos RUC use contribuyentes(rucs: [...]), un solo campo.',
  },
  directives: {
    code: 'DIRECTIVE_LIMIT_EXCEEDED',
    words: ({ found, max }: { found: string; max: number }) =>
      `La operación usa ${found} directivas; el máximo es ${max} (MAX_DIRECTIVES).`,
  },
  operationKind: {
    code: 'OPERATION_NOT_SUPPORTED',
    words: ({ kind }: { kind: string }) => `Las operaciones ${kind} no están disponibles: el gateway atiende query y mutation.`,
  },
  operationCost: {
    code: 'COST_LIMIT_EXCEEDED',
    words: ({ estimated, max }: { estimated: number; max: number }) =>
      `La operación podría consumir hasta ${estimated} consultas del plan; el máximo ` +
      `por operación es ${max} (MAX_OPERATION_COST). Divídala en varias operaciones.`,
  },
  callCost: {
    code: 'COST_LIMIT_EXCEEDED',
    words: ({ cost, spent, limit }: { cost: number; spent: number; limit: number }) =>
      `Esta llamada costaría ${cost} consultas del plan y la operación ya gastó ${spent} ` +
      `de ${limit} (MAX_OPERATION_COST): no se hizo. Pida menos en una operación.`,
  },
  budgetExceeded: {
    code: 'BUDGET_EXCEEDED',
    words: ({ cost, spent, limit, resetAt }: { cost: number; spent: number; limit: number; resetAt: string }) =>
      `Su presupuesto no alcanza: esta llamada cuesta ${cost} y lleva ${spent} de ${limit} ` +
      `consultas del plan gastadas; se renueva el ${resetAt}. No se llamó al servicio.`,
  },
  budgetUnavailable: {
    code: 'BUDGET_UNAVAILABLE',
    words:
      'El contador de presupuestos compartido no responde y el gateway no llama al ' +
      'servicio sin él (BUDGET_WHEN_STORE_DOWN=refuse); reintente en unos segundos.',
  },
  notTrusted: {
    code: 'DOCUMENT_NOT_TRUSTED',
    status: 400,
    words: 'El documento no está entre los documentos de confianza del gateway (TRUSTED_DOCUMENTS).',
  },
  trustedByIdOnly: {
    code: 'DOCUMENT_NOT_TRUSTED',
    status: 400,
    words: 'Este gateway solo ejecuta documentos de confianza: envíe su documentId.',
  },
  trustedNotDocument: {
    code: 'DOCUMENT_NOT_TRUSTED',
    status: 400,
    words: 'Este gateway solo ejecuta documentos de confianza: envíe su documentId, no el documento.',
  },
  secretInDocument: {
    code: 'SECRET_IN_DOCUMENT',
    words:
      'Las credenciales SOL no pueden escribirse en el documento: envíelas en una variable (p. ej. $credencialesSol). ' +
      'El documento no se guarda y su contenido no se muestra.',
  },
  secretVariable: {
    code: 'BAD_USER_INPUT',
    words: ({ name, at, rule }: { name: string; at: string; rule: string }) =>
      `La variable "$${name}" no es válida${at}: ${rule}. Su valor no se muestra: es secreto.`,
  },
  streamNeedsAccept: {
    code: 'BAD_REQUEST',
    status: 406,
    words: 'Con @defer o @stream, la respuesta llega por partes: acepte multipart/mixed o text/event-stream (cabecera Accept).',
  },
  streamNegative: { code: 'INVALID_INPUT', words: 'El initialCount de @stream no puede ser negativo.' },
  streamsBusy: {
    code: 'OVERLOADED',
    words: ({ max, perCaller }: { max: number; perCaller: number }) =>
      `El gateway ya envía ${max} listas largas con @stream a la vez (${perCaller} por llamante): ` +
      'reintente en unos segundos, o pídala sin @stream.',
  },
  subscriptionsOverSse: {
    code: 'OPERATION_NOT_SUPPORTED',
    status: 406,
    words: 'Las suscripciones llegan por SSE: envíe la operación con Accept: text/event-stream.',
  },

  // Arguments.
  invalidInput: { code: 'INVALID_INPUT', words: ({ why }: { why: string }) => why },
  listTooLong: {
    code: 'INVALID_INPUT',
    words: ({ max }: { max: number }) => `Enviar máximo ${max} RUC por consulta (MAX_RUCS_PER_LIST).`,
  },
  paidRucs: {
    code: 'INVALID_INPUT',
    words: ({ max, paid }: { max: number; paid: number }) =>
      `Enviar máximo ${max} RUC por consulta. El padrón del gateway no guarda ${paid} de ellos; los que guarda no cuentan.`,
  },
  references: { code: 'INVALID_INPUT', words: ({ max }: { max: number }) => `Enviar máximo ${max} referencias por consulta.` },
  badReference: {
    code: 'INVALID_INPUT',
    words: 'Cada referencia debe ser un objeto con __typename Contribuyente, LicenciaConducir o Persona.',
  },
  pageSize: { code: 'INVALID_INPUT', words: ({ max }: { max: number }) => `first: de 1 a ${max}` },
  filterValues: {
    code: 'INVALID_INPUT',
    words: ({ values, length }: { values: number; length: number }) =>
      `filtro: a lo más ${values} valores por lista, de hasta ${length} caracteres`,
  },
  filterUbigeo: { code: 'INVALID_INPUT', words: 'filtro.ubigeo: 2, 4 o 6 dígitos (departamento, provincia o distrito)' },
  notADate: { code: 'INVALID_INPUT', words: ({ name }: { name: string }) => `${name}: una fecha AAAA-MM-DD` },
  changeRucs: {
    code: 'INVALID_INPUT',
    words: ({ max }: { max: number }) => `rucs: a lo más ${max}; para más, lea todos los cambios sin rucs`,
  },
  notARuc: { code: 'INVALID_INPUT', words: ({ ruc }: { ruc: string }) => `rucs: ${JSON.stringify(ruc.slice(0, 20))} no es un RUC válido` },

  // The register (PADRON) and its search: the search's words reach the caller from the search threads.
  textTooLong: { code: 'INVALID_INPUT', words: ({ max }: { max: number }) => `texto: a lo más ${max} caracteres` },
  textTooShort: { code: 'INVALID_INPUT', words: ({ min }: { min: number }) => `texto: al menos ${min} letras o dígitos` },
  textNotARuc: { code: 'INVALID_INPUT', words: 'texto: 11 dígitos que no son un RUC válido (prefijo o dígito verificador)' },
  textTooBroad: {
    code: 'INVALID_INPUT',
    words: 'texto: demasiado amplio para responder una página completa; escriba más letras de cada palabra',
  },
  cursorNotOurs: { code: 'INVALID_INPUT', words: 'el cursor `after` no es uno que dio esta búsqueda' },
  cursorOfAnother: {
    code: 'INVALID_INPUT',
    words: 'el cursor `after` es de otra búsqueda o de otra versión del padrón: empiece de nuevo sin `after`',
  },
  changesCursorNotOurs: { code: 'INVALID_INPUT', words: 'el cursor `after` no es uno que dio cambiosPadron' },
  registerNotReady: {
    code: 'REGISTER_UNAVAILABLE',
    retryable: true,
    words: ({ state }: { state: string }) =>
      `El padrón del gateway no está disponible (${state}): la búsqueda no consulta al servicio. Reintente cuando /health diga ready.`,
  },
  padronOffSearch: {
    code: 'REGISTER_UNAVAILABLE',
    retryable: false,
    words: 'El gateway no guarda el padrón (PADRON apagado): la búsqueda no consulta al servicio.',
  },
  padronOffChanges: {
    code: 'REGISTER_UNAVAILABLE',
    retryable: false,
    words: 'El gateway no guarda el padrón (PADRON apagado): no ve sus cambios.',
  },
  changesElsewhere: {
    code: 'REGISTER_UNAVAILABLE',
    retryable: true,
    words: 'Los cambios del padrón no están disponibles en este gateway (su PADRON_DIR lo usa otro, o es de solo lectura).',
  },

  // SUNAT's free receipt validation (docs/sunat.md).
  sunatCredentialsRejected: {
    code: 'SUNAT_CREDENTIALS_REJECTED',
    words: ({ why }: { why: string }) =>
      `SUNAT rechazó las credenciales de su API (${why}): revise clientId, clientSecret ` +
      `y rucEmpresa, y que la aplicación esté registrada para la consulta de validez.`,
  },
  sunatUnavailable: {
    code: 'UPSTREAM_UNAVAILABLE',
    words: ({ why }: { why: string }) => `La API de SUNAT no respondió (${why}); reintente en unos minutos.`,
  },
  sunatRefusedReceipt: { code: 'INVALID_INPUT', words: ({ why }: { why: string }) => `SUNAT no valida este comprobante: ${why}` },
  rateRange: {
    code: 'INVALID_INPUT',
    words: ({ max }: { max: number }) => `desde y hasta: desde no posterior a hasta, a lo más ${max} días`,
  },
  rateInFuture: {
    code: 'INVALID_INPUT',
    words: ({ today }: { today: string }) => `hasta: no posterior a hoy en Lima (${today}); SUNAT aún no publica esos días`,
  },
  ratesOff: {
    code: 'UPSTREAM_UNAVAILABLE',
    retryable: false,
    words: 'Este gateway no lee la lista de tipos de cambio de SUNAT (TIPO_DE_CAMBIO=servicio); pida el tipo de cambio de cada fecha.',
  },

  // Background validations (crearValidacionMasiva).
  jobNotFound: { code: 'NOT_FOUND', words: 'No existe una validación masiva con ese id (o no es de quien llama).' },
  jobsNeedToken: {
    code: 'UNAUTHENTICATED',
    words: 'Las validaciones masivas son de quien llama: envíe su token (Authorization: Bearer).',
  },
  jobOneInput: { code: 'INVALID_INPUT', words: 'Envíe los comprobantes como comprobantes o como texto: uno de los dos.' },
  jobNeedsCredentials: {
    code: 'INVALID_INPUT',
    words: 'Una validación masiva se hace con la API gratuita de SUNAT: envíe credencialesApi (el gateway no tiene SUNAT_API_*).',
  },
  tooManyJobs: {
    code: 'RATE_LIMITED',
    retryable: true,
    words: ({ max }: { max: number }) =>
      `Ya tiene ${max} validaciones masivas sin terminar (VALIDACION_MASIVA_POR_LLAMANTE): espere a que una termine o cancélela.`,
  },
  jobCursor: { code: 'INVALID_INPUT', words: 'el cursor `after` no es uno que dio esta validación masiva' },
  jobsOff: { code: 'UPSTREAM_UNAVAILABLE', retryable: false, words: 'Este gateway no hace validaciones masivas.' },

  // Subscriptions: webhooks and live feeds.
  noSubscriptions: { code: 'REGISTER_UNAVAILABLE', retryable: false, words: 'Este gateway no guarda suscripciones.' },
  noSubscriptionStore: {
    code: 'REGISTER_UNAVAILABLE',
    retryable: false,
    words: 'Sin PADRON ni REDIS_URL este gateway no ve cambios del padrón: no guarda suscripciones.',
  },
  subscriptionsNotOpen: {
    code: 'REGISTER_UNAVAILABLE',
    retryable: true,
    words: 'Las suscripciones aún no están disponibles en este gateway (su PADRON_DIR no está abierto).',
  },
  subscriptionStoreDown: {
    code: 'REGISTER_UNAVAILABLE',
    retryable: true,
    words: 'Las suscripciones no están disponibles ahora (su almacén no responde): reintente.',
  },
  subscriptionsNeedToken: {
    code: 'UNAUTHENTICATED',
    words: 'Las suscripciones son de quien llama: envíe su token (Authorization: Bearer).',
  },
  subscriptionNotFound: { code: 'NOT_FOUND', words: 'No existe una suscripción con ese id.' },
  subscriptionsPerCaller: {
    code: 'INVALID_INPUT',
    words: ({ max }: { max: number }) => `Ya tiene ${max} suscripciones (WEBHOOK_MAX_PER_CALLER): elimine una o agregue RUC a otra.`,
  },
  subscriptionRucs: {
    code: 'INVALID_INPUT',
    words: ({ max }: { max: number }) => `rucs: a lo más ${max} por suscripción (WEBHOOK_MAX_RUCS)`,
  },
  subscriptionEmpty: { code: 'INVALID_INPUT', words: 'rucs: una suscripción vigila al menos un RUC' },
  subscriptionUrl: { code: 'INVALID_INPUT', words: ({ why }: { why: string }) => `url: ${why}` },
  liveRucs: {
    code: 'INVALID_INPUT',
    words: ({ max }: { max: number }) => `rucs: a lo más ${max} en vivo; para más, una suscripción (crearSuscripcion)`,
  },
  liveFeedsPerCaller: {
    code: 'INVALID_INPUT',
    words: ({ max }: { max: number }) => `Ya tiene ${max} suscripciones en vivo abiertas (WEBHOOK_MAX_PER_CALLER).`,
  },
  liveFeedsFull: {
    code: 'OVERLOADED',
    words: 'Este gateway ya sirve todas las suscripciones en vivo que puede: reintente más tarde.',
  },
} as const satisfies Record<string, Refusal>;

export type RefusalKey = keyof typeof REFUSALS;

/** The arguments a refusal's words take: none for fixed words. */
export type RefusalArgs<K extends RefusalKey> = (typeof REFUSALS)[K]['words'] extends (args: infer A) => string ? [args: A] : [];

/** A refusal in words: its code, message, whether trying again may help, and its HTTP status (200 in a GraphQL answer). */
export interface Worded {
  code: ErrorCode;
  message: string;
  retryable: boolean | undefined;
  status: number | undefined;
}

/** The refusal `key` in its words. */
export function worded<K extends RefusalKey>(key: K, ...args: RefusalArgs<K>): Worded {
  const refusal: Refusal = REFUSALS[key];
  const words = refusal.words;
  return {
    code: refusal.code,
    message: typeof words === 'string' ? words : (words as (args: unknown) => string)(args[0]),
    retryable: refusal.retryable,
    status: refusal.status,
  };
}

/** Codes whose cause may pass by itself; anything else is final for the same request. */
export const RETRYABLE_BY_DEFAULT: ReadonlySet<ErrorCode> = new Set([
  'UPSTREAM_UNAVAILABLE',
  'AUTH_UNAVAILABLE',
  'BUDGET_UNAVAILABLE',
  'RATE_LIMITED',
  'OVERLOADED',
  'REQUEST_TIMEOUT',
]);

export interface GatewayErrorOptions {
  retryable?: boolean;
  extensions?: Record<string, unknown>;
}

/** A typed error raised by the gateway itself (local validation, missing token, ...). */
export function gatewayError(code: ErrorCode, message: string, options: GatewayErrorOptions = {}): GraphQLError {
  return new GraphQLError(message, {
    extensions: { code, retryable: options.retryable ?? RETRYABLE_BY_DEFAULT.has(code), ...options.extensions },
  });
}

/** The refusal `key` (REFUSALS words it) as a GraphQL error. */
export function refusal<K extends RefusalKey>(key: K, ...args: RefusalArgs<K>): GraphQLError {
  return refusalError(worded(key, ...args));
}

/** A worded refusal as a GraphQL error, with extensions of its own (`http` replaces the refusal's status). */
export function refusalError(refused: Worded, extensions: Record<string, unknown> = {}): GraphQLError {
  const http = refused.status === undefined ? {} : { http: { status: refused.status } };
  return gatewayError(refused.code, refused.message, { retryable: refused.retryable, extensions: { ...http, ...extensions } });
}

/** What the caller is told of a fault of the gateway itself: nothing more. */
export const INTERNAL_MESSAGE = worded('internal').message;

/** The JSON body of a request refused before any GraphQL work (413, 408, 503, ...): the one writer of such bodies. */
export function errorBody(refused: Worded): string {
  const retryable = refused.retryable ?? RETRYABLE_BY_DEFAULT.has(refused.code);
  return JSON.stringify({ errors: [{ message: refused.message, extensions: { code: refused.code, retryable } }] });
}

/** The headers and body of such a refusal, for node's `writeHead` or a Fetch `Response`. */
export function errorAnswer(refused: Worded, headers: Record<string, string> = {}): { headers: Record<string, string>; body: string } {
  const body = errorBody(refused);
  return {
    headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), ...headers },
    body,
  };
}

/** What a caller is told when the upstream gave no usable answer and did not say why. */
const UNAVAILABLE_MESSAGE = 'El servicio de consulta no está disponible; reintente en unos segundos.';

interface Mapped {
  code: ErrorCode;
  message: string;
}

/** Upstream failure -> gateway code and Spanish message (the contract's error table). */
function mapUpstream(error: UpstreamError): Mapped {
  const upstreamMessage = error.upstreamMessage?.trim() || undefined;
  switch (error.code) {
    case 'UPSTREAM_MISSING_TOKEN':
      return { code: 'UNAUTHENTICATED', message: 'Falta el token de acceso: envíe la cabecera Authorization: Bearer <token>.' };
    case 'UPSTREAM_UNAVAILABLE':
      return {
        code: 'UPSTREAM_UNAVAILABLE',
        message:
          upstreamMessage ??
          ('reason' in error && error.reason === 'timeout'
            ? 'El servicio de consulta no respondió a tiempo; reintente en unos segundos.'
            : UNAVAILABLE_MESSAGE),
      };
    case 'UPSTREAM_INVALID_RESPONSE':
      return { code: 'UPSTREAM_ERROR', message: INVALID_RESPONSE_MESSAGES[(error as UpstreamInvalidResponseError).reason] };
    case 'UPSTREAM_HTTP_ERROR':
      return mapHttp(error as UpstreamHttpError, upstreamMessage);
  }
}

function mapHttp(error: UpstreamHttpError, upstreamMessage: string | undefined): Mapped {
  const mapped = HTTP_REFUSALS[error.reason];
  return {
    code: mapped.code,
    message: upstreamMessage ?? mapped.message ?? `El servicio de consulta respondió con un error inesperado (HTTP ${error.status}).`,
  };
}

/** A 2xx or 3xx the gateway could not use: what the caller is told, and whether it paid. */
const INVALID_RESPONSE_MESSAGES: Record<InvalidResponseReason, string> = {
  record: 'El servicio de consulta devolvió un registro con un formato inesperado.',
  other_document: 'El servicio de consulta devolvió el registro de otro documento; no se muestra.',
  not_json: 'La respuesta del servicio llegó ilegible (la consulta ya se cobró); puede reintentar, con un nuevo cobro.',
  cut_short: 'La respuesta del servicio llegó incompleta (la consulta ya se cobró); puede reintentar, con un nuevo cobro.',
  too_large: 'La respuesta del servicio supera el tamaño máximo que admite el gateway.',
  redirect: 'El servicio de consulta respondió con una redirección, que el gateway no sigue.',
};

/** What each refusal of the upstream becomes, and our message when the upstream sent none. */
const HTTP_REFUSALS: Record<HttpRefusal, { code: ErrorCode; message?: string }> = {
  unauthenticated: { code: 'UNAUTHENTICATED', message: 'El servicio rechazó el token de acceso (inválido o vencido).' },
  forbidden: { code: 'FORBIDDEN', message: 'El plan del token no permite esta consulta.' },
  invalid_input: { code: 'INVALID_INPUT', message: 'El servicio rechazó los datos enviados.' },
  document_not_found: { code: 'DOCUMENT_NOT_FOUND', message: 'No se encontró información para el documento consultado.' },
  quota_exceeded: { code: 'QUOTA_EXCEEDED', message: 'Las consultas restantes del plan no alcanzan para esta operación.' },
  rate_limited: {
    code: 'RATE_LIMITED',
    message: 'El servicio limita la frecuencia de consultas de este token; reintente en unos segundos.',
  },
  upstream_unavailable: { code: 'UPSTREAM_UNAVAILABLE', message: UNAVAILABLE_MESSAGE },
  // Its message names the status.
  other: { code: 'UPSTREAM_ERROR' },
};

/** The GraphQL error for an upstream failure, located where the failing field was. */
export function upstreamToGraphQLError(error: UpstreamError, located?: GraphQLError): GraphQLError {
  const { code, message } = mapUpstream(error);
  const extensions: Record<string, unknown> = {
    code,
    retryable:
      error.upstreamRetryable ?? (error instanceof UpstreamInvalidResponseError ? error.retryable : RETRYABLE_BY_DEFAULT.has(code)),
  };
  // A wait only where waiting helps: throttling, not a plan that ran out.
  if (code === 'RATE_LIMITED' && error instanceof UpstreamHttpError && error.retryAfterSeconds !== undefined)
    extensions['retryAfterSeconds'] = error.retryAfterSeconds;
  if (error.upstreamCode) extensions['upstreamCode'] = error.upstreamCode;
  if (error.status !== undefined) extensions['upstreamStatus'] = error.status;
  return placed(error, located, message, extensions);
}

/**
 * A paid call the gateway itself did not send, located where the failing field was: the
 * signed-in caller's budget could not pay for it or count it, or the operation's
 * MAX_OPERATION_COST could not cover it (a list longer than estimated). Undefined for anything else.
 */
function localRefusalError(cause: unknown, located?: GraphQLError): GraphQLError | undefined {
  if (cause instanceof BudgetUnavailableError) return refusedAt(cause, located, worded('budgetUnavailable'));
  if (cause instanceof BudgetExceededError) {
    const { spent, limit, resetAt } = cause.standing;
    return refusedAt(cause, located, worded('budgetExceeded', { cost: cause.cost, spent, limit, resetAt }), { budget: cause.standing });
  }
  if (cause instanceof PadronRefused) return refusedAt(cause, located, padronWords(cause));
  if (cause instanceof RegisterUnavailableError) return refusedAt(cause, located, worded('registerNotReady', { state: cause.state }));
  if (cause instanceof SunatError) return refusedAt(cause, located, sunatWords(cause));
  if (!(cause instanceof OperationCostError)) return undefined;
  const { cost, spent, limit } = cause;
  return refusedAt(cause, located, worded('callCost', { cost, spent, limit }), { cost: spent + cost, limit });
}

/** The register's refusal in its words: every name it refuses under is one of REFUSALS' (checked here by the compiler). */
function padronWords(refused: PadronRefused): Worded {
  const key: RefusalKey = refused.refusal;
  return (worded as (key: RefusalKey, args: unknown) => Worded)(key, refused.args);
}

/** Why SUNAT's API did not validate, in the caller's words: the credentials, one receipt, or SUNAT down. */
export function sunatWords(error: SunatError): Worded {
  if (error instanceof SunatCredentialsRejected) return worded('sunatCredentialsRejected', { why: error.sunatMessage ?? 'sin detalle' });
  if (error instanceof SunatRefused) return worded('sunatRefusedReceipt', { why: error.sunatMessage });
  return worded('sunatUnavailable', { why: error instanceof SunatUnavailable ? error.reason : error.message });
}

/** A refusal of the gateway's own, for `error`, where `located` was. */
function refusedAt(error: Error, located: GraphQLError | undefined, refused: Worded, more: Record<string, unknown> = {}): GraphQLError {
  const { message, code } = refused;
  return placed(error, located, message, { code, retryable: refused.retryable ?? RETRYABLE_BY_DEFAULT.has(code), ...more });
}

/** `error` as a GraphQL error where `located` was; a chunk's error keeps its own message (which receipts) and its `receipts`. */
function placed(error: Error, located: GraphQLError | undefined, message: string, extensions: Record<string, unknown>): GraphQLError {
  const receipts = located?.extensions?.['receipts'];
  return new GraphQLError(receipts ? located!.message : message, {
    nodes: located?.nodes,
    source: located?.source,
    positions: located?.positions,
    path: located?.path,
    originalError: error,
    extensions: receipts ? { receipts, ...extensions } : extensions,
  });
}

/** The gateway code an upstream failure maps to (undefined for anything else). */
export function upstreamCodeOf(error: unknown): ErrorCode | undefined {
  const cause = rootCause(error);
  return cause instanceof UpstreamError ? mapUpstream(cause).code : undefined;
}

/**
 * The one error of a part of a list that went upstream in its own call and failed, or was
 * never sent after another part's failure that no call could get past: its code as the
 * failure's, and which items it covered (zero-based, `to` included).
 */
export function chunkError(error: unknown, receipts: { from: number; to: number }, unsent: boolean): GraphQLError {
  const cause = rootCause(error);
  const mapped = cause instanceof UpstreamError ? upstreamToGraphQLError(cause) : localRefusalError(cause);
  const code = (mapped?.extensions['code'] as ErrorCode | undefined) ?? 'INTERNAL_SERVER_ERROR';
  const message = `Comprobantes ${receipts.from} a ${receipts.to}: ${unsent ? 'no se enviaron: ' : ''}${mapped?.message ?? 'falla interna del gateway.'}`;
  return new GraphQLError(message, {
    originalError: cause instanceof Error ? cause : undefined,
    extensions: { ...mapped?.extensions, code, retryable: mapped?.extensions['retryable'] ?? false, receipts },
  });
}

/** A paid call the gateway itself did not send: the caller's budget, or the operation's cost limit, refused it. */
export function isLocalRefusal(error: unknown): error is BudgetExceededError | BudgetUnavailableError | OperationCostError {
  const cause = rootCause(error);
  return cause instanceof BudgetExceededError || cause instanceof BudgetUnavailableError || cause instanceof OperationCostError;
}

/** The error under any GraphQL wrapping. */
export function rootCause(error: unknown): unknown {
  let current = error;
  while (current instanceof GraphQLError && current.originalError) current = current.originalError;
  return current;
}

/**
 * Yoga's `maskedErrors.maskError`: upstream failures become their contract code;
 * the gateway's own GraphQL errors pass; anything else is masked as INTERNAL_SERVER_ERROR
 * (with the original only when NODE_ENV=development), in our words rather than Yoga's.
 */
export function maskError(error: unknown, _yogasMessage: string, isDev?: boolean): Error {
  const cause = rootCause(error);
  if (cause instanceof UpstreamError) {
    return upstreamToGraphQLError(cause, error instanceof GraphQLError ? error : undefined);
  }
  const refused = localRefusalError(cause, error instanceof GraphQLError ? error : undefined);
  if (refused) return refused;
  return yogaMaskError(error, INTERNAL_MESSAGE, isDev);
}

/** Adds `code` and `retryable` where an error lacks them (Yoga's and graphql-js's own). */
export function withContract(error: GraphQLError): GraphQLError {
  const ext = error.extensions ?? {};
  const given = typeof ext['code'] === 'string' ? ext['code'] : undefined;
  const known = given !== undefined && given in ERROR_CODES;
  if (known && typeof ext['retryable'] === 'boolean') return error;
  // Yoga's own errors come with a code; one outside ErrorCode (OPERATION_RESOLUTION_FAILURE: the
  // operation asked for is not in the document) is a bad request. What lacks one is
  // graphql-js's: with no path, a request-level input error (variables that fail to coerce);
  // with a path, our own fault.
  const code = known ? given : error.path ? 'INTERNAL_SERVER_ERROR' : given !== undefined ? 'BAD_REQUEST' : 'BAD_USER_INPUT';
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: error.originalError,
    extensions: { ...ext, code, retryable: typeof ext['retryable'] === 'boolean' ? ext['retryable'] : false },
  });
}

/** A result with `code` and `retryable` on every error (a stream is left as it is). */
export function resultWithContract<R>(result: R): R {
  const fix = <T extends { errors?: readonly unknown[] }>(r: T): T =>
    r.errors?.length ? { ...r, errors: r.errors.map((e) => (e instanceof GraphQLError ? withContract(e) : e)) } : r;
  if (Array.isArray(result)) return result.map(fix) as R;
  if (typeof result === 'object' && result !== null && !(Symbol.asyncIterator in result))
    return fix(result as { errors?: readonly unknown[] }) as R;
  return result;
}
