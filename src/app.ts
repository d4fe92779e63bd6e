import type { CORSOptions } from '@whatwg-node/server';
import { createYoga, type Plugin, type YogaLogger, type YogaServerInstance, type YogaServerOptions } from 'graphql-yoga';
import type { Logger } from 'pino';
import { GRAPHQL_PATH, type Config } from './config.js';
import { bearerToken, createContextFactory, type Context, type ServerContext } from './schema/context.js';
import { maskError } from './errors.js';
import { corsOptions, useNoNullOrigin } from './http/cors.js';
import { graphiqlOptions, renderGraphiQL, useGraphiQLAssets } from './http/graphiql.js';
import { createFastPath, type FastPath } from './http/fast-path.js';
import { FAST_PATH_TREATMENTS, treatedByFastPath, usePluginList } from './http/fast-path-plugins.js';
import type { HttpApp } from './http/server.js';
import { OPS_ROUTES, readinessOf, coalesced, STOPPING, type OpsRoute } from './http/health.js';
import { useErrorContract, useTypedRefusals } from './pipeline/error-contract.js';
import { useCsrfPrevention, useOperationLimits } from './pipeline/limits.js';
import { OperationReport, useOperationReport } from './pipeline/operation-report.js';
import { useDocumentCache } from './pipeline/document-cache.js';
import { useNoSecretsInDocuments, useSecretVariables } from './pipeline/secrets.js';
import { usePersistedDocuments } from './pipeline/persisted.js';
import { useExecutor, useIncrementalDelivery } from './pipeline/executor.js';
import { yogaLogging } from './pipeline/yoga-logging.js';
import { createApqStore, memoryApqStore, type ApqStore } from './pipeline/apq-store.js';
import { Metrics } from './telemetry/metrics.js';
import { Tracing } from './telemetry/tracing.js';
import type { LookupStore } from './data/cache.js';
import { createBudgets, createRedisLink, createStore } from './data/stores.js';
import type { RedisLink } from './data/redis.js';
import type { BudgetCounter } from './data/budgets.js';
import type { Register } from './padron/register.js';
import { Webhooks } from './webhooks/webhooks.js';
import { startRegister } from './padron/start.js';
import { SunatValidation } from './sunat/validation.js';
import { rateMonthsOnDisk, SunatRates } from './sunat/rates.js';
import type { ValidationJobs } from './sunat/jobs.js';
import { createJobs } from './data/jobs.js';
import { redisRateMonths } from './data/rate-months.js';
import { createVerifier, useSignIn } from './pipeline/sign-in.js';
import { csvOf } from './http/validation-csv.js';
import { SigningKeys } from './pipeline/signing-keys.js';
import { CachedLookups } from './data/lookups.js';
import { schema } from './schema/index.js';
import { UpstreamClient } from './upstream/client.js';

export interface AppOptions {
  logger: Logger;
  /** Put this token in GraphiQL's headers pane: only ever the sandbox's, never a real one. */
  graphiqlToken?: string;
  /** A ready client to use instead of one built from config (it is still closed with the app). */
  upstream?: UpstreamClient;
  /** Tracing to use instead of the OTLP exporter of OTEL_EXPORTER_OTLP_ENDPOINT (tests pass an in-memory one). */
  tracing?: Tracing;
  /** The metrics to record into (main passes them, with the log's drop count). @default new ones */
  metrics?: Metrics;
  /** More Yoga or envelop plugins, run after the gateway's own and before execution (both paths run them). */
  plugins?: Plugin[];
  /** The first wait before a call to SUNAT is tried again (tests shorten SUNAT's 1, 2, 4, 8 s). @default 1000 */
  sunatRetryBaseMs?: number;
  /** How long a fleet's instance holds a part of a job before another takes it up (tests shorten it). */
  jobLockMs?: number;
}

export type Yoga = YogaServerInstance<ServerContext, Context>;

/** The app's parts, for a server to mount (src/http/server.ts). */
export interface App extends HttpApp {
  readonly yoga: Yoga;
  /** The node:http fast path for JSON POSTs (src/http/fast-path.ts); undefined with HTTP_FAST_PATH=off. */
  readonly fastPath: FastPath | undefined;
  /** A stop has begun: `/ready` says 503 from now on, `/health` still 200. */
  stopping(): void;
  /** The stop takes no new connections: the live feeds (SSE) end, so their answers finish. */
  endStreams(): void;
  /** Closes the upstream pools, the cache store and tracing. */
  dispose(): Promise<void>;
}

/**
 * The Yoga app over the REST client, and its fast path; no socket, so tests and main both
 * mount it with `createHttpServer`. `config.upstream.baseUrl` must be set (main points it at the
 * sandbox when it is not).
 */
