import { refusalInMessage } from './messages.js';

/**
 * Every way an upstream call can fail, as one small tree of typed errors, each class with one
 * stable `code` (as undici's `UND_ERR_*`) that callers branch on without instanceof chains, and
 * structured fields (a `reason` says which case of its class). Nothing here knows GraphQL
 * (src/errors.ts maps these to the gateway's error codes).
 */
export const UPSTREAM_ERROR_CODES = {
  UPSTREAM_MISSING_TOKEN: 'missing_token',
  UPSTREAM_HTTP_ERROR: 'http',
  UPSTREAM_UNAVAILABLE: 'unavailable',
  UPSTREAM_INVALID_RESPONSE: 'invalid_response',
} as const;
export type UpstreamErrorCode = keyof typeof UPSTREAM_ERROR_CODES;
/** The short name of a code, as metrics and logs label it: derived, never stored. */
export type UpstreamErrorKind = (typeof UPSTREAM_ERROR_CODES)[UpstreamErrorCode];

export abstract class UpstreamError extends Error {
  abstract readonly code: UpstreamErrorCode;
  /** The code's short name, for metric labels and log fields. */
  get kind(): UpstreamErrorKind {
    return UPSTREAM_ERROR_CODES[this.code];
  }
  /** REST path that was (or would have been) called, e.g. `/ruc`. */
  readonly path: string;
  /** HTTP status of the answer, when there was one. */
  readonly status: number | undefined;
  /** The envelope's `code`, when the upstream sent one. */
  readonly upstreamCode: string | undefined;
  /** The envelope's own boolean `retryable`, when sent; it wins over any default. */
  readonly upstreamRetryable: boolean | undefined;
  /** The envelope's Spanish `message`, when sent. */
  readonly upstreamMessage: string | undefined;

  constructor(
    message: string,
    fields: {
      path: string;
      status?: number | undefined;
      upstreamCode?: string | undefined;
      upstreamRetryable?: boolean | undefined;
      upstreamMessage?: string | undefined;
      cause?: unknown;
    },
  ) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.path = fields.path;
    this.status = fields.status;
    this.upstreamCode = fields.upstreamCode;
    this.upstreamRetryable = fields.upstreamRetryable;
    this.upstreamMessage = fields.upstreamMessage;
  }
}

/** The caller sent no bearer token: refused before any network I/O, so it costs no query. */
export class MissingTokenError extends UpstreamError {
  readonly code = 'UPSTREAM_MISSING_TOKEN';
  override readonly name = 'MissingTokenError';
  constructor(path: string) {
    super(`no bearer token for ${path}; no call made`, { path });
  }
}

/** The upstream answered with an error: a non-2xx status, or a 2xx envelope with success=false. */
export class UpstreamHttpError extends UpstreamError {
  readonly code = 'UPSTREAM_HTTP_ERROR';
  override readonly name = 'UpstreamHttpError';
  /** What the answer means, read from its status and the envelope's code (`refusalOf`). */
  readonly reason: HttpRefusal;
  /** Not an answer to this call: an earlier refusal of the same token (or operation) repeated, and no call made. */
  readonly withoutCall: boolean;
  /** A throttling 429's `Retry-After` as honoured (bounded: `honouredRetryAfterMs`), in ms from when it came. */
  readonly retryAfterMs: number | undefined;
  constructor(fields: {
    path: string;
    status: number;
    upstreamCode?: string | undefined;
    upstreamRetryable?: boolean | undefined;
    upstreamMessage?: string | undefined;
    withoutCall?: boolean | undefined;
    retryAfterMs?: number | undefined;
  }) {
    const said = `${fields.status} ${fields.upstreamCode ?? '(no code)'}`;
    super(
      fields.withoutCall ? `upstream ${fields.path} not called: it answered ${said} before` : `upstream ${fields.path} answered ${said}`,
      fields,
    );
    this.reason = refusalOf(fields.status, fields.upstreamCode, fields.upstreamMessage);
    this.withoutCall = fields.withoutCall ?? false;
    this.retryAfterMs = fields.retryAfterMs;
  }

  /** The wait honoured, in whole seconds rounded up (`extensions.retryAfterSeconds`). */
  get retryAfterSeconds(): number | undefined {
    return this.retryAfterMs === undefined ? undefined : Math.ceil(this.retryAfterMs / 1000);
  }

  /** `refusal` again for a call to `path` that is not made. */
  static repeated(refusal: UpstreamHttpError, path: string, retryAfterMs = refusal.retryAfterMs): UpstreamHttpError {
    const { status, upstreamCode, upstreamRetryable, upstreamMessage } = refusal;
    return new UpstreamHttpError({
      path,
      status: status ?? 0,
      upstreamCode,
      upstreamRetryable,
      upstreamMessage,
      withoutCall: true,
      retryAfterMs,
    });
  }
}

