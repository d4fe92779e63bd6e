import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import { MissingTokenError, UpstreamHttpError, UpstreamInvalidResponseError, UpstreamUnavailableError } from './errors.js';
import {
  EnvelopeSchema,
  LicenciaRecordSchema,
  RucRecordSchema,
  RucSunatRecordSchema,
  ValidacionRecordSchema,
  type ComprobanteBody,
  type CredencialesSol,
  type LicenciaRecord,
  type RucRecord,
  type RucSunatRecord,
  type ValidacionRecord,
} from './schemas.js';

export interface UpstreamClientOptions {
  /** Base URL; may carry a path prefix, as the legacy `https://apiperu.dev/api` does. */
  baseUrl: string;
  /** Time-out of one lookup call (whole call: connect, headers and body). @default 10000 */
  timeoutMs?: number;
  /** Time-out of one batch validation call. @default 60000 */
  batchTimeoutMs?: number;
  /** Keep-alive connections per origin. @default 64 */
  connections?: number;
  /** Largest answer body read; a larger one is treated as unusable. @default 1048576 */
  maxResponseBytes?: number;
  /** Called after every call that reached the network, for logs and metrics. Receives no token or body. */
  onCall?: (call: UpstreamCallInfo) => void;
}

export interface UpstreamCallInfo {
  path: string;
  status: number | undefined;
  durationMs: number;
  outcome: 'ok' | 'error';
  errorKind?: string;
}

/**
 * The REST client. One undici keep-alive pool per upstream origin, shared by every
 * request the gateway serves; the caller's token is passed per call and never stored.
 */
export class UpstreamClient {
  readonly origin: string;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #batchTimeoutMs: number;
  readonly #maxResponseBytes: number;
  readonly #onCall: UpstreamClientOptions['onCall'];
  readonly #pool: Pool;

