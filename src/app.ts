import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { createContextFactory, type Context } from './schema/context.js';
import { maskError, rootCause, useErrorContract, useTypedRefusals } from './errors.js';
import { EXAMPLE_OPERATION, renderGraphiQL, useGraphiQLAssets } from './http/graphiql.js';
import { CSRF_HEADER, useCsrfPrevention, useOperationLimits } from './pipeline/limits.js';
import { OperationReport, useOperationReport } from './pipeline/operation-report.js';
import { createFastPath, usePluginList, type FastPath, type YogaHook } from './http/fast-path.js';
import { GRAPHQL_PATH, type HttpApp } from './http/server.js';
import { useDocumentCache } from './pipeline/document-cache.js';
import { useNoSecretsInDocuments, useSecretVariables } from './pipeline/secrets.js';
import { usePersistedDocuments } from './pipeline/persisted.js';
import { memoryApqStore, type ApqStore } from './data/apq-store.js';
import { OPS_ROUTES, readinessOf, coalesced, STOPPING, type OpsAnswers, type OpsRoute } from './http/health.js';
import { useExecutor, useIncrementalDelivery } from './pipeline/executor.js';
import { Metrics } from './telemetry/metrics.js';
import { Tracing } from './telemetry/tracing.js';
import type { LookupStore } from './data/store.js';
import { createApqStore, createStore } from './data/stores.js';
import { Lookups } from './data/lookups.js';
import { schema } from './schema/index.js';
import { UpstreamClient } from './upstream/client.js';
import { UpstreamError } from './upstream/errors.js';

export interface AppOptions {
  logger: Logger;
  /** Put this token in GraphiQL's headers pane: only ever the sandbox's, never a real one. */
  graphiqlToken?: string;
  /** A ready client to use instead of one built from config (it is still closed with the app). */
  upstream?: UpstreamClient;
  /** Tracing to use instead of the OTLP exporter of OTEL_EXPORTER_OTLP_ENDPOINT (tests pass an in-memory one). */
  tracing?: Tracing;
  /** Where lookups meet, instead of one built from config (a cluster worker's: the primary's). */
  store?: LookupStore | undefined;
  /** Where persisted queries are kept, instead of one built from config (a cluster worker's: the primary's). */
  apqStore?: ApqStore;
  /** The metrics to record into (main passes them, to share the registry with the cluster). @default new ones */
  metrics?: Metrics;
  /** How /metrics gets its text; in a cluster worker, from the primary's aggregate. @default this process's registry */
  metricsText?: () => Promise<string>;
  /** More Yoga or envelop plugins, run after the gateway's own and before execution (both paths run them). */
  plugins?: Plugin[];
}

export type Yoga = YogaServerInstance<Record<string, never>, Context>;

/** The app's parts, for a server to mount (src/http/server.ts). */
export interface App extends HttpApp {
  readonly yoga: Yoga;
  /** The node:http fast path for JSON POSTs (src/http/fast-path.ts); undefined with HTTP_FAST_PATH=off. */
  readonly fastPath: FastPath | undefined;
  /** A stop has begun: `/ready` says 503 from now on, `/health` still 200. */
  stopping(): void;
  /** Closes the upstream pools, the cache store and tracing. */
  dispose(): Promise<void>;
}

/**
 * The Yoga app over the REST client, and its fast path; no socket, so tests and main both
 * mount it with `createHttpServer`. `config.upstream.baseUrl` must be set (main points it at the
 * sandbox when it is not).
 */
