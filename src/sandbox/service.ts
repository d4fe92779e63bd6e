import { BRANCHES, LICENCES, PERSONS, REPRESENTATIVES, TAXPAYERS, TRIGGERS, type SandboxTokenPlan, type TriggerName } from './data.js';
import { detail, fail, fromLine, fromObject, ok, slowTaxpayer, summary, type Answer, type Receipt } from './records.js';
import { SPEC_MAX_RECEIPTS, SPEC_PRICE, SPEC_PRICE_PER_RECEIPT } from './prices.js';
import { isRealDate, rateAnswer } from './rates.js';
import type { FaultKind, SandboxFaults } from './types.js';

/** The path prefix of the legacy base URL (`https://apiperu.dev/api`), served alike. */
export const LEGACY_PREFIX = '/api';

const TRIGGER_BY_KEY = new Map<string, TriggerName>(
  Object.entries(TRIGGERS).flatMap(([name, keys]) => Object.values(keys).map((key) => [key, name as TriggerName] as const)),
);
const TAXPAYERS_BY_RUC = new Map(TAXPAYERS.map((t) => [t.ruc, t]));
const LICENCES_BY_NUMBER = new Map(LICENCES.map((l) => [l.num_licencia, l]));
const PERSONS_BY_DNI = new Map(PERSONS.map((p) => [p.numero, p]));
/** A rate published after any date asked. */
const LATER_RATE = { fecha_sunat: '2999-12-31', compra: 3.5, venta: 3.51 };
/** The body field that holds a lookup's key; a RUC for any other lookup. */
const KEY_FIELD: Readonly<Record<string, string>> = { '/licencia-conducir': 'num_licencia', '/dni': 'dni', '/tipo-de-cambio': 'fecha' };

/** What a lookup finds for `key` (the slow trigger's key finds a record too), or its 404. */
function found(op: string, key: string, slow: boolean, body: Record<string, unknown>, faults: SandboxFaults): Answer {
  switch (op) {
    case '/dni': {
      const person = PERSONS_BY_DNI.get(key) ?? (slow ? { ...PERSONS[0]!, numero: key } : undefined);
      return person ? ok(person) : fail(404, 'document_not_found', 'No se encontraron registros para el DNI indicado.');
    }
    case '/tipo-de-cambio':
      return rateAnswer(key, body['moneda'], slow);
    case '/licencia-conducir': {
      const holder = LICENCES_BY_NUMBER.get(key) ?? (slow ? { ...LICENCES[0]!, num_licencia: key } : undefined);
      return holder ? ok(holder) : fail(404, 'document_not_found', 'No se encontró información para la licencia indicada.');
    }
  }
  const taxpayer = TAXPAYERS_BY_RUC.get(key) ?? (slow ? slowTaxpayer(key) : undefined);
  if (!taxpayer) return fail(404, 'document_not_found', 'El RUC no existe');
  if (op === '/ruc-representantes') {
    const many = key.startsWith('20') ? faults.representativesPerCompany : undefined;
    return ok(many === undefined ? (REPRESENTATIVES[key] ?? []) : manyRepresentatives(key, many));
  }
  if (op === '/ruc-establecimientos-anexos') return ok(BRANCHES[key] ?? []);
  return ok(op === '/ruc' ? summary(taxpayer) : detail(taxpayer));
}

/** `n` attorneys of a company, each with a DNI of its own (as a bank lists its apoderados). */
function manyRepresentatives(ruc: string, n: number): Record<string, string>[] {
  return Array.from({ length: n }, (_, i) => ({
    tipo_de_documento: 'DNI',
    numero_de_documento: String(40_000_000 + (Number(ruc.slice(2, 10)) % 1000) * 1000 + i).padStart(8, '0'),
    nombre: `APODERADO ${i + 1}`,
    cargo: 'APODERADO',
    fecha_desde: '01/01/2020',
  }));
}

/**
 * What the REST service answers, as rest-api.md describes it, with no HTTP around it: routes,
 * tokens and their plans' quotas, the spec's prices (./prices.ts), sample records, trigger values
 * for every failure, and the faults a test switches on.
 */
/** The `Retry-After` of the throttled trigger, in seconds, unless a test sets another. */
export const THROTTLE_RETRY_AFTER_S = 30;

