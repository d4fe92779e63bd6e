import { DEFAULTS } from '../config.js';
import { errors, Pool, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { Unreadable, type Reader } from './reader.js';
import {
  isSuccessStatus,
  isUpstreamError,
  UpstreamError,
  UpstreamHttpError,
  UpstreamInvalidResponseError,
  UpstreamUnavailableError,
} from './errors.js';
import { honouredRetryAfterMs, scrubbed } from './messages.js';
import { MAX_RESPONSE_BYTES } from './options.js';
import { EnvelopeSchema } from './schemas.js';

export interface OriginOptions {
  /** Base URL; may carry a path prefix, as the legacy `https://apiperu.dev/api` does. */
  baseUrl: string;
  /** Keep-alive connections to this origin, opened as demand needs them. @default UPSTREAM_CONNECTIONS' default */
  connections?: number;
  /** Largest answer body read; a larger one is treated as unusable. @default 1048576 */
  maxResponseBytes?: number;
  /** The longest `Retry-After` honoured. @default UPSTREAM_RETRY_AFTER_MAX_MS' default */
  retryAfterMaxMs?: number;
}

/** What one call that reached the network did; carries no token and no body. */
export interface UpstreamCallInfo {
  path: string;
  origin: 'primary' | 'fallback';
  /** 1 for the first try of a lookup, 2 for its first retry, ... */
  attempt: number;
  status: number | undefined;
  durationMs: number;
  outcome: 'ok' | 'error';
  errorKind?: string;
  /** Plan queries this call spent: its cost when answered 2xx or 404, else 0. */
  queries: number;
}

export interface PostOptions {
  /** The call's time-out: the shorter of its own and what is left of the lookup's deadline. */
  timeoutMs: number;
  /** What else the call carries that the upstream may quote back and nobody may read (SOL credentials). */
  secrets?: readonly string[] | undefined;
}

/**
 * One upstream origin: a keep-alive undici pool, the path prefix, and the reading of
 * answers into records or typed errors. Knows nothing of retries or GraphQL.
 */
export class Origin {
  readonly url: string;
  readonly #prefix: string;
  readonly #pool: Pool;
  readonly #origin: string;
  readonly #retryAfterMaxMs: number;

  constructor(options: OriginOptions) {
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
    this.#prefix = url.pathname.replace(/\/+$/, '');
    this.url = url.origin + this.#prefix;
    this.#origin = url.origin;
    const maxResponseBytes = positive(options.maxResponseBytes ?? MAX_RESPONSE_BYTES, 'maxResponseBytes');
    this.#retryAfterMaxMs = positive(options.retryAfterMaxMs ?? DEFAULTS.upstream.retryAfterMaxMs, 'retryAfterMaxMs');
    this.#pool = new Pool(url.origin, {
      connections: positive(options.connections ?? DEFAULTS.upstream.connections, 'connections'),
      // One request per connection: the upstream is a plain HTTP/1.1 API and pipelining
      // would let one slow lookup hold up the ones queued behind it.
      pipelining: 1,
      keepAliveTimeout: 30_000,
      // Every call has its own time-out (below), which covers headers and body alike. undici's
      // own would start a "fast timer" per request that its timer list keeps for up to a
      // second after the call, long enough to be promoted to the old generation.
      headersTimeout: 0,
      bodyTimeout: 0,
      // A larger body ends the call as ResponseExceededMaxSizeError (Call.onResponseError).
      maxResponseSize: maxResponseBytes,
    });
  }

  /**
   * POSTs `body` as JSON with the spec's headers and returns the parsed record, or throws an
   * UpstreamError.
   *
   * Through undici's dispatch handler rather than `pool.request()`: the answer's bytes are
   * gathered as they arrive, under the size limit, with no Readable stream, async iterator or
   * AbortSignal per call (a measured gain: docs/performance.md). The time-out is
   * one timer that aborts the call through its dispatch controller. An explicit timer, too,
   * because on Node 20 `AbortSignal.timeout()` held only by `AbortSignal.any()` can be
   * garbage-collected before it fires (test/upstream/client.test.ts keeps that from coming back).
   */
  post<T>(path: string, body: unknown, token: string, read: Reader<T>, options: PostOptions): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const call = new Call(path, read, resolve, reject, options.timeoutMs, token, options.secrets, this.#retryAfterMaxMs);
      this.#pool.dispatch(
        {
          origin: this.#origin,
          method: 'POST',
          path: this.#prefix + path,
          headers: { accept: 'application/json', 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify(body),
        },
        call,
      );
    });
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}

/**
 * One call in flight, and undici's dispatch handler for it: the answer's bytes gathered (to the
 * size limit), the time-out, and the settling of the call's promise; state in fields rather than
 * closures, which would be allocations per call.
 */
class Call<T> implements Dispatcher.DispatchHandler {
  #controller: Dispatcher.DispatchController | undefined;
  /** undici is about to write the request on a connection: from here on the upstream may receive (and bill) it. */
  #sent = false;
  /** A throttling 429's `Retry-After`, as honoured, in ms. */
  retryAfterMs: number | undefined;
  #status: number | undefined;
  #settled = false;
  #chunks: Buffer[] = [];
  #size = 0;
  readonly #timer: NodeJS.Timeout;

  constructor(
    readonly path: string,
    readonly read: Reader<T>,
    readonly resolve: (record: T) => void,
    readonly reject: (error: Error) => void,
    timeoutMs: number,
    /** The caller's token, to be scrubbed from whatever the upstream says back. */
    readonly token: string,
    /** The call's other secrets, scrubbed likewise; and the longest `Retry-After` honoured. */
    readonly secrets: readonly string[] | undefined,
    readonly retryAfterMaxMs: number,
  ) {
    this.#timer = setTimeout(onTimeout, timeoutMs, this);
  }