/**
 * What an error answer of the upstream means: the spec's codes (section 7), a 401 or 403, a
 * throttling 429, or something else.
 */
export type HttpRefusal =
  | 'unauthenticated'
  | 'forbidden'
  | 'invalid_input'
  | 'document_not_found'
  | 'quota_exceeded'
  | 'rate_limited'
  | 'upstream_unavailable'
  | 'other';

/** The spec's codes, each with the status it comes with. */
const SPEC_CODES: Readonly<Record<string, { status: number; refusal: HttpRefusal }>> = {
  invalid_input: { status: 400, refusal: 'invalid_input' },
  document_not_found: { status: 404, refusal: 'document_not_found' },
  quota_exceeded: { status: 429, refusal: 'quota_exceeded' },
  upstream_unavailable: { status: 503, refusal: 'upstream_unavailable' },
};

/**
 * Codes the service puts on a refusal of an operation the plan does not include, at 403 or at
 * 200 with `success: false` (upstream-notes: `PLAN_DENIED`, seen for the branches lookup).
 */
const PLAN_REFUSALS: ReadonlySet<string> = new Set(['plan_denied', 'plan_not_allowed']);

/**
 * The one reading of an error answer's status, with its envelope's code and message (the real
 * service sends some refusals with a message alone: ./messages.ts): src/errors.ts maps the
 * result, never a status.
 */
export function refusalOf(status: number, upstreamCode: string | undefined, message?: string): HttpRefusal {
  // 401 and 403 mean the same whatever code the upstream puts on them.
  if (status === 401) return 'unauthenticated';
  if (status === 403) return 'forbidden';
  if (isSuccessStatus(status) && upstreamCode && PLAN_REFUSALS.has(upstreamCode.toLowerCase())) return 'forbidden';
  // A code counts with its own status; a 2xx with success=false has only its code to go by.
  const known = upstreamCode && Object.hasOwn(SPEC_CODES, upstreamCode) ? SPEC_CODES[upstreamCode] : undefined;
  if (known && (status === known.status || isSuccessStatus(status))) return known.refusal;
  // A 429 that does not say the plan ran out is throttling, as web frameworks' rate limiters answer.
  if (status === 429) return refusalInMessage(message) === 'quota_exceeded' ? 'quota_exceeded' : 'rate_limited';
  // Without a code, a 2xx refusal's message says what it is, when it is one the table knows.
  if (isSuccessStatus(status) && !upstreamCode) return refusalInMessage(message) ?? 'other';
  return 'other';
}

/**
 * Why no usable answer came. The last two are refusals of the gateway's own, made without a
 * call: an open breaker, a client that left.
 */
export type UnavailableReason = 'network' | 'timeout' | 'status' | 'too_large' | 'breaker_open' | 'client_gone';

/** Refused here, without a call: says nothing of the origin's health, and is not retried. */
export const REFUSED_WITHOUT_CALL: ReadonlySet<UnavailableReason> = new Set(['breaker_open', 'client_gone']);

/** The upstream could not be reached or gave no usable answer; worth retrying later. */
export class UpstreamUnavailableError extends UpstreamError {
  readonly code = 'UPSTREAM_UNAVAILABLE';
  override readonly name = 'UpstreamUnavailableError';
  readonly reason: UnavailableReason;
  /**
   * The request went out (or may have): the upstream may have received it, and billed it. False
   * only when it never left: a refusal here, a connection that could not be made, a time-out
   * while it still waited in the pool. An answer (a 5xx) was always sent.
   */
  readonly sent: boolean;
  constructor(fields: {
    path: string;
    reason: UnavailableReason;
    /** @default false for a refusal here, else true (the conservative side: it may have been billed) */
    sent?: boolean | undefined;
    status?: number | undefined;
    upstreamCode?: string | undefined;
    upstreamRetryable?: boolean | undefined;
    upstreamMessage?: string | undefined;
    cause?: unknown;
  }) {
    super(`upstream ${fields.path} unavailable: ${fields.reason}${fields.status ? ` (${fields.status})` : ''}`, fields);
    this.reason = fields.reason;
    this.sent = fields.sent ?? !REFUSED_WITHOUT_CALL.has(fields.reason);
  }