export class RestService {
  readonly #plans: Map<string, SandboxTokenPlan>;
  readonly #slowMs: number;
  /** Faults switched on at run time (Sandbox.setFaults). */
  faults: SandboxFaults = {};

  constructor(tokens: readonly SandboxTokenPlan[], slowMs: number) {
    this.#plans = new Map(tokens.map((p) => [p.token, { ...p }]));
    this.#slowMs = slowMs;
  }

  quotaOf(token: string): number | undefined {
    return this.#plans.get(token)?.quota;
  }

  setQuota(token: string, quota: number): void {
    const plan = this.#plans.get(token);
    if (plan) plan.quota = quota;
  }

  #triggered(name: TriggerName, answer: () => Answer, token: string, cost: number, body?: Record<string, unknown>): Answer {
    // Every 2xx is billed, whatever its body, as the real service bills it.
    const billed = (a: Answer): Answer => this.#charge(token, cost) ?? a;
    switch (name) {
      case 'unavailable':
        return fail(503, 'upstream_unavailable', 'El servicio de consulta no está disponible, vuelva a intentarlo en unos segundos.', true);
      case 'badGateway':
        return { status: 502, raw: '<html><body><h1>502 Bad Gateway</h1></body></html>', contentType: 'text/html' };
      case 'slow':
        return { ...answer(), delayMs: this.#slowMs };
      case 'brokenBody':
        return billed({ status: 200, raw: '{"success":true,"code":"found","data":{"ruc":"2060', contentType: 'application/json' });
      case 'badRecord':
        return billed(ok({ ruc: 12345, estado: ['ACTIVO'] }));
      case 'otherDocument':
        // Another taxpayer, licence and person, and a rate of a date to come: another document's record whatever was asked.
        return billed(ok({ ...LICENCES[0]!, ...summary(TAXPAYERS[0]!), ...detail(TAXPAYERS[0]!), ...PERSONS[0]!, ...LATER_RATE }));
      case 'redirect':
        return { status: 302, raw: '<html>Moved</html>', contentType: 'text/html', headers: { location: 'http://127.0.0.1:9/login' } };
      case 'noContent':
        return billed({ status: 204, raw: '' });
      case 'hugeCount': {
        const answered = answer();
        const data = (answered.json as { data?: { comprobantes?: unknown[] } } | undefined)?.data;
        return data?.comprobantes ? ok({ ...data, cantidad_de_comprobantes: 2 ** 31 }) : answered;
      }
      case 'echoesToken': {
        // With SOL credentials (a v2 batch), some services quote them back too.
        const sol =
          body?.['sol_usuario'] === undefined
            ? ''
            : ` Usuario SOL ${String(body['sol_usuario'])}, clave ${String(body['clave_usuario'])}, empresa ${String(body['ruc_empresa'])}.`;
        return fail(400, 'invalid_input', `El token ${token} no puede consultar este documento.${sol}`);
      }
      case 'rejected':
        return fail(400, 'invalid_input', 'El RUC es incorrecto');
      case 'notFoundWithoutCode':
        return billed({ status: 200, json: { success: false, message: 'No se encontraron registros' } });
      case 'planDenied':
        return { status: 200, json: { success: false, code: 'PLAN_DENIED', message: 'Su plan no incluye esta consulta.' } };
      case 'planExhausted':
        return { status: 200, json: { success: false, message: 'Ha superado la cantidad de consultas mensuales' } };
      case 'throttled':
        return {
          status: 429,
          json: { message: 'Too Many Attempts.' },
          headers: this.faults.retryAfter === null ? {} : { 'retry-after': String(this.faults.retryAfter ?? THROTTLE_RETRY_AFTER_S) },
        };
      case 'otherClientError':
        return fail(422, 'unprocessable_entity', 'La solicitud no se pudo procesar.');
      case 'reset':
        return { status: 0, reset: true };
      case 'notFound':
        return answer();
    }
  }