export function createApp(config: Config, options: AppOptions): App {
  const { baseUrl } = config.upstream;
  if (!baseUrl) throw new TypeError('createApp needs config.upstream.baseUrl');
  const logger = options.logger;
  const metrics = options.metrics ?? new Metrics();
  const tracing = options.tracing ?? (config.otelEndpoint ? Tracing.otlp(config.otelEndpoint) : undefined);
  const upstream =
    options.upstream ??
    new UpstreamClient({
      ...config.upstream,
      baseUrl,
      onCall: (call) => metrics.upstreamCall(call),
      onBreakerChange: (change) => {
        metrics.breaker(change.origin, change.state);
        (change.state === 'closed' ? logger.info : logger.warn).call(logger, { breaker: change }, `circuit breaker ${change.state}`);
      },
    });
  metrics.upstreamLoad(() => upstream.load);
  const store = 'store' in options ? options.store : createStore(config, { logger, metrics });
  // Registered queries are shared where lookups are: through Redis when there is one.
  // In trusted-documents mode nothing is registered: a store of no consequence.
  const apqStore =
    options.apqStore ?? (config.trustedDocuments ? memoryApqStore(config.persistedQueries) : createApqStore(config, { logger, metrics }));
  const lookups = new Lookups(upstream, {
    store,
    keep: config.cache.enabled,
    ttlMs: config.cache.ttlMs,
    notFoundTtlMs: config.cache.notFoundTtlMs,
    keySecret: config.cache.keySecret,
    // Processes sharing a store must agree on keys (the workers of an instance, instances sharing Redis).
    sharedKeys: store !== undefined && store.kind !== 'memory',
    onResult: (op, result) => {
      if (result !== 'off') metrics.cacheLookup(op, result);
    },
  });
  const production = config.nodeEnv === 'production';
  const documentCache = useDocumentCache();
  const graphqlEndpoint = GRAPHQL_PATH;
  let stopping = false;
  const readiness = coalesced(readinessOf(upstream, store));
  const ops: OpsAnswers = {
    readiness: () => (stopping ? Promise.resolve(STOPPING) : readiness()),
    metricsText: coalesced(options.metricsText ?? (() => metrics.registry.metrics())),
    contentType: metrics.registry.contentType,
  };
  // With an operations port, the GraphQL port keeps only the cheap /health.
  const opsRoutes: ReadonlySet<OpsRoute> = new Set(config.opsPort === undefined ? OPS_ROUTES : ['/health']);

  const report = new OperationReport({ logger, metrics, tracing });
  const cors = {
    origin: config.corsOrigins === '*' ? '*' : [...config.corsOrigins],
    methods: ['GET', 'POST', 'OPTIONS'],
    allowedHeaders: ['authorization', 'content-type', 'cache-control', 'x-request-id', CSRF_HEADER],
    exposedHeaders: ['x-request-id'],
    // The token travels in a header, never a cookie, so no credentials mode is needed.
    credentials: false,
    maxAge: 600,
  };
  const isDev = config.nodeEnv === 'development';
  const logging = {
    debug: (...args: unknown[]) => logger.debug({ args }, 'yoga'),
    info: (...args: unknown[]) => logger.info({ args }, 'yoga'),
    warn: (...args: unknown[]) => logger.warn({ args }, 'yoga'),
    // Yoga logs the original of every masked error here. An upstream failure is the
    // upstream's, not ours: a warning with its kind and status, no stack.
    error: (...args: unknown[]) => {
      const cause = rootCause(args[0]);
      if (cause instanceof UpstreamError) {
        logger.warn(
          {
            upstreamError: {
              kind: cause.kind,
              path: cause.path,
              status: cause.status,
              code: cause.upstreamCode,
              reason: 'reason' in cause ? cause.reason : undefined,
              // What the network said (ECONNREFUSED, ENOTFOUND, a certificate error): how a wrong UPSTREAM_URL shows.
              cause: networkCause(cause.cause),
            },
          },
          'upstream failure',
        );
      } else {
        logger.error({ err: args[0] }, 'unexpected error');
      }
    },
  };

  const pluginList = usePluginList();
  // Plugins whose Yoga hooks the fast path does the work of itself, each for the reason given.
  const replicated = new Map<Plugin, readonly YogaHook[]>();
  const done = <P extends Plugin>(plugin: P, hooks: readonly YogaHook[]): P => (replicated.set(plugin, hooks), plugin);
  const yoga = createYoga<Record<string, never>, Context>({
    schema,
    context: createContextFactory({
      upstream,
      lookups,
      concurrency: config.requestConcurrency,
      maxReceipts: config.limits.maxReceipts,
      logger,
      tracing,
    }),
    graphqlEndpoint,
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
    graphiql: {
      title: 'Consultas RUC, comprobantes y licencias: GraphQL',
      defaultQuery: EXAMPLE_OPERATION,
      headers: JSON.stringify(options.graphiqlToken ? { Authorization: `Bearer ${options.graphiqlToken}` } : {}),
    },
    renderGraphiQL,
    maskedErrors: { maskError, isDev },
    logging,
    plugins: [
      // 1. Static GraphiQL files answer before any GraphQL work (/health, /ready and /metrics never reach Yoga).
      pluginList.first,
      // GET routes only: never a JSON POST to /graphql.
      done(useGraphiQLAssets(), ['onRequest']),
      // 2. Every error gets `code` and `retryable` before anyone reads the result.
      // The fast path applies the same `resultWithContract`.
      done(useErrorContract(), ['onResultProcess']),
      // 3. The report (log line, metrics, span) and request id see every request, even those refused below.
      // The fast path calls the same report's begin, result and end.
      done(useOperationReport(report, graphqlEndpoint), ['onRequest', 'onResultProcess', 'onResponse']),
      // 4. Browser requests without a CORS preflight must carry the CSRF header.
      // A JSON POST always has its preflight, so the CSRF check lets every one through.
      done(useCsrfPrevention(), ['onRequestParse']),
      // The fast path leaves the same header out.
      done(useNoNullOrigin(), ['onResponse']),
      // 5. Token, depth, alias, directive and plan-cost limits, all before execution.
      ...useOperationLimits(config.limits, production),
      // Persisted documents: automatic persisted queries, or only the trusted documents' manifest.
      usePersistedDocuments({ manifest: config.trustedDocuments, store: apqStore }),
      // Secrets: written in the document, refused; in variables, checked before graphql-js could print them.
      useNoSecretsInDocuments(),
      useSecretVariables(),
      // 6. graphql-js executes, keys in selection order.
      useExecutor(),
      // @defer and @stream, delivered over multipart/mixed or text/event-stream.
      useIncrementalDelivery(),
      // 7. Close the upstream pools, the stores and tracing with the app.
      { onDispose: () => Promise.all([upstream.close(), store?.close(), apqStore.close?.(), tracing?.shutdown()]).then(() => undefined) },
      // 8. Parsed and validated documents, where Yoga puts its own cache: after every rule is added.
      documentCache,
      // 9. A refusal Yoga sends without a body (415, 404) gets a typed one.
      // 415 and 404 only, which the fast path never answers.
      done(useTypedRefusals(), ['onResponse']),
      ...(options.plugins ?? []),
      pluginList.last,
    ],
  });
  if (config.trustedDocuments) {
    logger.info({ trustedDocuments: Object.keys(config.trustedDocuments).length }, 'TRUSTED_DOCUMENTS: only the manifest documents run');
  }
  const fastPath = config.httpFastPath
    ? createFastPath(yoga, {
        graphqlPath: graphqlEndpoint,
        plugins: pluginList.between(),
        replicated,
        report,
        cors,
        maskError,
        isDev,
        logError: logging.error,
        onTaken: () => metrics.fastPath(),
      })
    : undefined;
  return {
    yoga,
    fastPath,
    ops,
    opsRoutes,
    knowsDocument: documentCache.knows,
    stopping: () => void (stopping = true),
    dispose: async () => void (await yoga.dispose()),
  };
}

/**
 * Yoga answers a preflight from an origin not in CORS_ORIGINS with
 * `Access-Control-Allow-Origin: null`, which sandboxed iframes and file:// pages
 * (whose origin is "null") would match. No header at all is the refusal.
 */
function useNoNullOrigin(): Plugin {
  return {
    onResponse({ response }) {
      if (response.headers.get('access-control-allow-origin') === 'null') response.headers.delete('access-control-allow-origin');
    },
  };
}

/** The code (or message) of the deepest cause with one: `ECONNREFUSED`, `ENOTFOUND`, `CERT_HAS_EXPIRED`, ... */
function networkCause(error: unknown): string | undefined {
  let found: string | undefined;
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    found = typeof code === 'string' && !code.startsWith('UND_ERR') ? code : (found ?? e.message);
  }
  return found;
}