  /**
   * Whether the upstream certainly did not process (nor bill) the call: it was never sent, or
   * the upstream answered in its own envelope that the same request may be repeated (its 503
   * `upstream_unavailable`). Only such a call may be sent again, to the same origin or another.
   * A time-out or a reset after sending, or a 5xx without that word (a proxy's page), may have
   * been billed.
   */
  get unprocessed(): boolean {
    return !this.sent || (this.upstreamCode !== undefined && this.upstreamRetryable === true);
  }
}

/**
 * Why an answer the upstream gave could not be used. A 2xx was billed whatever its body,
 * so none of these is retried by the gateway: the caller decides, knowing it pays again.
 * - `record`: the envelope or record breaks the schema (asking again gets the same).
 * - `other_document`: the record is another RUC's or licence's than the one asked.
 * - `not_json`: a 2xx body that is empty or not JSON (204, an HTML page, JSON cut short).
 * - `cut_short`: the body stopped (reset or time-out) after a 2xx status arrived.
 * - `too_large`: a 2xx body over the size limit.
 * - `redirect`: a 3xx, never followed.
 */
export type InvalidResponseReason = 'record' | 'other_document' | 'not_json' | 'cut_short' | 'too_large' | 'redirect';

/** Asking again can help only where the body was damaged on the way. */
const RETRYABLE_REASONS: ReadonlySet<InvalidResponseReason> = new Set(['not_json', 'cut_short']);

/** An answer (2xx or 3xx) the gateway cannot use; never retried, never cached. */
export class UpstreamInvalidResponseError extends UpstreamError {
  readonly code = 'UPSTREAM_INVALID_RESPONSE';
  override readonly name = 'UpstreamInvalidResponseError';
  readonly reason: InvalidResponseReason;
  /** Where the record broke, as zod paths: field names only, never values. */
  readonly issues: readonly string[];
  constructor(fields: { path: string; status: number; reason: InvalidResponseReason; issues?: readonly string[]; cause?: unknown }) {
    const detail = fields.issues?.length ? `: ${fields.issues.join('; ')}` : '';
    super(`upstream ${fields.path} answered ${fields.status} with an unusable body (${fields.reason})${detail}`, fields);
    this.reason = fields.reason;
    this.issues = fields.issues ?? [];
  }

  /** Whether asking again (and paying again) can help. */
  get retryable(): boolean {
    return RETRYABLE_REASONS.has(this.reason);
  }
}

/** A 2xx: the upstream answered the call, and billed it whatever the body. */
export function isSuccessStatus(status: number | undefined): status is number {
  return status !== undefined && status >= 200 && status < 300;
}

export function isUpstreamError(error: unknown): error is UpstreamError {
  return error instanceof UpstreamError;
}

/** An upstream failure as plain data, to hand to callers in other processes that joined the call. */
export interface UpstreamErrorData {
  /** The code's short name: the format kept in shared stores, which other versions read (src/data/cache.ts's KEY_PREFIX). */
  kind: UpstreamErrorKind;
  path: string;
  status?: number | undefined;
  upstreamCode?: string | undefined;
  upstreamRetryable?: boolean | undefined;
  upstreamMessage?: string | undefined;
  reason?: string | undefined;
  sent?: boolean | undefined;
  issues?: readonly string[] | undefined;
  retryAfterMs?: number | undefined;
}

export function upstreamErrorData(error: UpstreamError): UpstreamErrorData {
  const { kind, path, status, upstreamCode, upstreamRetryable, upstreamMessage } = error;
  const reason = error instanceof UpstreamUnavailableError || error instanceof UpstreamInvalidResponseError ? error.reason : undefined;
  const issues = error instanceof UpstreamInvalidResponseError ? error.issues : undefined;
  const sent = error instanceof UpstreamUnavailableError ? error.sent : undefined;
  const retryAfterMs = error instanceof UpstreamHttpError ? error.retryAfterMs : undefined;
  return { kind, path, status, upstreamCode, upstreamRetryable, upstreamMessage, reason, sent, issues, retryAfterMs };
}

/** The same failure again, from `upstreamErrorData`. */
export function upstreamErrorFrom(data: UpstreamErrorData): UpstreamError {
  switch (data.kind) {
    case 'http':
      return new UpstreamHttpError({ ...data, status: data.status ?? 0 });
    case 'unavailable':
      return new UpstreamUnavailableError({ ...data, reason: (data.reason ?? 'network') as UnavailableReason });
    case 'invalid_response':
      return new UpstreamInvalidResponseError({
        path: data.path,
        status: data.status ?? 0,
        reason: (data.reason ?? 'record') as InvalidResponseReason,
        issues: data.issues,
      });
    case 'missing_token':
      return new MissingTokenError(data.path);
  }
}