  constructor(options: UpstreamClientOptions) {
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw new TypeError(`baseUrl must be an absolute URL, got ${JSON.stringify(options.baseUrl)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new TypeError(`baseUrl must be http or https, got ${url.protocol}`);
    }
    if (url.username || url.password || url.search || url.hash) {
      throw new TypeError('baseUrl must not carry credentials, a query or a fragment');
    }
    this.origin = url.origin;
    this.#prefix = url.pathname.replace(/\/+$/, '');
    this.#timeoutMs = positive(options.timeoutMs ?? 10_000, 'timeoutMs');
    this.#batchTimeoutMs = positive(options.batchTimeoutMs ?? 60_000, 'batchTimeoutMs');
    this.#maxResponseBytes = positive(options.maxResponseBytes ?? 1024 * 1024, 'maxResponseBytes');
    this.#onCall = options.onCall;
    this.#pool = new Pool(this.origin, {
      connections: positive(options.connections ?? 64, 'connections'),
      // One request per connection: the upstream is a plain HTTP/1.1 API and pipelining
      // would let one slow lookup hold up the ones queued behind it.
      pipelining: 1,
      keepAliveTimeout: 30_000,
    });
  }

  /** POST /ruc: summary record. Costs 1 query. */
  ruc(ruc: string, token: string | undefined): Promise<RucRecord> {
    return this.#post('/ruc', { ruc }, token, RucRecordSchema, this.#timeoutMs);
  }

  /** POST /ruc-sunat: detailed record. Costs 1 query. */
  rucSunat(ruc: string, token: string | undefined): Promise<RucSunatRecord> {
    return this.#post('/ruc-sunat', { ruc }, token, RucSunatRecordSchema, this.#timeoutMs);
  }

  /** POST /licencia-conducir: licence holder. Costs 2 queries. */
  licencia(numLicencia: string, token: string | undefined): Promise<LicenciaRecord> {
    return this.#post('/licencia-conducir', { num_licencia: numLicencia }, token, LicenciaRecordSchema, this.#timeoutMs);
  }

  /** POST /validacion-multiple-cpe: 1 query per receipt. */
  validarComprobantes(comprobantes: readonly ComprobanteBody[], token: string | undefined): Promise<ValidacionRecord> {
    return this.#post('/validacion-multiple-cpe', { comprobantes }, token, ValidacionRecordSchema, this.#batchTimeoutMs);
  }

  /** POST /validacion-multiple-cpe-v2: each receipt one `ruc|tipo|serie|numero|fecha|total` line. */
  validarComprobantesTexto(
    lineas: readonly string[],
    credenciales: CredencialesSol | undefined,
    token: string | undefined,
  ): Promise<ValidacionRecord> {
    const body: Record<string, unknown> = { comprobantes: lineas };
    if (credenciales) {
      body['ruc_empresa'] = credenciales.rucEmpresa;
      body['sol_usuario'] = credenciales.usuario;
      body['clave_usuario'] = credenciales.clave;
    }
    return this.#post('/validacion-multiple-cpe-v2', body, token, ValidacionRecordSchema, this.#batchTimeoutMs);
  }

  /** Closes the pool after the calls in flight finish. */
  close(): Promise<void> {
    return this.#pool.close();
  }

  async #post<S extends z.ZodType>(
    path: string,
    body: unknown,
    token: string | undefined,
    schema: S,
    timeoutMs: number,
  ): Promise<z.output<S>> {
    if (!token) throw new MissingTokenError(path);
    const started = performance.now();
    let status: number | undefined;
    try {
      const signal = AbortSignal.timeout(timeoutMs);
      let response: Dispatcher.ResponseData;
      let text: string;
      try {
        response = await this.#pool.request({
          method: 'POST',
          path: this.#prefix + path,
          headers: {
            accept: 'application/json',
            'content-type': 'application/json',
            authorization: `Bearer ${token}`,
          },
          body: JSON.stringify(body),
          signal,
        });
        status = response.statusCode;
        text = await readText(response.body, this.#maxResponseBytes, path);
      } catch (error) {
        if (error instanceof UpstreamUnavailableError) throw error;
        throw new UpstreamUnavailableError({ path, reason: signal.aborted ? 'timeout' : 'network', status, cause: error });
      }
      const record = interpret(path, status, text, schema);
      this.#onCall?.({ path, status, durationMs: performance.now() - started, outcome: 'ok' });
      return record;
    } catch (error) {
      const kind = error instanceof Error && 'kind' in error ? String(error.kind) : 'unknown';
      this.#onCall?.({ path, status, durationMs: performance.now() - started, outcome: 'error', errorKind: kind });
      throw error;
    }
  }
}

/** Turns one answer (status and body text) into the record, or into the error it means. */
function interpret<S extends z.ZodType>(path: string, status: number, text: string, schema: S): z.output<S> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // A 4xx keeps its meaning without a body (a 401 is a 401); a 2xx or 5xx without JSON is unusable.
    if (status >= 400 && status < 500) throw new UpstreamHttpError({ path, status });
    throw new UpstreamUnavailableError({ path, reason: status >= 500 ? 'status' : 'not_json', status });
  }
  const envelope = EnvelopeSchema.safeParse(json);
  const ok = status >= 200 && status < 300;
  if (!envelope.success) {
    if (ok) throw new UpstreamInvalidResponseError({ path, status, issues: issuesOf(envelope.error) });
    if (status >= 500) throw new UpstreamUnavailableError({ path, reason: 'status', status });
    throw new UpstreamHttpError({ path, status });
  }
  const { success, code, retryable, message, data } = envelope.data;
  if (!ok || !success) {
    const fields = { path, status, upstreamCode: code, upstreamRetryable: retryable, upstreamMessage: message };
    if (status >= 500) throw new UpstreamUnavailableError({ ...fields, reason: 'status' });
    throw new UpstreamHttpError(fields);
  }
  const record = schema.safeParse(data);
  if (!record.success) throw new UpstreamInvalidResponseError({ path, status, issues: issuesOf(record.error) });
  return record.data;
}

function issuesOf(error: z.ZodError): string[] {
  return error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.code}`);
}

async function readText(body: Dispatcher.ResponseData['body'], limit: number, path: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      body.destroy();
      throw new UpstreamUnavailableError({ path, reason: 'too_large' });
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

function positive(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`${name} must be a positive number, got ${value}`);
  return value;
}
