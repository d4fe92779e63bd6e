import { randomUUID } from 'node:crypto';
import type { Span } from '@opentelemetry/api';
import type { UpstreamCallInfo } from '../upstream/client.js';
import type { Budget } from '../data/budgets.js';

/** A caller who proved who they are with a JWT (sign-in mode): the plan pays, their budget first. */
export interface SignedIn {
  /** Stands for the subject where callers take turns (a hash: never the subject itself). */
  readonly caller: string;
  /** Undefined when there are no budgets (BUDGET_QUERIES unset). */
  readonly budget: Budget | undefined;
}

/** What one HTTP request did, gathered by plugins and the context, read by the log line. */
export interface RequestState {
  /** The caller's `x-request-id` when it is a sane one, else a fresh UUID. */
  readonly id: string;
  readonly startedAt: number;
  /** A GraphQL operation (not GraphiQL's page, a preflight or another path): reported. */
  isOperation: boolean;
  operationName: string | undefined;
  operationType: string | undefined;
  /** The operation ran (there is `data`), as opposed to refused before execution. */
  executed: boolean;
  /** An incremental answer still going out, and the status it went with: its report waits for its end. */
  streaming: { status: number | undefined } | undefined;
  /** The operation's span, when tracing is on. */
  span: Span | undefined;
  /** Plan queries the operation could spend at most (checked against MAX_OPERATION_COST). */
  estimatedCost: number | undefined;
  readonly upstreamCalls: UpstreamCallInfo[];
  /** Lookups answered from the cache or from another request's call in flight. */
  cacheHits: number;
  /** Lookups answered with the last good record, the upstream being down. */
  staleHits: number;
  /** Lookups answered from SUNAT's register kept by the gateway; undefined when it is off (not reported then). */
  localHits: number | undefined;
  /** Each field answered with such a record, and when that record was received (`extensions.stale`). */
  readonly stale: { path: readonly (string | number)[]; consultadoEn: string }[];
  errorCodes: string[];
  /** Sign-in mode: who the JWT says the caller is, once it was verified. */
  signedIn: SignedIn | undefined;
  /** Who calls, as the lookups name them (a hash of the token, or the subject); never the token. */
  caller: string | undefined;
}

/** What the operation really spent, for `extensions.cost` and the log line. */
export function spent(state: RequestState) {
  let queries = 0;
  for (const call of state.upstreamCalls) queries += call.queries;
  const { cacheHits, staleHits, localHits } = state;
  return { queries, upstreamCalls: state.upstreamCalls.length, cacheHits, staleHits, ...(localHits === undefined ? {} : { localHits }) };
}

/**
 * The state rides on the request object itself, under a symbol no one else knows, rather than
 * in a WeakMap, whose insertion per request and ephemeron work for the garbage collector were a
 * measured cost (docs/performance.md).
 */
const STATE = Symbol('gateway.requestState');
type WithState = Request & { [STATE]?: RequestState };
const SANE_ID = /^[\w.:-]{1,128}$/;

/** The state of this request, made on first use; the same Request object is seen by every hook. */
export function requestState(request: Request): RequestState {
  let state = (request as WithState)[STATE];
  if (!state) {
    const given = request.headers.get('x-request-id');
    state = {
      id: given && SANE_ID.test(given) ? given : randomUUID(),
      startedAt: performance.now(),
      isOperation: false,
      operationName: undefined,
      operationType: undefined,
      executed: false,
      streaming: undefined,
      span: undefined,
      estimatedCost: undefined,
      upstreamCalls: [],
      cacheHits: 0,
      staleHits: 0,
      localHits: undefined,
      stale: [],
      errorCodes: [],
      signedIn: undefined,
      caller: undefined,
    };
    (request as WithState)[STATE] = state;
  }
  return state;
}