export function createApp(config: Config, options: AppOptions): App {
  const { logger, metrics = new Metrics() } = options;
  const tracing = options.tracing ?? (config.otelEndpoint ? Tracing.otlp(config.otelEndpoint) : undefined);
  const upstream = options.upstream ?? createUpstream(config, metrics, logger);
  const link = createRedisLink(config, { logger, metrics });
  const store = createStore(config, link);
  const { register, webhooks } = createRegister(config, { logger, link, metrics });
  const sunat = new SunatValidation({
    ...config.sunat,
    retryBaseMs: options.sunatRetryBaseMs,
    redis: link?.redis,
    onAttempt: (call, outcome) => metrics.sunatCall(call, outcome),
  });
  const parts: Parts = {
    upstream,
    store,
    link,
    apqStore: apqStoreOf(config, logger, link),
    budgets: config.auth?.budget ? createBudgets(config, link) : undefined,
    signInKeys: config.auth && startSigningKeys(config.auth.jwksUrl, logger),
    metrics,
    tracing,
    ...{ register, webhooks },
    sunat,
    jobs: createJobs(config, { link, sunat, logger, lockMs: options.jobLockMs }),
    rates: ratesOf(config, link),
    lookups: createLookups(config, { upstream, store, metrics, register }),
    documentCache: useDocumentCache(),
    report: new OperationReport({ logger, metrics, tracing }),
    cors: corsOptions(config),
    logging: yogaLogging(logger, { holdsThePlan: config.auth !== undefined }),
    pluginList: usePluginList(),
  };
  const yoga = createYoga<ServerContext, Context>({
    ...yogaOptions(config, options, parts),
    plugins: plugins(config, parts, options.plugins ?? []),
  });
  const fastPath = config.httpFastPath ? fastPathOf(config, yoga, parts) : undefined;
  let stopping = false;
  const readiness = coalesced(readinessOf(upstream, store, parts.signInKeys, parts.budgets && link));
  return {
    yoga,
    fastPath,
    ops: {
      readiness: () => (stopping ? Promise.resolve(STOPPING) : readiness()),
      metricsText: coalesced(() => metrics.registry.metrics()),
      contentType: metrics.registry.contentType,
      health: () => (register ? { padron: register.state() } : {}),
    },
    // With an operations port, the GraphQL port keeps only the cheap /health.
    opsRoutes: new Set<OpsRoute>(config.opsPort === undefined ? OPS_ROUTES : ['/health']),
    corsOrigins: config.corsOrigins,
    graphiql: config.graphiql,
    knowsDocument: parts.documentCache.knows,
    validationCsv: csvFinder(config, parts),
    stopping: () => void (stopping = true),
    endStreams: () => parts.webhooks.live.end(),
    dispose: async () => void (await yoga.dispose()),
  };
}

/** The node:http fast path for JSON POSTs, through the same plugins (src/http/fast-path.ts). */
function fastPathOf(config: Config, yoga: Yoga, parts: Parts): FastPath {
  return createFastPath(yoga, {
    ...parts,
    graphqlPath: GRAPHQL_PATH,
    plugins: parts.pluginList.between(),
    maskError,
    isDev: config.nodeEnv === 'development',
    logError: parts.logging.error,
    onTaken: () => parts.metrics.fastPath(),
  });
}

/** SUNAT's month listing of exchange rates, its months kept in Redis for the fleet, else beside the register. */
function ratesOf(config: Config, link: RedisLink | undefined): SunatRates | undefined {
  const { ratesUrl, ratesDir, timeoutMs } = config.sunat;
  if (!ratesUrl) return undefined;
  const store = link ? redisRateMonths(link) : rateMonthsOnDisk(ratesDir);
  return new SunatRates({ baseUrl: ratesUrl, timeoutMs, store });
}

/** A job's CSV for the caller an Authorization header is: its token's, or in sign-in mode its verified subject's. */
function csvFinder(config: Config, parts: Parts): NonNullable<HttpApp['validationCsv']> {
  const { jobs, signInKeys } = parts;
  const verify = config.auth && signInKeys ? createVerifier({ ...config.auth, keys: signInKeys }) : undefined;
  return async (authorization, id) => {
    const token = bearerToken(authorization ?? null);
    if (!token) return undefined;
    let subject: string | undefined;
    if (verify) {
      const verified = await verify(token);
      if (!('subject' in verified)) return undefined;
      subject = verified.subject;
    }
    const job = await jobs.get(await jobs.ownerOf({ subject, token }), id);
    return job && csvOf(jobs.allRows(job));
  };
}

