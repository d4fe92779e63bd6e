import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_TOKENS, LICENCES, TAXPAYERS, TRIGGERS, type TriggerName } from './data.js';
import { detail, fail, fromLine, fromObject, ok, slowTaxpayer, summary, type Answer, type Receipt } from './records.js';
import { Outbox } from './outbox.js';
import { SPEC_MAX_RECEIPTS, SPEC_PRICE, SPEC_PRICE_PER_RECEIPT } from './prices.js';
import type { FaultKind, RecordedCall, Sandbox, SandboxFaults, SandboxOptions } from './types.js';

export type { FaultKind, RecordedCall, Sandbox, SandboxFaults, SandboxOptions } from './types.js';

/**
 * The built-in REST double: a real node:http server that follows rest-api.md with
 * sample data, a plan quota per token, trigger values for every failure, and a record
 * of the calls it received for tests to assert on.
 */

const LEGACY_PREFIX = '/api';
const MAX_BODY = 1024 * 1024;

const TRIGGER_BY_KEY = new Map<string, TriggerName>(
  Object.entries(TRIGGERS).flatMap(([name, keys]) => [
    [keys.ruc, name as TriggerName],
    [keys.licencia, name as TriggerName],
  ]),
);

export function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const plans = new Map((options.tokens ?? DEFAULT_TOKENS).map((p) => [p.token, { ...p }]));
  const slowMs = options.slowMs ?? 3000;
  const latencyMs = options.latencyMs ?? 0;
  let faults: SandboxFaults = {};
  let inFlight = 0;
  let peakInFlight = 0;
  let callCount = 0;
  const record = options.record ?? true;
  const maxRecorded = Math.max(1, options.maxRecorded ?? 10_000);
  const calls: RecordedCall[] = [];
  const taxpayers = new Map(TAXPAYERS.map((t) => [t.ruc, t]));
  const licences = new Map(LICENCES.map((l) => [l.num_licencia, l]));

  function triggered(name: TriggerName, answer: () => Answer, token: string, cost: number): Answer {
    // Every 2xx is billed, whatever its body, as the real service bills it.
    const billed = (a: Answer): Answer => charge(token, cost) ?? a;
    switch (name) {
      case 'unavailable':
        return fail(503, 'upstream_unavailable', 'El servicio de consulta no está disponible, vuelva a intentarlo en unos segundos.', true);
      case 'badGateway':
        return { status: 502, raw: '<html><body><h1>502 Bad Gateway</h1></body></html>', contentType: 'text/html' };
      case 'slow':
        return { ...answer(), delayMs: slowMs };
      case 'brokenBody':
        return billed({ status: 200, raw: '{"success":true,"code":"found","data":{"ruc":"2060', contentType: 'application/json' });
      case 'badRecord':
        return billed(ok({ ruc: 12345, estado: ['ACTIVO'] }));
      case 'otherDocument':
        return billed(ok({ ...LICENCES[0]!, ...summary(TAXPAYERS[0]!), ...detail(TAXPAYERS[0]!) }));
      case 'redirect':
        return { status: 302, raw: '<html>Moved</html>', contentType: 'text/html', headers: { location: 'http://127.0.0.1:9/login' } };
      case 'noContent':
        return billed({ status: 204, raw: '' });
      case 'hugeCount': {
        const answered = answer();
        const data = (answered.json as { data?: { comprobantes?: unknown[] } } | undefined)?.data;
        return data?.comprobantes ? ok({ ...data, cantidad_de_comprobantes: 2 ** 31 }) : answered;
      }
      case 'echoesToken':
        return fail(400, 'invalid_input', `El token ${token} no puede consultar este documento.`);
      case 'rejected':
        return fail(400, 'invalid_input', 'El RUC es incorrecto');
      case 'otherClientError':
        return fail(422, 'unprocessable_entity', 'La solicitud no se pudo procesar.');
      case 'reset':
        return { status: 0, reset: true };
      case 'notFound':
        return answer();
    }
  }

  function charge(token: string, cost: number): Answer | undefined {
    const plan = plans.get(token)!;
    if (plan.quota < cost) {
      return fail(429, 'quota_exceeded', `Le quedan ${plan.quota} consultas y la solicitud requiere ${cost}. Actualice su plan.`);
    }
    plan.quota -= cost;
    return undefined;
  }

  function lookup(op: string, token: string, body: Record<string, unknown>): Answer {
    const keyField = op === '/licencia-conducir' ? 'num_licencia' : 'ruc';
    const key = typeof body[keyField] === 'string' ? (body[keyField] as string).trim() : '';
    if (op === '/licencia-conducir') {
      if (!key) return fail(400, 'invalid_input', 'El parámetro num_licencia es requerido');
      if (plans.get(token)!.plan === 'free') {
        return fail(403, 'plan_not_allowed', 'La consulta de licencias de conducir no está disponible en el plan gratuito.');
      }
    } else if (!/^(10|15|16|17|20)\d{9}$/.test(key)) {
      return fail(400, 'invalid_input', 'El RUC es incorrecto');
    }
    const answer = (): Answer => {
      const refused = charge(token, SPEC_PRICE[op]!);
      if (refused) return refused;
      if (op === '/licencia-conducir') {
        const holder = licences.get(key) ?? (TRIGGER_BY_KEY.get(key) === 'slow' ? { ...LICENCES[0]!, num_licencia: key } : undefined);
        return holder ? ok(holder) : fail(404, 'document_not_found', 'No se encontró información para la licencia indicada.');
      }
      const taxpayer = taxpayers.get(key) ?? (TRIGGER_BY_KEY.get(key) === 'slow' ? slowTaxpayer(key) : undefined);
      if (!taxpayer) return fail(404, 'document_not_found', 'El RUC no existe');
      return ok(op === '/ruc' ? summary(taxpayer) : detail(taxpayer));
    };
    const trigger = TRIGGER_BY_KEY.get(key);
    return trigger ? triggered(trigger, answer, token, SPEC_PRICE[op]!) : answer();
  }

  function batch(op: string, token: string, body: Record<string, unknown>): Answer {
    const list = body['comprobantes'];
    if (!Array.isArray(list) || list.length === 0) return fail(400, 'invalid_input', 'El parámetro comprobantes es requerido');
    if (list.length > SPEC_MAX_RECEIPTS) return fail(400, 'invalid_input', `Enviar máximo ${SPEC_MAX_RECEIPTS} comprobantes por consulta.`);
    const receipts = list.map((item) => (op.endsWith('-v2') ? fromLine(item) : fromObject(item)));
    if (receipts.some((r) => r === undefined)) return fail(400, 'invalid_input', 'Comprobante con formato incorrecto');
    const issuerTrigger = receipts.map((r) => TRIGGER_BY_KEY.get(r!.ruc_emisor)).find((n) => n && n !== 'notFound');
    const answer = (): Answer => {
      const refused = charge(token, SPEC_PRICE_PER_RECEIPT * receipts.length);
      if (refused) return refused;
      const comprobantes = receipts.map((r) => ({
        serie_documento: r!.serie_documento,
        numero_documento: r!.numero_documento,
        ...receiptState(r!),
      }));
      return ok({ cantidad_de_comprobantes: comprobantes.length, comprobantes });
    };
    return issuerTrigger ? triggered(issuerTrigger, answer, token, receipts.length) : answer();
  }

  function receiptState(r: Receipt): { comprobante_estado_descripcion: string; observaciones: unknown[] } {
    if (!taxpayers.has(r.ruc_emisor)) {
      return { comprobante_estado_descripcion: 'NO EXISTE', observaciones: ['El emisor no figura en el padrón.'] };
    }
    if (Number(r.total) === 0) return { comprobante_estado_descripcion: 'RECHAZADO', observaciones: ['El importe total es cero.'] };
    if (r.numero_documento.endsWith('0')) return { comprobante_estado_descripcion: 'ANULADO', observaciones: [] };
    if (r.codigo_tipo_documento === '07' || r.codigo_tipo_documento === '08') {
      return {
        comprobante_estado_descripcion: 'ACEPTADO',
        observaciones: [{ codigo: '4287', descripcion: 'Nota vinculada a un comprobante de referencia' }],
      };
    }
    return { comprobante_estado_descripcion: 'ACEPTADO', observaciones: [] };
  }

  /** The fault this call gets, if any: `failNext` first, then each rate in turn. */
  function fault(token: string, cost: number): Answer | undefined {
    const billed = (a: Answer): Answer => charge(token, cost) ?? a;
    if (faults.failNext && faults.failNext > 0) {
      faults.failNext--;
      return fail(503, 'upstream_unavailable', 'Servicio no disponible (falla inyectada).', true);
    }
    for (const [kind, rate] of Object.entries(faults.rates ?? {}) as [FaultKind, number][]) {
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

  function route(req: IncomingMessage, body: unknown): Answer {
    const path = (req.url ?? '/').split('?')[0]!;
    const op = path.startsWith(`${LEGACY_PREFIX}/`) ? path.slice(LEGACY_PREFIX.length) : path;
    const known = ['/ruc', '/ruc-sunat', '/licencia-conducir', '/validacion-multiple-cpe', '/validacion-multiple-cpe-v2'];
    if (!known.includes(op)) return fail(404, 'not_found', 'Ruta no encontrada');
    if (req.method !== 'POST') return fail(405, 'method_not_allowed', 'Use POST');
    const auth = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    if (!auth) return fail(401, 'unauthenticated', 'Token de acceso requerido.');
    if (!plans.has(auth[1]!)) return fail(401, 'invalid_token', 'Token inválido o vencido.');
    const list = (body as { comprobantes?: unknown } | null)?.comprobantes;
    const injected = fault(
      auth[1]!,
      op.startsWith('/validacion') ? SPEC_PRICE_PER_RECEIPT * (Array.isArray(list) ? list.length : 0) : SPEC_PRICE[op]!,
    );
    if (injected) return injected;
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      return fail(400, 'invalid_input', 'El cuerpo debe ser un objeto JSON');
    const fields = body as Record<string, unknown>;
    const answer = op.startsWith('/validacion') ? batch(op, auth[1]!, fields) : lookup(op, auth[1]!, fields);
    const slower = faults.pathLatencyMs?.[op];
    return slower ? { ...answer, delayMs: (answer.delayMs ?? 0) + slower } : answer;
  }

  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/__sandbox/stats') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ calls: callCount }));
      return;
    }
    callCount++;
    inFlight++;
    peakInFlight = Math.max(peakInFlight, inFlight);
    res.once('close', () => inFlight--);
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Recorded as raw text; route() answers 400.
      }
      const answer = size > MAX_BODY ? fail(413, 'payload_too_large', 'Cuerpo demasiado grande') : route(req, body);
      // Bounded: a sandbox left running (npm start's) must not keep every call it ever saw.
      if (record && calls.length >= maxRecorded) calls.splice(0, calls.length - maxRecorded + 1);
      if (record)
        calls.push({
          method: req.method ?? '',
          path: (req.url ?? '').split('?')[0]!,
          headers: req.headers,
          body,
          status: answer.status,
          remotePort: req.socket.remotePort,
        });
      send(res, answer);
    });
  });

  // Keep-alive sockets would hold close() open; track them to end them on close.
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const outbox = new Outbox();
  const send = (res: ServerResponse, answer: Answer) =>
    outbox.send(res, answer, (answer.delayMs ?? 0) + latencyMs + (faults.latencyMs ?? 0), {
      until: faults.gatherInFlight,
      peak: peakInFlight,
    });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      const host = options.host ?? '127.0.0.1';
      resolve({
        url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
        calls,
        get peakInFlight() {
          return peakInFlight;
        },
        get callCount() {
          return callCount;
        },
        callsTo: (path) => calls.filter((c) => c.path === path || c.path === LEGACY_PREFIX + path),
        quotaOf: (token) => plans.get(token)?.quota,
        setQuota: (token, quota) => {
          const plan = plans.get(token);
          if (plan) plan.quota = quota;
        },
        setFaults: (next) => {
          faults = { ...next, rates: { ...next.rates } };
        },
        reset: () => {
          calls.length = 0;
          callCount = 0;
          peakInFlight = inFlight;
        },
        close: () =>
          new Promise<void>((done) => {
            outbox.clear();
            server.close(() => done());
            for (const s of sockets) s.destroy();
          }),
      });
    });
  });
}
