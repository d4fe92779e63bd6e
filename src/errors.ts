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

/**
 * The one place that turns failures into GraphQL errors. Every error the gateway
 * emits carries `extensions.code` (one of ERROR_CODES) and a boolean `extensions.retryable`.
 */
export const ERROR_CODES = {
  INVALID_INPUT: 'Entrada inválida: se rechaza localmente (sin consumir consultas) o la rechazó el servicio (HTTP 400).',
  DOCUMENT_NOT_FOUND: 'El documento consultado no existe en el servicio (HTTP 404).',
  QUOTA_EXCEEDED: 'Las consultas restantes del plan no alcanzan (HTTP 429 quota_exceeded, o el aviso del servicio de que se agotaron).',
  RATE_LIMITED:
    'El servicio limita la frecuencia de consultas del token (HTTP 429 sin quota_exceeded): reintente pasados extensions.retryAfterSeconds. Reintentable.',
  UNAUTHENTICATED:
    'Falta el token Bearer, o el servicio lo rechazó (HTTP 401); con AUTH_JWKS_URL, el JWT de inicio de sesión falta o no es válido (HTTP 401, sin llamar al servicio).',
  AUTH_UNAVAILABLE:
    'Con AUTH_JWKS_URL: el proveedor de identidad no responde y ninguna clave guardada verifica el JWT (HTTP 503, sin llamar al servicio). Reintentable.',
  BUDGET_EXCEEDED:
    'Con AUTH_JWKS_URL: el usuario gastó su presupuesto de consultas del plan (BUDGET_QUERIES por BUDGET_WINDOW_MS); extensions.budget dice cuándo se renueva.',
  BUDGET_UNAVAILABLE:
    'Con AUTH_JWKS_URL y BUDGET_WHEN_STORE_DOWN=refuse: el contador compartido de presupuestos (Redis) no responde; no se llamó al servicio. Reintentable.',
  FORBIDDEN: 'El plan del token no permite la operación (HTTP 403), p. ej. licencias en el plan gratuito.',
  UPSTREAM_UNAVAILABLE:
    'El servicio no está disponible: 503 u otro 5xx, error de red o tiempo agotado antes de una respuesta 2xx. Reintentable.',
  UPSTREAM_ERROR:
    'El servicio respondió algo inutilizable: un 2xx ilegible, incompleto, de otro documento o fuera de esquema (ya cobrado, nunca reintentado), un 3xx u otro 4xx.',
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
    'El gateway atiende ya MAX_CONCURRENT_REQUESTS operaciones, o demasiados documentos nuevos esperan su análisis (HTTP 503 con Retry-After). Reintentable.',
  NOT_FOUND: `La ruta no existe: el endpoint GraphQL es ${GRAPHQL_PATH} (HTTP 404); o la suscripción (webhook) no existe o no es de quien llama.`,
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
    'El padrón que guarda el gateway no está disponible para buscar: PADRON apagado (no reintentable), aún sin importar o más antiguo que PADRON_MAX_AGE_MS (reintentable). No se llamó al servicio.',
  COST_LIMIT_EXCEEDED: 'Más consultas del plan que MAX_OPERATION_COST: la operación, antes de llamar; o el campo cuya llamada lo pasaría.',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

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

/**
 * Why the register, its changes or the subscriptions cannot answer here (REGISTER_UNAVAILABLE): each
 * reason's words and whether trying again may help, written here alone. Never a call to the service.
 */
const REGISTER_UNAVAILABLE = {
  padronOffSearch: [false, 'El gateway no guarda el padrón (PADRON apagado): la búsqueda no consulta al servicio.'],
  padronOffChanges: [false, 'El gateway no guarda el padrón (PADRON apagado): no ve sus cambios.'],
  changesElsewhere: [
    true,
    'Los cambios del padrón no están disponibles en este gateway (su PADRON_DIR lo usa otro, o es de solo lectura).',
  ],
  noSubscriptions: [false, 'Este gateway no guarda suscripciones.'],
  noSubscriptionStore: [false, 'Sin PADRON ni REDIS_URL este gateway no ve cambios del padrón: no guarda suscripciones.'],
  subscriptionsNotOpen: [true, 'Las suscripciones aún no están disponibles en este gateway (su PADRON_DIR no está abierto).'],
  subscriptionStoreDown: [true, 'Las suscripciones no están disponibles ahora (su almacén no responde): reintente.'],
} as const satisfies Record<string, readonly [boolean, string]>;

/** The register's own refusal (./padron/search.ts): it has none that answers yet, and says its state. */
const registerNotReady = (state: string) =>
  `El padrón del gateway no está disponible (${state}): la búsqueda no consulta al servicio. Reintente cuando /health diga ready.`;

/** REGISTER_UNAVAILABLE for `reason`, in its words. */
export function registerUnavailable(reason: keyof typeof REGISTER_UNAVAILABLE): GraphQLError {
  const [retryable, message] = REGISTER_UNAVAILABLE[reason];
  return gatewayError('REGISTER_UNAVAILABLE', message, { retryable });
}

/** What the caller is told of a fault of the gateway itself: nothing more. */
export const INTERNAL_MESSAGE = 'Error interno del gateway.';
/** What a request off the GraphQL path is told. */
export const NOT_FOUND_MESSAGE = `La ruta no existe; el endpoint GraphQL es ${GRAPHQL_PATH}.`;

/** The JSON body of a request refused before any GraphQL work (413, 408, 503, ...): the one writer of such bodies. */
export function errorBody(code: ErrorCode, message: string): string {
  return JSON.stringify({ errors: [{ message, extensions: { code, retryable: RETRYABLE_BY_DEFAULT.has(code) } }] });
}

/** The headers and body of such a refusal, for node's `writeHead` or a Fetch `Response`. */
export function errorAnswer(
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
): { headers: Record<string, string>; body: string } {
  const body = errorBody(code, message);
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

const BUDGET_UNAVAILABLE_MESSAGE =
  'El contador de presupuestos compartido no responde y el gateway no llama al servicio sin él (BUDGET_WHEN_STORE_DOWN=refuse); reintente en unos segundos.';

/**
 * A paid call the gateway itself did not send, located where the failing field was: the
 * signed-in caller's budget could not pay for it or count it, or the operation's
 * MAX_OPERATION_COST could not cover it (a list longer than estimated). Undefined for anything else.
 */
function localRefusalError(cause: unknown, located?: GraphQLError): GraphQLError | undefined {
  if (cause instanceof BudgetUnavailableError)
    return placed(cause, located, BUDGET_UNAVAILABLE_MESSAGE, { code: 'BUDGET_UNAVAILABLE', retryable: true });
  if (cause instanceof BudgetExceededError) {
    const { spent, limit, resetAt } = cause.standing;
    const message = `Su presupuesto no alcanza: esta llamada cuesta ${cause.cost} y lleva ${spent} de ${limit} consultas del plan gastadas; se renueva el ${resetAt}. No se llamó al servicio.`;
    return placed(cause, located, message, { code: 'BUDGET_EXCEEDED', retryable: false, budget: cause.standing });
  }
  if (cause instanceof PadronRefused) return placed(cause, located, cause.message, { code: 'INVALID_INPUT', retryable: false });
  if (cause instanceof RegisterUnavailableError)
    return placed(cause, located, registerNotReady(cause.state), { code: 'REGISTER_UNAVAILABLE', retryable: true });
  if (!(cause instanceof OperationCostError)) return undefined;
  const { cost, spent, limit } = cause;
  const message = `Esta llamada costaría ${cost} consultas del plan y la operación ya gastó ${spent} de ${limit} (MAX_OPERATION_COST): no se hizo. Pida menos en una operación.`;
  return placed(cause, located, message, { code: 'COST_LIMIT_EXCEEDED', retryable: false, cost: spent + cost, limit });
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