/** What the plugins and the fast path share. */
interface Parts {
  upstream: UpstreamClient;
  link: RedisLink | undefined;
  store: LookupStore | undefined;
  apqStore: ApqStore;
  budgets: BudgetCounter | undefined;
  /** Sign-in mode: the identity provider's keys, fetched from the start. */
  signInKeys: SigningKeys | undefined;
  metrics: Metrics;
  tracing: Tracing | undefined;
  lookups: CachedLookups;
  /** SUNAT's register kept by the gateway (PADRON); undefined when it is off. */
  register: Register | undefined;
  webhooks: Webhooks;
  /** SUNAT's free receipt validation, with a call's credentials or the gateway's own. */
  sunat: SunatValidation;
  /** SUNAT's exchange rates (TIPO_DE_CAMBIO); undefined: the paid lookup only. */
  rates: SunatRates | undefined;
  /** Background validations through SUNAT, on disk under VALIDACION_DIR. */
  jobs: ValidationJobs;
  documentCache: ReturnType<typeof useDocumentCache>;
  report: OperationReport;
  cors: CORSOptions;
  logging: YogaLogger;
  pluginList: ReturnType<typeof usePluginList>;
}

/** Yoga's settings beside the plugins: each one where the gateway does the work itself instead, or differs from Yoga's default. */
function yogaOptions(config: Config, options: AppOptions, parts: Parts): YogaServerOptions<ServerContext, Context> {
  const { upstream, lookups, tracing, cors, logging } = parts;
  return {
    schema,
    context: createContextFactory({
      upstream,
      lookups,
      concurrency: config.requestConcurrency,
      maxReceipts: config.limits.maxReceipts,
      maxRucsPerList: config.limits.maxRucsPerList,
      maxOperationCost: config.limits.maxOperationCost,
      logger: options.logger,
      tracing,
      planToken: config.auth?.planToken,
      register: parts.register,
      webhooks: parts.webhooks,
      sunat: parts.sunat,
      rates: parts.rates,
      jobs: parts.jobs,
    }),
    graphqlEndpoint: GRAPHQL_PATH,
    landingPage: false,
    // Our /health answers with JSON (src/http/health.ts); Yoga's own stays out of the way.
    healthCheckEndpoint: '/__yoga_health',
    // A trusted document is named by `documentId` (src/pipeline/persisted.ts).
    extraParamNames: ['documentId'],
    // One operation per request: a batch of N would multiply every per-operation limit by N.
    batching: false,
    // The body is read, limited and parsed in src/http/server.ts, before Yoga.
    maxRequestBodySize: false,
    // Ours instead, in the same place (after every plugin below): src/pipeline/document-cache.ts.
    parserAndValidationCache: false,
    cors,
    graphiql: config.graphiql && graphiqlOptions(options.graphiqlToken, config.auth !== undefined),
    renderGraphiQL,
    maskedErrors: { maskError, isDev: config.nodeEnv === 'development' },
    logging,
  };
}

/**
 * The gateway's plugins, in the order they run (`more`, a caller's own, after ours and before the
 * marker). Those with Yoga hooks the fast path does not run carry its treatment of them (src/http/fast-path-plugins.ts).
 */
function plugins(config: Config, parts: Parts, more: readonly Plugin[]): Plugin[] {
  const {
    upstream,
    link,
    apqStore,
    budgets,
    signInKeys,
    register,
    webhooks,
    sunat,
    rates,
    jobs,
    metrics,
    tracing,
    documentCache,
    report,
    pluginList,
  } = parts;
  return [
    pluginList.first,
    // 1. Static GraphiQL files answer before any GraphQL work (/health, /ready and /metrics never reach Yoga).
    ...(config.graphiql ? [treatedByFastPath(useGraphiQLAssets(), FAST_PATH_TREATMENTS.graphiqlAssets)] : []),
    // 2. Every error gets `code` and `retryable` before anyone reads the result.
    useErrorContract(),
    // 3. The report (log line, metrics, span) and request id see every request, even those refused below.
    treatedByFastPath(useOperationReport(report, GRAPHQL_PATH, config.graphiql), FAST_PATH_TREATMENTS.operationReport),
    // 4. Browser requests without a CORS preflight must carry the CSRF header; no `null` allowed origin.
    treatedByFastPath(useCsrfPrevention(), FAST_PATH_TREATMENTS.csrfPrevention),
    treatedByFastPath(useNoNullOrigin(), FAST_PATH_TREATMENTS.noNullOrigin),
    // Sign-in mode: the caller's JWT verified and its budget read, before any other work (src/pipeline/sign-in.ts).
    ...(config.auth && signInKeys
      ? [useSignIn({ ...config.auth, keys: signInKeys, budgets, onRefused: (reason) => metrics.signInRefused(reason) })]
      : []),
    // 5. Token, depth, alias, directive and plan-cost limits, all before execution.
    // A RUC SUNAT's register answers costs nothing: it is priced so.
    ...useOperationLimits(
      config.limits,
      config.nodeEnv === 'production',
      register && ((type, key) => type === 'Contribuyente' && register.holds(key)),
      { own: config.sunat.credentials !== undefined, fallback: config.sunat.fallback === 'servicio' },
    ),
    // Persisted documents: automatic persisted queries, or only the trusted documents' manifest.
    usePersistedDocuments({ manifest: config.trustedDocuments, store: apqStore }),
    // Secrets: written in the document, refused; in variables, checked before graphql-js could print them.
    useNoSecretsInDocuments(),
    useSecretVariables(),
    // 6. graphql-js executes, keys in selection order; @defer and @stream go out over multipart/mixed or text/event-stream.
    useExecutor(),
    useIncrementalDelivery(),
    // 7. Close the upstream pools, the stores and tracing with the app.
    {
      onDispose: () =>
        Promise.all([
          upstream.close(),
          signInKeys?.close(),
          register?.close(),
          webhooks.close(),
          // The jobs stop asking before SUNAT's pools close under them.
          jobs.close().then(() => sunat.close()),
          rates?.close(),
          tracing?.shutdown(),
        ]).then(() => link?.close()),
    },
    // 8. Parsed and validated documents, where Yoga puts its own cache: after every rule is added.
    documentCache,
    // 9. A refusal Yoga sends without a body (415, 404) gets a typed one.
    treatedByFastPath(useTypedRefusals(), FAST_PATH_TREATMENTS.typedRefusals),
    ...more,
    pluginList.last,
  ];
}

