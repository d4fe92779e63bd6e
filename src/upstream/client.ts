import { REST } from './paths.js';
import { DEFAULTS } from '../config.js';
import { RECEIPT_PRICE, queriesSpent } from './billing.js';
import { isBrokenCircuitError, type CircuitBreakerPolicy } from 'cockatiel';
import { setTimeout as sleep } from 'node:timers/promises';
import { createBreaker, stateName, type BreakerState } from './breaker.js';
import { FairShare } from './fair-share.js';
import { Throttles } from './throttles.js';
import { lookupCall, type RestCall, type Route } from './rest-call.js';
import type { LookupOp, RecordOf } from './lookups.js';
import { MissingTokenError, UpstreamInvalidResponseError, UpstreamUnavailableError, isUpstreamError } from './errors.js';
import { Origin, positive, type UpstreamCallInfo } from './origin.js';
import { isRetryable, withRetries } from './retry.js';
import { readValidacionRecord, type ComprobanteBody, type CredencialesSol, type ValidacionRecord } from './schemas.js';

import type { UpstreamCaller, UpstreamClientOptions } from './options.js';
import type { OperationSpend } from './spend.js';

export type { UpstreamCallInfo } from './origin.js';
export type { UpstreamCaller, UpstreamClientOptions } from './options.js';
export type { BreakerState } from './breaker.js';

/**
 * The REST client: the lookups of ./lookups.ts and the batch validations, over one primary origin and an optional fallback.
 * Lookups are retried (retryable failures only, exponential backoff with full jitter, one
 * deadline) and go to the fallback when the primary is unavailable; batch validations are
 * never retried nor sent elsewhere (each try would bill every receipt again). Each origin
 * has its own circuit breaker.
 */
export class UpstreamClient {
  readonly #routes: Route[];
  readonly #timeoutMs: number;
  readonly #batchTimeoutMs: number;
  readonly #retries: number;
  readonly #deadlineMs: number;
  readonly #onCall: UpstreamClientOptions['onCall'];
  readonly #share: FairShare;
  readonly #throttles = new Throttles();