  /** The time-out fired: the call fails now; still queued in the pool, it is aborted as soon as it starts. */
  timedOut(): void {
    const error = this.#interrupted('timeout');
    this.#fail(error);
    this.#controller?.abort(error);
  }

  /**
   * The call stopped before its answer was whole. Once a 2xx status has arrived the call was
   * billed: the body was cut short, and asking again is the caller's choice, not ours.
   */
  #interrupted(reason: 'timeout' | 'network', cause?: unknown): UpstreamError {
    const status = this.#status;
    if (isSuccessStatus(status)) {
      return new UpstreamInvalidResponseError({ path: this.path, status, reason: 'cut_short', cause });
    }
    return new UpstreamUnavailableError({ path: this.path, reason, status, cause, sent: this.#sent });
  }

  #fail(error: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    this.reject(error);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    // Timed out while it waited in the pool: aborted here, never written.
    if (this.#settled) return controller.abort(new UpstreamUnavailableError({ path: this.path, reason: 'timeout', sent: false }));
    this.#sent = true;
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    // 1xx answers come before the real one.
    if (statusCode >= 200) this.#status = statusCode;
    // Throttling says when to come back; read only then.
    if (statusCode === 429) {
      const header = headers['retry-after'];
      this.retryAfterMs = honouredRetryAfterMs(Array.isArray(header) ? header[0] : header, this.retryAfterMaxMs);
    }
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    this.#size += chunk.length;
    this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    // Nearly every answer arrives in one chunk: no copy then.
    const chunks = this.#chunks;
    const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.#size);
    // Read here rather than in a `.then()` after: one promise and one hop fewer per call.
    const status = this.#status ?? 0;
    try {
      this.resolve(interpret(this, status, bytes.toString('utf8')));
    } catch (error) {
      // Anything else a reading throws (a record nested past the stack, say) is still an unusable answer.
      this.reject(
        isUpstreamError(error) ? error : new UpstreamInvalidResponseError({ path: this.path, status, reason: 'record', cause: error }),
      );
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (error instanceof errors.ResponseExceededMaxSizeError) return this.#fail(this.#tooLarge());
    this.#fail(error instanceof UpstreamError ? error : this.#interrupted('network', error));
  }

  /** A body over the limit: a 2xx was billed and is unusable; anything else is no answer. */
  #tooLarge(): UpstreamError {
    const status = this.#status;
    return isSuccessStatus(status)
      ? new UpstreamInvalidResponseError({ path: this.path, status, reason: 'too_large' })
      : new UpstreamUnavailableError({ path: this.path, reason: 'too_large', status });
  }
}

/** setTimeout's callback, shared by every call (the call comes as its argument, so no closure per call). */
function onTimeout(call: { timedOut(): void }): void {
  call.timedOut();
}

/** What `interpret` needs of a call: where it went, how to read its record, and what to scrub from a message. */
interface Asked<T> {
  readonly path: string;
  readonly read: Reader<T>;
  readonly token: string;
  readonly secrets: readonly string[] | undefined;
  readonly retryAfterMs: number | undefined;
}

/** Turns one answer (status and body text) into the record, or into the error it means. */
function interpret<T>({ path, read, token, secrets, retryAfterMs }: Asked<T>, status: number, text: string): T {
  // Redirects are not followed: the REST API has none, and a proxy's login page is no record.
  if (status >= 300 && status < 400) throw new UpstreamInvalidResponseError({ path, status, reason: 'redirect' });
  let json: unknown;
  try {
    json = read.parse ? read.parse(text) : JSON.parse(text);
  } catch {
    // A 4xx keeps its meaning without a body (a 401 is a 401); a 5xx without JSON is unavailable;
    // a 2xx without JSON (204 included) was billed and is unusable.
    if (status >= 400 && status < 500) throw new UpstreamHttpError({ path, status, retryAfterMs });
    if (status >= 500) throw new UpstreamUnavailableError({ path, reason: 'status', status });
    throw new UpstreamInvalidResponseError({ path, status, reason: 'not_json' });
  }
  const envelope = EnvelopeSchema.safeParse(json);
  const ok = isSuccessStatus(status);
  if (!envelope.success) {
    if (ok) throw new UpstreamInvalidResponseError({ path, status, reason: 'record', issues: issuesOf(envelope.error) });
    if (status >= 500) throw new UpstreamUnavailableError({ path, reason: 'status', status });
    // A framework's own body (a rate limiter's `{"message": "Too Many Attempts."}`): its message, scrubbed, is kept.
    const said = typeof (json as { message?: unknown } | null)?.message === 'string' ? (json as { message: string }).message : undefined;
    throw new UpstreamHttpError({ path, status, upstreamMessage: said && scrubbed(said, token, secrets), retryAfterMs });
  }
  const { success, code, retryable, message, data } = envelope.data;
  if (!ok || !success) {
    const said = message && scrubbed(message, token, secrets);
    const fields = { path, status, upstreamCode: code, upstreamRetryable: retryable, upstreamMessage: said, retryAfterMs };
    if (status >= 500) throw new UpstreamUnavailableError({ ...fields, reason: 'status' });
    throw new UpstreamHttpError(fields);
  }
  const record = read(data);
  if (record instanceof Unreadable) throw new UpstreamInvalidResponseError({ path, status, reason: 'record', issues: record.issues });
  return record;
}

function issuesOf(error: z.ZodError): string[] {
  return error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.code}`);
}

export function positive(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`${name} must be a positive number, got ${value}`);
  return value;
}