/** SUNAT's register (PADRON), and its changes told to subscribers: in Redis with REDIS_URL (the fleet's), else under PADRON_DIR. */
function createRegister(config: Config, { logger, link, metrics }: { logger: Logger; link: RedisLink | undefined; metrics: Metrics }) {
  const { redisUrl, redisCluster } = config.cache;
  const redis = redisUrl ? { url: redisUrl, cluster: redisCluster } : undefined;
  const { padron } = config;
  const webhooks = new Webhooks({
    settings: config.webhooks,
    logger,
    metrics,
    link,
    redis,
    dir: padron?.dir,
    keepMs: (padron?.changesDays ?? 1) * 86_400_000,
  });
  const register = padron && startRegister({ ...padron, onChanges: webhooks.onChanges }, logger, (state) => metrics.padron(state));
  return { register, webhooks };
}

/** The REST client of config.upstream, its calls, breaker changes and load reported. */
function createUpstream(config: Config, metrics: Metrics, logger: Logger): UpstreamClient {
  const { baseUrl } = config.upstream;
  if (!baseUrl) throw new TypeError('createApp needs config.upstream.baseUrl');
  const upstream: UpstreamClient = new UpstreamClient({
    ...config.upstream,
    baseUrl,
    onCall: (call) => metrics.upstreamCall(call),
    onBreakerChange: (change) => {
      metrics.breaker(change.origin, change.state);
      (change.state === 'closed' ? logger.info : logger.warn).call(logger, { breaker: change }, `circuit breaker ${change.state}`);
    },
  });
  metrics.upstreamLoad(() => upstream.load);
  return upstream;
}

/** The lookups, through the cache and the store where they meet, with config.cache's settings. */
function createLookups(config: Config, { upstream, store, metrics, register }: Pick<Parts, 'upstream' | 'store' | 'metrics' | 'register'>) {
  return new CachedLookups(upstream, {
    store,
    register,
    cache: config.cache,
    keySecret: config.cache.keySecret,
    onResult: (op, result) => {
      if (result !== 'off') metrics.cacheLookup(op, result);
    },
  });
}

/**
 * Where registered persisted queries are kept: where lookups are shared, through Redis when there
 * is one. In trusted-documents mode nothing is registered: a store of no consequence.
 */
function apqStoreOf(config: Config, logger: Logger, link: RedisLink | undefined): ApqStore {
  if (!config.trustedDocuments) return createApqStore(config, link);
  logger.info({ trustedDocuments: Object.keys(config.trustedDocuments).length }, 'TRUSTED_DOCUMENTS: only the manifest documents run');
  return memoryApqStore(config.persistedQueries);
}

/** The identity provider's keys, asked for now: `/ready` says 503 until they are fetched. */
function startSigningKeys(jwksUrl: string, logger: Logger): SigningKeys {
  const keys = new SigningKeys(jwksUrl, undefined, undefined, (change) =>
    change.ok
      ? logger.info({ jwksUrl }, 'sign-in keys fetched again')
      : logger.warn(
          { jwksUrl, error: change.error.message, cause: (change.error.cause as Error | undefined)?.message },
          'sign-in keys cannot be fetched: the kept ones verify, and /ready says 503 until the first are',
        ),
  );
  keys.start();
  return keys;
}