  constructor(options: UpstreamClientOptions) {
    this.#timeoutMs = positive(options.timeoutMs ?? DEFAULTS.upstream.timeoutMs, 'timeoutMs');
    this.#batchTimeoutMs = positive(options.batchTimeoutMs ?? DEFAULTS.upstream.batchTimeoutMs, 'batchTimeoutMs');
    this.#deadlineMs = positive(options.deadlineMs ?? DEFAULTS.upstream.deadlineMs, 'deadlineMs');
    this.#retries = options.retries ?? DEFAULTS.upstream.retries;
    if (!Number.isInteger(this.#retries) || this.#retries < 0)
      throw new TypeError(`retries must be a whole number >= 0, got ${this.#retries}`);
    this.#onCall = options.onCall;
    // Every call holds one of the upstream's connections while it is out: they are the places shared.
    this.#share = new FairShare(positive(options.connections ?? DEFAULTS.upstream.connections, 'connections'));

    const route = (name: Route['name'], baseUrl: string): Route => {
      const origin = new Origin({
        baseUrl,
        connections: options.connections ?? DEFAULTS.upstream.connections,
        maxResponseBytes: options.maxResponseBytes,
        retryAfterMaxMs: options.retryAfterMaxMs,
      });
      const breaker = createBreaker(options.breaker ?? DEFAULTS.upstream.breaker, (state) =>
        options.onBreakerChange?.({ origin: name, url: origin.url, state }),
      );
      return { name, origin, breaker };
    };
    this.#routes = [route('primary', options.baseUrl)];
    if (options.fallbackUrl) this.#routes.push(route('fallback', options.fallbackUrl));
  }

  /** Calls holding a connection now, and calls waiting for one. */
  get load(): { inFlight: number; waiting: number } {
    return this.#share.load;
  }

  /** One lookup (a row of ./lookups.ts) of one key, checked already. */
  lookup<Op extends LookupOp>(op: Op, key: string, ctx: UpstreamCaller): Promise<RecordOf<Op>> {
    return this.#lookup(lookupCall(op, key), ctx);
  }

  /** POST /validacion-multiple-cpe: billed per receipt. */
  validarComprobantes(comprobantes: readonly ComprobanteBody[], ctx: UpstreamCaller): Promise<ValidacionRecord> {
    return this.#batch(
      {
        path: REST.validacion,
        body: { comprobantes },
        read: readValidacionRecord,
        cost: RECEIPT_PRICE * comprobantes.length,
      },
      ctx,
    );
  }

  /** POST /validacion-multiple-cpe-v2: each receipt one `ruc|tipo|serie|numero|fecha|total` line. */
  validarComprobantesTexto(
    lineas: readonly string[],
    credenciales: CredencialesSol | undefined,
    ctx: UpstreamCaller,
  ): Promise<ValidacionRecord> {
    const { rucEmpresa, usuario, clave } = credenciales ?? {};
    const sol = credenciales ? { ruc_empresa: rucEmpresa, sol_usuario: usuario, clave_usuario: clave } : {};
    const body = { comprobantes: lineas, ...sol };
    // Whatever the upstream quotes of them back is scrubbed before anyone reads it.
    const secrets = credenciales && [credenciales.rucEmpresa, credenciales.usuario, credenciales.clave];
    return this.#batch({ path: REST.validacionTexto, body, read: readValidacionRecord, cost: RECEIPT_PRICE * lineas.length, secrets }, ctx);
  }

  /** Breaker state of each origin, for readiness checks. */
  breakers(): { origin: 'primary' | 'fallback'; url: string; state: BreakerState }[] {
    return this.#routes.map((r) => ({ origin: r.name, url: r.origin.url, state: stateName(r.breaker.state) }));
  }

  /** Closes every pool after the calls in flight finish. */
  async close(): Promise<void> {
    await Promise.all(this.#routes.map((r) => r.origin.close()));
  }

  #lookup<T>(req: RestCall<T>, ctx: UpstreamCaller): Promise<T> {
    if (!ctx.token) return Promise.reject(new MissingTokenError(req.path));
    const token = ctx.token;
    const deadlineAt = performance.now() + this.#deadlineMs;
    // The first attempt, nearly every lookup's only one, makes no closure for further attempts.
    const first = this.#attempt(req, token, ctx, 1, deadlineAt);
    if (this.#retries === 0) return first;
    return first.catch((error: unknown) =>
      withRetries({ retries: this.#retries, deadlineAt, isRetryable }, error, (n) => this.#attempt(req, token, ctx, n, deadlineAt)),
    );
  }

  /** Attempt `n` of a lookup: with one origin, the call itself, with no frame of its own around it. */
  #attempt<T>(req: RestCall<T>, token: string, ctx: UpstreamCaller, n: number, deadlineAt: number): Promise<T> {
    const routes = this.#routes;
    return routes.length === 1
      ? this.#call(routes[0]!, req, token, ctx, n, this.#timeoutMs, deadlineAt)
      : this.#acrossRoutes(req, token, ctx, n, deadlineAt);
  }

  /** One attempt over the origins in order: only an unavailable origin sends the lookup on. */
  async #acrossRoutes<T>(req: RestCall<T>, token: string, ctx: UpstreamCaller, n: number, deadlineAt: number) {
    let lastError: unknown;
    for (const route of this.#routes) {
      try {
        return await this.#call(route, req, token, ctx, n, this.#timeoutMs, deadlineAt);
      } catch (error) {
        // A 4xx (or a bad record) is final, and so is a call the primary may have billed. An open
        // breaker refuses without a call: that is when the fallback matters most.
        if (!(error instanceof UpstreamUnavailableError) || !error.unprocessed) throw error;
        lastError = error;
      }
    }
    throw lastError;
  }

  #batch(req: RestCall<ValidacionRecord>, ctx: UpstreamCaller): Promise<ValidacionRecord> {
    if (!ctx.token) return Promise.reject(new MissingTokenError(req.path));
    return this.#call(this.#routes[0]!, req, ctx.token, ctx, 1, this.#batchTimeoutMs, performance.now() + this.#batchTimeoutMs);
  }

  /**
   * One call, once its caller has a place among the upstream's connections (at once, nearly
   * always). Its time-out is the shorter of `timeoutMs` and what is left until `deadlineAt`.
   */
  #call<T>(
    route: Route,
    req: RestCall<T>,
    token: string,
    ctx: UpstreamCaller,
    attempt: number,
    timeoutMs: number,
    deadlineAt: number,
  ): Promise<T> {
    // Nobody waits for this answer any more: not sent, and not paid for.
    if (ctx.signal?.aborted) return Promise.reject(new UpstreamUnavailableError({ path: req.path, reason: 'client_gone' }));
    // Refused already in this request (a rejected token): the same answer, with no call.
    const refused = ctx.refusals?.refusal(req.path);
    if (refused) return Promise.reject(refused);
    const caller = ctx.caller ?? '';
    // The caller's token is throttled: the call waits it out without a call, or is refused at once.
    const throttled = this.#throttles.before(ctx.throttledAs ?? caller, req.path, deadlineAt);
    if (throttled && 'refusal' in throttled) return Promise.reject(throttled.refusal);
    if (throttled) return sleep(throttled.waitMs).then(() => this.#call(route, req, token, ctx, attempt, timeoutMs, deadlineAt));
    if (this.#share.enter(caller))
      return this.#send(route, req, token, ctx, attempt, caller, Math.max(1, Math.min(timeoutMs, deadlineAt - performance.now())));
    // Every place is taken: the call waits for its caller's turn, and still may not be sent.
    return this.#share.wait(caller).then(() => {
      const left = deadlineAt - performance.now();
      if (ctx.signal?.aborted || left <= 0) {
        this.#share.leave(caller);
        throw new UpstreamUnavailableError({ path: req.path, reason: ctx.signal?.aborted ? 'client_gone' : 'timeout', sent: false });
      }
      const refusedMeanwhile = ctx.refusals?.refusal(req.path);
      if (refusedMeanwhile) {
        this.#share.leave(caller);
        throw refusedMeanwhile;
      }
      return this.#send(route, req, token, ctx, attempt, caller, Math.max(1, Math.min(timeoutMs, left)));
    });
  }

