import { hash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SpanKind } from '@opentelemetry/api';
import type { YogaInitialContext } from 'graphql-yoga';
import type { Logger } from 'pino';
import { ClientGone } from './client-gone.js';
import { takingTurns, type Turns } from '../data/turns.js';
import { StreamPlaces } from './stream-pace.js';
import { createLoaders, type RequestLoaders } from '../data/loaders.js';
import type { LookupCaller, CachedLookups } from '../data/lookups.js';
import type { LookupOp } from '../upstream/lookups.js';
import { requestState, type RequestState } from './request-state.js';
import { Tracing } from '../telemetry/tracing.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { Register } from '../padron/register.js';
import type { SunatValidation } from '../sunat/validation.js';
import type { SunatRates } from '../sunat/rates.js';
import type { ValidationJobs } from '../sunat/jobs.js';
import type { Webhooks } from '../webhooks/webhooks.js';
import { Refusals } from '../upstream/refusals.js';
import { OperationSpend } from '../upstream/spend.js';

/** What node:http hands Yoga with each request (its node adapter's server context). */
export interface ServerContext {
  req: IncomingMessage;
  res: ServerResponse;
}

export interface Context {
  /** The caller's bearer token, exactly as sent; undefined when the request has none. */
  readonly token: string | undefined;
  readonly upstream: UpstreamClient;
  /** Token, cache key and this request's observers, handed to every upstream call. */
  readonly call: LookupCaller;
  readonly loaders: RequestLoaders;
  /** What this request did (calls, cost), for its report and its `extensions`. */
  readonly state: RequestState;
  /** SUNAT's register kept by the gateway, for searches; undefined when PADRON is off. */
  readonly padron: PadronSearch | undefined;
  /** A lookup asked of the service whatever the register and the cache hold (proving a token), with this call's context. */
  lookupFresh(op: LookupOp, key: string): Promise<unknown>;
  /** Subscriptions to the register's changes: signed webhooks, and the live feed. */
  readonly webhooks: Webhooks | undefined;
  /** SUNAT's free receipt validation; undefined in a context built without it. */
  readonly sunat: SunatValidation | undefined;
  /** SUNAT's exchange rates (TIPO_DE_CAMBIO); undefined: the paid lookup only. */
  readonly rates: SunatRates | undefined;
  /** Background validations through SUNAT (crearValidacionMasiva); undefined in a context built without them. */
  readonly jobs: ValidationJobs | undefined;
  /** Settings the resolvers apply: the most receipts per batch field, and calls of a request in flight at once. */
  /** Whether the client has left, and a way to be told when it does; undefined in a context built without a response. */
  readonly clientGone: ClientGone | undefined;
  /** The parts of long lists, every request's, one an event loop turn (./stream-pace.ts). */
  readonly listParts: Turns;
  /** Places for long streamed lists, every request's (./stream-pace.ts). */
  readonly streamPlaces: StreamPlaces;
  readonly limits: { readonly maxReceipts: number; readonly maxRucsPerList: number; readonly concurrency: number };
}

export interface ContextOptions {
  upstream: UpstreamClient;
  lookups: CachedLookups;
  /** Upstream calls one request may have in flight at once. */
  concurrency: number;
  maxReceipts: number;
  maxRucsPerList: number;
  /** Plan queries one operation may spend (MAX_OPERATION_COST), held at each paid call. */
  maxOperationCost: number;
  logger: Logger;
  tracing: Tracing | undefined;
  /** Sign-in mode: the plan's token, which every signed-in caller's calls carry (never the caller's JWT). */
  planToken?: string | undefined;
  /** SUNAT's register (PADRON), when on: its answers are counted as `localHits`, and it answers searches. */
  register?: PadronSearch | undefined;
  webhooks?: Webhooks | undefined;
  sunat?: SunatValidation | undefined;
  rates?: SunatRates | undefined;
  jobs?: ValidationJobs | undefined;
}

/** What the schema asks of SUNAT's register beyond lookups. */
export type PadronSearch = Pick<Register, 'search' | 'holds' | 'changes'>;

/** The token of an `Authorization: Bearer <token>` header; any other scheme or a blank token is no token. */
export function bearerToken(header: string | null): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer[ \t]+(\S.*)$/i.exec(header.trim());
  return match?.[1]?.trim() || undefined;
}

