import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { PLAN_COST } from '../upstream/billing.js';
import type { BreakerState, UpstreamCallInfo } from '../upstream/client.js';

/** What a label may say about an operation: its name when it is a plain identifier, else a bucket. */
const OPERATION_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** What the metrics read of SUNAT's register (src/padron/register.ts). */
interface PadronState {
  rows: number;
  ageMs: number | null;
  lastImport: { result: string; durationMs: number } | null;
}

/** A run of digits in a name could be a RUC, a DNI or a licence number: such names are "other". */
const DOCUMENT_NUMBER = /\d{6,}/;
/** Distinct operation names kept as labels; past this, "other", so a client cannot blow up the series. */
const MAX_OPERATION_NAMES = 200;

const BREAKER_VALUE: Record<BreakerState, number> = { closed: 0, 'half-open': 1, open: 2 };

/**
 * The gateway's Prometheus metrics, on a registry of its own (so two apps in one process,
 * as in tests, never share series). Labels never hold a token, a RUC or a licence number:
 * only operation names that are identifiers, REST paths, statuses, outcomes and codes.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly #names = new Set<string>();

  readonly #operations = new Counter({
    name: 'gateway_operations_total',
    help: 'GraphQL operations by name and outcome (ok, error: some field failed, rejected: refused before execution)',
    labelNames: ['operation', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly #operationSeconds = new Histogram({
    name: 'gateway_operation_duration_seconds',
    help: 'Time from request to response of a GraphQL operation',
    labelNames: ['operation', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly #errors = new Counter({
    name: 'gateway_errors_total',
    help: 'Errors returned to clients, by extensions.code',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  readonly #upstreamCalls = new Counter({
    name: 'gateway_upstream_calls_total',
    help: 'Calls to the REST service by path, HTTP status (or "none"), outcome and origin',
    labelNames: ['path', 'status', 'outcome', 'origin'] as const,
    registers: [this.registry],
  });
  readonly #upstreamSeconds = new Histogram({
    name: 'gateway_upstream_call_duration_seconds',
    help: 'Latency of one call to the REST service',
    labelNames: ['path', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly #retries = new Counter({
    name: 'gateway_upstream_retries_total',
    help: 'Calls that were retries of a failed lookup',
    labelNames: ['path'] as const,
    registers: [this.registry],
  });
  readonly #queries = new Counter({
    name: 'gateway_plan_queries_total',
    help: `Plan queries spent upstream (${Object.entries(PLAN_COST)
      .map(([what, queries]) => `${queries} per ${what}`)
      .join(', ')})`,
    labelNames: ['path'] as const,
    registers: [this.registry],
  });
  readonly #cache = new Counter({
    name: 'gateway_cache_lookups_total',
    help:
      'Lookups by cache result: local (the register kept by the gateway), hit (from the cache), flight (joined ' +
      'a call in flight), miss (called upstream), stale (the last good record, the upstream being down)',
    labelNames: ['op', 'result'] as const,
    registers: [this.registry],
  });
  readonly #storeErrors = new Counter({
    name: 'gateway_cache_store_errors_total',
    help: 'Commands of the shared store (Redis) that failed or timed out, by step and kind; each costs at most one call per key and process',
    labelNames: ['store', 'op', 'kind'] as const,
    registers: [this.registry],
  });
  readonly #signInRefusals = new Counter({
    name: 'gateway_sign_in_refusals_total',
    help: 'Sign-in mode: requests refused (missing, invalid, expired, no_subject, unavailable) and calls over a budget (budget); never the subject',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly #fastPath = new Counter({
    name: 'gateway_fast_path_requests_total',
    help: 'Requests answered by the node:http fast path (JSON POSTs); the rest go through Yoga',
    registers: [this.registry],
  });
  readonly #webhookAttempts = new Counter({
    name: 'gateway_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome: delivered, retry (to be retried), failed (retried out), gone (410: subscription deleted); never the URL',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly #sunatCalls = new Counter({
    name: 'gateway_sunat_calls_total',
    help: "Calls to SUNAT's free API by call (token, receipt) and outcome (answered, throttled: 429, unavailable: 5xx, network, time-out); never a clientId",
    labelNames: ['call', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly #breaker = new Gauge({
    name: 'gateway_breaker_state',
    help: 'Circuit breaker of each upstream origin: 0 closed, 1 half-open, 2 open',
    labelNames: ['origin'] as const,
    aggregator: 'max',
    registers: [this.registry],
  });

  #upstreamLoad: () => { inFlight: number; waiting: number } = () => ({ inFlight: 0, waiting: 0 });
  readonly #upstreamInFlight: Gauge = new Gauge({
    name: 'gateway_upstream_calls_in_flight',
    help: 'Upstream calls holding one of the connections now',
    aggregator: 'sum',
    registers: [this.registry],
    collect: () => this.#upstreamInFlight.set(this.#upstreamLoad().inFlight),
  });
  readonly #upstreamWaiting: Gauge = new Gauge({
    name: 'gateway_upstream_calls_waiting',
    help: 'Upstream calls waiting for a free connection, shared fairly among tokens',
    aggregator: 'sum',
    registers: [this.registry],
    collect: () => this.#upstreamWaiting.set(this.#upstreamLoad().waiting),
  });

  #padron: () => PadronState | undefined = () => undefined;
  readonly #padronRows: Gauge = this.#padronGauge('gateway_padron_rows', 'Rows of SUNAT’s register in use (PADRON)', (s) => s.rows);
  readonly #padronAge: Gauge = this.#padronGauge('gateway_padron_age_seconds', 'Age of SUNAT’s register in use, from its date', (s) =>
    s.ageMs === null ? undefined : s.ageMs / 1000,
  );
  readonly #padronImport: Gauge = this.#padronGauge(
    'gateway_padron_last_import_ok',
    'Whether the last import of SUNAT’s register succeeded (1) or failed (0)',
    (s) => (s.lastImport ? (s.lastImport.result === 'failed' ? 0 : 1) : undefined),
  );
  readonly #padronImportSeconds: Gauge = this.#padronGauge(
    'gateway_padron_last_import_seconds',
    'How long the last import of SUNAT’s register took',
    (s) => (s.lastImport ? s.lastImport.durationMs / 1000 : undefined),
  );

  /** A gauge of the register's state, set from `read` when scraped (absent while PADRON is off). */
  #padronGauge(name: string, help: string, read: (state: PadronState) => number | undefined): Gauge {
    const gauge: Gauge = new Gauge({
      name,
      help,
      registers: [this.registry],
      collect: () => {
        const state = this.#padron();
        const value = state && read(state);
        if (value === undefined) gauge.reset();
        else gauge.set(value);
      },
    });
    return gauge;
  }

  /** Where the register's state is read from, when scraped. */
  padron(read: () => PadronState) {
    this.#padron = read;
  }

  #logDropped: () => number = () => 0;
  #logDroppedSeen = 0;
  readonly #logLinesDropped: Counter = new Counter({
    name: 'gateway_log_lines_dropped_total',
    help: 'Log lines dropped because standard output was gone (a closed pipe), stalled or full',
    registers: [this.registry],
    collect: () => {
      const now = this.#logDropped();
      if (now > this.#logDroppedSeen) this.#logLinesDropped.inc(now - this.#logDroppedSeen);
      this.#logDroppedSeen = now;
    },
  });

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'gateway_' });
    this.#breaker.set({ origin: 'primary' }, 0);
  }

  /** `known`: the caller is one the service accepted (or signed in): only such a caller's new name takes a label. */
  operation(name: string | undefined, outcome: 'ok' | 'error' | 'rejected', seconds: number, codes: readonly string[], known = true) {
    const operation = this.#operationLabel(name, known);
    this.#operations.inc({ operation, outcome });
    this.#operationSeconds.observe({ operation, outcome }, seconds);
    for (const code of codes) this.#errors.inc({ code });
  }

  upstreamCall(call: UpstreamCallInfo) {
    const { path, outcome } = call;
    this.#upstreamCalls.inc({ path, status: call.status === undefined ? 'none' : String(call.status), outcome, origin: call.origin });
    this.#upstreamSeconds.observe({ path, outcome }, call.durationMs / 1000);
    if (call.attempt > 1) this.#retries.inc({ path });
    if (call.queries > 0) this.#queries.inc({ path }, call.queries);
  }

  /** A request refused before any GraphQL work (413, 408, 503 OVERLOADED), counted with the errors by code. */
  refused(code: string) {
    this.#errors.inc({ code });
  }

  signInRefused(reason: string) {
    this.#signInRefusals.inc({ reason });
  }

  webhookAttempt(outcome: 'delivered' | 'retry' | 'failed' | 'gone') {
    this.#webhookAttempts.inc({ outcome });
  }

  sunatCall(call: 'token' | 'receipt', outcome: 'answered' | 'throttled' | 'unavailable') {
    this.#sunatCalls.inc({ call, outcome });
  }

  fastPath() {
    this.#fastPath.inc();
  }

  cacheLookup(op: string, result: 'hit' | 'flight' | 'miss' | 'stale' | 'local') {
    this.#cache.inc({ op, result });
  }

  storeError(store: string, op: string, kind: string) {
    this.#storeErrors.inc({ store, op, kind });
  }

  /** Where the upstream's calls in flight and waiting are read from, when scraped. */
  upstreamLoad(read: () => { inFlight: number; waiting: number }) {
    this.#upstreamLoad = read;
  }

  /** Where the count of log lines dropped is read from, when scraped. */
  logDropped(read: () => number) {
    this.#logDropped = read;
  }

  breaker(origin: 'primary' | 'fallback', state: BreakerState) {
    this.#breaker.set({ origin }, BREAKER_VALUE[state]);
  }

  #operationLabel(name: string | undefined, known: boolean): string {
    if (!name) return 'anonymous';
    if (!OPERATION_NAME.test(name) || DOCUMENT_NUMBER.test(name)) return 'other';
    if (this.#names.has(name)) return name;
    if (!known || this.#names.size >= MAX_OPERATION_NAMES) return 'other';
    this.#names.add(name);
    return name;
  }
}