  /** The call itself, its place taken: sent, read, reported, and its place given back. */
  #send<T>(
    route: Route,
    req: RestCall<T>,
    token: string,
    ctx: UpstreamCaller,
    attempt: number,
    caller: string,
    timeoutMs: number,
  ): Promise<T> {
    const spend = ctx.spend;
    // Past the operation's MAX_OPERATION_COST: not sent, its place given back.
    if (spend && !spend.mayTake(req.cost)) return Promise.reject(this.#notSent(req, caller, undefined, spend.refusal(req.cost)));
    const started = performance.now();
    let finish: ((info: UpstreamCallInfo) => void) | undefined;
    const report = (status: number | undefined, error?: unknown) => {
      this.#share.leave(caller);
      const info: UpstreamCallInfo = {
        path: req.path,
        origin: route.name,
        attempt,
        status,
        durationMs: performance.now() - started,
        outcome: error ? 'error' : 'ok',
        ...(error ? { errorKind: isUpstreamError(error) ? error.kind : 'unknown' } : {}),
        queries: queriesSpent(req.cost, status, error),
      };
      spend?.giveBack(req.cost - info.queries);
      this.#onCall?.(info);
      ctx.observe?.(info);
      finish?.(info);
    };
    // A promise chain rather than an async function: one suspended frame fewer per call.
    return route.breaker
      .execute(() => {
        // Inside the breaker: an open one refuses before any call (or span) starts.
        finish = ctx.onCallStart?.({ path: req.path, origin: route.name, attempt });
        return route.origin.post(req.path, req.body, token, req.read, { timeoutMs, secrets: req.secrets });
      })
      .then(
        (record) => {
          if (req.isOther?.(record)) {
            // Billed, and wrong: shown to nobody, kept nowhere, not asked again.
            const error = new UpstreamInvalidResponseError({ path: req.path, status: 200, reason: 'other_document' });
            report(200, error);
            throw error;
          }
          report(200);
          return record;
        },
        (error: unknown) => {
          // Open (cooling down): refused without a call. A call made while the half-open probe is
          // out waits for it (cockatiel), then runs if it closed the breaker, or lands here.
          if (isBrokenCircuitError(error)) throw this.#notSent(req, caller, spend, 'breaker_open');
          report(isUpstreamError(error) ? error.status : undefined, error);
          ctx.refusals?.note(error);
          this.#throttles.note(ctx.throttledAs ?? caller, error);
          throw error;
        },
      );
  }

  /** A call given up before it was sent: its place given back, and what the operation took for it. */
  #notSent(req: { path: string; cost: number }, caller: string, spend: OperationSpend | undefined, why: 'breaker_open' | Error): Error {
    this.#share.leave(caller);
    spend?.giveBack(req.cost);
    return why === 'breaker_open' ? new UpstreamUnavailableError({ path: req.path, reason: why }) : why;
  }
}