/** Where a request's lookups count their cache hits, stale answers and, with SUNAT's register on, its answers (`localHits`, from 0). */
function countedIn(state: RequestState, register: PadronSearch | undefined): LookupCaller['onResult'] {
  if (register) state.localHits ??= 0;
  return (result) => {
    if (result === 'hit' || result === 'flight') state.cacheHits++;
    else if (result === 'stale') state.staleHits++;
    else if (result === 'local') state.localHits = (state.localHits ?? 0) + 1;
  };
}

export function createContextFactory(options: ContextOptions) {
  const {
    upstream,
    lookups,
    concurrency,
    maxReceipts,
    maxRucsPerList,
    maxOperationCost,
    logger,
    tracing,
    planToken,
    register,
    webhooks,
    sunat,
    rates,
    jobs,
  } = options;
  const limits = { maxReceipts, maxRucsPerList, concurrency };
  // One a turn, the app's: 50 long lists at once take turns with each other and with every other request.
  const listParts = takingTurns(1);
  const streamPlaces = new StreamPlaces();
  // Every signed-in caller shares the plan's answers: one cache key for all of them, and its throttling.
  const planKey = lookups.tokenKey(planToken);
  const planId = planToken === undefined ? undefined : hash('sha256', planToken, 'base64url');
  return ({ request, res }: YogaInitialContext & { res?: ServerResponse }): Context => {
    const state = requestState(request);
    const { signedIn, span } = state;
    const clientGone = res ? new ClientGone(res) : undefined;
    // In sign-in mode the plan pays, and only for a caller whose JWT was verified (src/pipeline/sign-in.ts).
    const token = planToken === undefined ? bearerToken(request.headers.get('authorization')) : signedIn && planToken;
    const tokenKey = planToken === undefined ? lookups.tokenKey(token) : signedIn && planKey;
    const call: LookupCaller = {
      token,
      // Signed in, the subject; else the cache key's hash of the token when there is one, or a one-shot hash(), cheaper than createHash().
      caller: signedIn?.caller ?? tokenKey ?? (token === undefined ? undefined : hash('sha256', token, 'base64url')),
      throttledAs: signedIn && planId,
      budget: signedIn?.budget,
      signal: clientGone,
      tokenKey,
      noCache: wantsNoCache(request.headers),
      refusals: new Refusals(),
      spend: new OperationSpend(maxOperationCost),
      onResult: countedIn(state, register),
      observe: (info) => {
        state.upstreamCalls.push(info);
        // Checked first: the line's object would be built for nothing at the usual info level.
        if (logger.isLevelEnabled('debug')) logger.debug({ reqId: state.id, upstream: info }, 'upstream call');
      },
      ...(tracing && span
        ? {
            onLookupStart: (op) => {
              const lookup = tracing.startChild(span, `lookup ${op}`, { 'gateway.lookup': op });
              return (result, failed) => Tracing.end(lookup, { 'gateway.cache.outcome': result }, failed);
            },
            onCallStart: ({ path, origin, attempt }) => {
              const callSpan = tracing.startChild(
                span,
                `POST ${path}`,
                { 'http.request.method': 'POST', 'url.path': path, 'gateway.upstream.origin': origin, 'gateway.upstream.attempt': attempt },
                SpanKind.CLIENT,
              );
              return (info) =>
                Tracing.end(
                  callSpan,
                  {
                    'http.response.status_code': info.status ?? 0,
                    'gateway.upstream.outcome': info.outcome,
                    'gateway.plan_queries': info.queries,
                    ...(info.errorKind ? { 'error.type': info.errorKind } : {}),
                  },
                  info.outcome === 'error',
                );
            },
          }
        : {}),
    };
    state.caller = call.caller;
    return {
      token,
      upstream,
      call,
      loaders: createLoaders(lookups, call, concurrency),
      lookupFresh: (op: LookupOp, key: string) => lookups.lookup(op, key, { ...call, noCache: true }),
      state,
      clientGone,
      listParts,
      streamPlaces,
      limits,
      padron: register,
      webhooks,
      sunat,
      rates,
      jobs,
    };
  };
}

/** `Cache-Control: no-cache` (or the older `Pragma: no-cache`): read nothing cached, refresh it. */
export function wantsNoCache(headers: Headers): boolean {
  const cacheControl = headers.get('cache-control')?.toLowerCase() ?? '';
  return /(^|,)\s*no-cache\s*(,|$)/.test(cacheControl) || headers.get('pragma')?.toLowerCase() === 'no-cache';
}