  #charge(token: string, cost: number): Answer | undefined {
    const plan = this.#plans.get(token)!;
    if (plan.quota < cost) {
      return fail(429, 'quota_exceeded', `Le quedan ${plan.quota} consultas y la solicitud requiere ${cost}. Actualice su plan.`);
    }
    plan.quota -= cost;
    return undefined;
  }

  #lookup(op: string, token: string, body: Record<string, unknown>): Answer {
    const field = KEY_FIELD[op] ?? 'ruc';
    const key = typeof body[field] === 'string' ? (body[field] as string).trim() : '';
    const rejected = this.#rejected(op, token, key, body);
    if (rejected) return rejected;
    const trigger = TRIGGER_BY_KEY.get(key);
    const answer = (): Answer => this.#charge(token, SPEC_PRICE[op]!) ?? found(op, key, trigger === 'slow', body, this.faults);
    return trigger ? this.#triggered(trigger, answer, token, SPEC_PRICE[op]!) : answer();
  }

  /** The service's own checks of a lookup's input, before any charge. */
  #rejected(op: string, token: string, key: string, body: Record<string, unknown>): Answer | undefined {
    switch (op) {
      case '/dni':
        return /^\d{8}$/.test(key) ? undefined : fail(400, 'invalid_input', 'El DNI es incorrecto');
      case '/tipo-de-cambio':
        if (!isRealDate(key)) return fail(400, 'invalid_input', 'La fecha es incorrecta');
        return body['moneda'] === undefined || body['moneda'] === 'USD' ? undefined : fail(400, 'invalid_input', 'Moneda no soportada');
      case '/licencia-conducir':
        if (!key) return fail(400, 'invalid_input', 'El parámetro num_licencia es requerido');
        return this.#plans.get(token)!.plan === 'free'
          ? fail(403, 'plan_not_allowed', 'La consulta de licencias de conducir no está disponible en el plan gratuito.')
          : undefined;
      default:
        if (!/^(10|15|16|17|20)\d{9}$/.test(key)) return fail(400, 'invalid_input', 'El RUC es incorrecto');
        // As the service has refused the branches lookup to a plan without it (upstream-notes).
        return op === '/ruc-establecimientos-anexos' && this.#plans.get(token)!.plan === 'free'
          ? fail(403, 'PLAN_DENIED', 'Su plan no incluye la consulta de establecimientos anexos.')
          : undefined;
    }
  }

  #batch(op: string, token: string, body: Record<string, unknown>): Answer {
    const list = body['comprobantes'];
    if (!Array.isArray(list) || list.length === 0) return fail(400, 'invalid_input', 'El parámetro comprobantes es requerido');
    if (list.length > SPEC_MAX_RECEIPTS) return fail(400, 'invalid_input', `Enviar máximo ${SPEC_MAX_RECEIPTS} comprobantes por consulta.`);
    const receipts = list.map((item) => (op.endsWith('-v2') ? fromLine(item) : fromObject(item)));
    if (receipts.some((r) => r === undefined)) return fail(400, 'invalid_input', 'Comprobante con formato incorrecto');
    const issuerTrigger = receipts.map((r) => TRIGGER_BY_KEY.get(r!.ruc_emisor)).find((n) => n && n !== 'notFound');
    const answer = (): Answer => {
      const refused = this.#charge(token, SPEC_PRICE_PER_RECEIPT * receipts.length);
      if (refused) return refused;
      const comprobantes = receipts.map((r) => ({
        serie_documento: r!.serie_documento,
        numero_documento: r!.numero_documento,
        // The -v2 variant spells the issuer's state `empresa_estado_description`, as the service also does.
        ...this.#receiptState(r!, op.endsWith('-v2') ? 'description' : 'descripcion'),
      }));
      return ok({ cantidad_de_comprobantes: comprobantes.length, comprobantes });
    };
    return issuerTrigger ? this.#triggered(issuerTrigger, answer, token, receipts.length, body) : answer();
  }

  /** A receipt's state as the real service answers it: its code and text, and the issuer's state and condition. */
  #receiptState(r: Receipt, spelling: 'descripcion' | 'description') {
    const issuer = TAXPAYERS_BY_RUC.get(r.ruc_emisor);
    const state = (codigo: string, descripcion: string, observaciones: unknown[]) => ({
      comprobante_estado_codigo: codigo,
      comprobante_estado_descripcion: descripcion,
      empresa_estado_codigo: issuer ? (issuer.estado === 'ACTIVO' ? '00' : '01') : '-',
      [`empresa_estado_${spelling}`]: issuer?.estado ?? '-',
      empresa_condicion_codigo: issuer ? (issuer.condicion === 'HABIDO' ? '00' : '12') : '-',
      empresa_condicion_descripcion: issuer?.condicion ?? '-',
      observaciones,
    });
    if (!issuer) return state('0', 'NO EXISTE', ['El emisor no figura en el padrón.']);
    if (Number(r.total) === 0) return state('-', 'RECHAZADO', ['El importe total es cero.']);
    if (r.numero_documento.endsWith('0')) return state('2', 'ANULADO', []);
    if (r.codigo_tipo_documento === '07' || r.codigo_tipo_documento === '08') {
      return state('1', 'ACEPTADO', [{ codigo: '4287', descripcion: 'Nota vinculada a un comprobante de referencia' }]);
    }
    if (r.codigo_tipo_documento === 'R1') return state('3', 'AUTORIZADO', []);
    return state('1', 'ACEPTADO', []);
  }

  /** The fault this call gets, if any: `failNext` first, then each rate in turn. */
  #fault(token: string, cost: number): Answer | undefined {
    const billed = (a: Answer): Answer => this.#charge(token, cost) ?? a;
    if (this.faults.sourcesDown) return fail(503, 'upstream_unavailable', 'Las fuentes de consulta no están disponibles.', true);
    if (this.faults.failNext && this.faults.failNext > 0) {
      this.faults.failNext--;
      return fail(503, 'upstream_unavailable', 'Servicio no disponible (falla inyectada).', true);
    }
    for (const [kind, rate] of Object.entries(this.faults.rates ?? {}) as [FaultKind, number][]) {
      if (Math.random() >= rate) continue;
      switch (kind) {
        case 'unavailable':
          return fail(503, 'upstream_unavailable', 'Servicio no disponible (falla inyectada).', true);
        case 'serverError':
          return fail(500, 'internal_error', 'Error interno (falla inyectada).');
        case 'reset':
          return { status: 0, reset: true };
        case 'notJson':
          return billed({ status: 200, raw: '<html><body>Mantenimiento</body></html>', contentType: 'text/html' });
        case 'truncated':
          return billed({ status: 200, raw: '{"success":true,"code":"found","data":{"ruc":"20100', contentType: 'application/json' });
        case 'oversized':
          return billed(ok({ ruc: '20100123453', nombre_o_razon_social: 'X'.repeat(5 * 1024 * 1024) }));
        case 'badRecord':
          return billed(ok({ nombre_o_razon_social: null, actividades_economicas: 'no es una lista' }));
      }
    }
    return undefined;
  }

  /** The answer to one call: `path` without its query string, `authorization` the header as sent. */
  answer(method: string | undefined, path: string, authorization: string | undefined, body: unknown): Answer {
    const op = path.startsWith(`${LEGACY_PREFIX}/`) ? path.slice(LEGACY_PREFIX.length) : path;
    const known = [...Object.keys(SPEC_PRICE), '/validacion-multiple-cpe', '/validacion-multiple-cpe-v2'];
    if (!known.includes(op)) return fail(404, 'not_found', 'Ruta no encontrada');
    if (method !== 'POST') return fail(405, 'method_not_allowed', 'Use POST');
    const auth = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
    if (!auth) return fail(401, 'unauthenticated', 'Token de acceso requerido.');
    if (!this.#plans.has(auth[1]!)) return fail(401, 'invalid_token', 'Token inválido o vencido.');
    const list = (body as { comprobantes?: unknown } | null)?.comprobantes;
    const injected = this.#fault(
      auth[1]!,
      op.startsWith('/validacion') ? SPEC_PRICE_PER_RECEIPT * (Array.isArray(list) ? list.length : 0) : SPEC_PRICE[op]!,
    );
    if (injected) return injected;
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      return fail(400, 'invalid_input', 'El cuerpo debe ser un objeto JSON');
    const fields = body as Record<string, unknown>;
    const answer = op.startsWith('/validacion') ? this.#batch(op, auth[1]!, fields) : this.#lookup(op, auth[1]!, fields);
    const slower = this.faults.pathLatencyMs?.[op];
    return slower ? { ...answer, delayMs: (answer.delayMs ?? 0) + slower } : answer;
  }
}
