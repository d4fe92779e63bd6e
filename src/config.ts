import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { AuthEnv, authOf, checkAuth, resolvedAuth } from './config/auth.js';
import { checkPadron, PadronEnv, padronOf, SANDBOX_PADRON, SANDBOX_PADRON_PATH } from './config/padron.js';
import { deepFreeze, type DeepReadonly } from './config/freeze.js';
import { WebhooksEnv, webhooksOf } from './config/webhooks.js';
import { checkSunat, SANDBOX_SUNAT, SANDBOX_SUNAT_CREDENTIALS, SunatEnv, sunatOf } from './config/sunat.js';
import { messageOf } from './config/issues.js';

const SPANISH = z.locales.es();

/** Receipts one batch field takes by default (MAX_RECEIPTS); the schema's descriptions name it. */
export const DEFAULT_MAX_RECEIPTS = 1000;

const port = z.coerce.number().int().min(0).max(65535);
const millis = z.coerce.number().int().min(1).max(600_000);
const count = z.coerce.number().int().min(0);
/** The longest time to live: of a setting, and of what never changes (a past date's exchange rate). */
const MAX_TTL_MS = 30 * 24 * 3600_000;
const millisLong = z.coerce.number().int().min(1).max(MAX_TTL_MS);

const ONE_PROCESS =
  'el gateway corre en un solo proceso (solo se acepta 1). Para escalar, inicie varias instancias con el mismo REDIS_URL (docs/deploy.md)';
/**
 * The public environment: every variable the gateway reads, its rule and its default, stated
 * once. docs/configuration.md's table lists exactly these (test/config.test.ts holds the two alike).
 */
export const EnvSchema = z.object({
  /** @default 4000 */
  PORT: port.default(4000),
  /** @default '0.0.0.0' */
  HOST: z.string().min(1).default('0.0.0.0'),
  /**
   * The built-in sandbox's port on 127.0.0.1 (without UPSTREAM_URL): fixed, so a subscription to its receiver outlives a
   * restart; when taken, any free one. 0: any. @default 4010
   */
  SANDBOX_PORT: port.default(4010),
  /** A port of its own for /metrics and /ready (and /health), on HOST; the GraphQL port then keeps only /health. @default unset: all on PORT */
  OPS_PORT: port.optional(),
  /** Base URL of the REST service; may carry a path prefix (`https://apiperu.dev/api`). Unset: the built-in sandbox. */
  UPSTREAM_URL: z.url({ protocol: /^https?$/, message: 'UPSTREAM_URL debe ser una URL http(s)' }).optional(),
  /** @default 10000 */
  UPSTREAM_TIMEOUT_MS: millis.default(10_000),
  /** @default 60000 */
  UPSTREAM_BATCH_TIMEOUT_MS: millis.default(60_000),
  /** Connections to each upstream origin, opened as demand needs them; when all are busy, tokens take turns for them. @default 1024 */
  UPSTREAM_CONNECTIONS: count.min(1).max(65_536).default(1024),
  /** How many upstream calls one request may have in flight at once. @default 8 */
  UPSTREAM_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(8),
  /** The longest `Retry-After` of a throttling 429 honoured; a longer, infinite or far-off one counts as this. @default 300000 (5 min) */
  UPSTREAM_RETRY_AFTER_MAX_MS: millisLong.min(1000).default(300_000),
  /** Where lookups go when the primary is unavailable. @default unset */
  UPSTREAM_FALLBACK_URL: z.url({ protocol: /^https?$/, message: 'UPSTREAM_FALLBACK_URL debe ser una URL http(s)' }).optional(),
  /** Retries of a lookup whose call certainly cost nothing (never sent, or the upstream's 503). @default 2 */
  UPSTREAM_RETRIES: count.max(10).default(2),
  /** One deadline over all attempts of a lookup. @default 15000 */
  UPSTREAM_DEADLINE_MS: millis.default(15_000),
  /** Percentage of an origin's calls in the window that must fail for its breaker to open (more than this). @default 50 */
  BREAKER_FAILURE_PERCENT: z.coerce.number().gt(0).lt(100).default(50),
  /** Calls an origin must have had in the window before its breaker may open at all. @default 20 */
  BREAKER_MIN_CALLS: count.min(1).max(1_000_000).default(20),
  /** The sliding window over which the breaker counts calls and failures. @default 10000 */
  BREAKER_WINDOW_MS: millis.min(1000).default(10_000),
  /** How long an open breaker refuses calls before one probe. @default 10000 */
  BREAKER_COOLDOWN_MS: millis.default(10_000),
  /** Depth of a selection; ours nest 3 deep at most (introspection has a bound of its own, 20). @default 6 */
  MAX_DEPTH: count.min(1).max(100).default(6),
  /** @default 20 */
  MAX_ALIASES: count.max(1000).default(20),
  /** @default 3000 */
  MAX_TOKENS: count.min(10).max(1_000_000).default(3000),
  /** @default 10 */
  MAX_DIRECTIVES: count.max(1000).default(10),
  /** Largest request body; a larger one gets HTTP 413. The default admits a batch of MAX_RECEIPTS' default. @default 262144 */
  MAX_BODY_BYTES: count
    .min(1024)
    .max(100 * 1024 * 1024)
    .default(256 * 1024),
  /** GraphQL requests in progress at once per process; past it 503 OVERLOADED, but for a caller under its share (src/http/server.ts). @default 2048 */
  MAX_CONCURRENT_REQUESTS: count.min(1).max(100_000).default(2048),
  /** node:http's headersTimeout: a request's headers must arrive within it. @default 10000 */
  HTTP_HEADERS_TIMEOUT_MS: millis.default(10_000),
  /** A request's body must arrive within it, or 408 REQUEST_TIMEOUT. @default 15000 */
  HTTP_REQUEST_TIMEOUT_MS: millis.default(15_000),
  /** node:http's keepAliveTimeout: an idle keep-alive connection is closed after it. @default 5000 */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: millis.default(5_000),
  /** Receipts one batch validation field takes, sent upstream in calls of 100. @default 1000 */
  MAX_RECEIPTS: count.min(1).max(100_000).default(DEFAULT_MAX_RECEIPTS),
  /** RUCs one contribuyentes list takes; of them, at most 100 that the register does not hold. @default 10000 */
  MAX_RUCS_PER_LIST: count.min(1).max(100_000).default(10_000),
  /** Most plan queries one operation may be able to spend. @default 100 */
  MAX_OPERATION_COST: count.min(1).default(100),
  /** Comma-separated origins allowed by CORS, or `*`. @default '*' */
  CORS_ORIGINS: z.string().default('*'),
  /** `off` keeps no answers (every lookup asks the upstream again); calls in flight are still shared (COALESCE). @default 'on' */
  CACHE: z.enum(['on', 'off']).default('on'),
  /** `off`: concurrent identical lookups each make their own call instead of sharing one. @default 'on' */
  COALESCE: z.enum(['on', 'off']).default('on'),
  /** @default 21600000 (6 h) */
  CACHE_TTL_RUC_MS: millisLong.default(6 * 3600_000),
  /** @default 21600000 (6 h) */
  CACHE_TTL_RUC_SUNAT_MS: millisLong.default(6 * 3600_000),
  /** @default 86400000 (24 h) */
  CACHE_TTL_LICENCIA_MS: millisLong.default(24 * 3600_000),
  /** @default 86400000 (24 h) */
  CACHE_TTL_DNI_MS: millisLong.default(24 * 3600_000),
  /** Today's exchange rate (or a date's to come): SUNAT may publish it later in the day. A past date's never changes (30 days). @default 3600000 (1 h) */
  CACHE_TTL_TIPO_DE_CAMBIO_MS: millisLong.default(3600_000),
  /** @default 600000 (10 min) */
  CACHE_TTL_NOT_FOUND_MS: millisLong.default(10 * 60_000),
  /**
   * How long past its time to live a found record is kept, to be answered (marked stale) when
   * refreshing it finds the upstream unavailable (stale-if-error, RFC 5861); 0 turns it off. @default 86400000 (24 h)
   */
  CACHE_STALE_IF_ERROR_MS: count.max(MAX_TTL_MS).default(24 * 3600_000),
  /** @default 10000 */
  CACHE_MAX_ENTRIES: count.min(1).default(10_000),
  /** @default 52428800 (50 MiB) */
  CACHE_MAX_BYTES: count.min(1024).default(50 * 1024 * 1024),
  /** Persisted queries (APQ) kept, per instance in memory and in all in Redis: anyone may register one. @default 10000 */
  APQ_MAX_ENTRIES: count.min(1).max(1_000_000).default(10_000),
  /** UTF-8 bytes of those documents together, in memory and in Redis, apart from the lookup cache. @default 4194304 (4 MiB) */
  APQ_MAX_BYTES: count
    .min(1024)
    .max(1024 * 1024 * 1024)
    .default(4 * 1024 * 1024),
  /** Shared cache for every instance. @default unset (an in-memory LRU per process) */
  REDIS_URL: z.url({ protocol: /^rediss?$/, message: 'REDIS_URL debe ser redis:// o rediss://' }).optional(),
  /** `on`: REDIS_URL is one node of a Redis Cluster (managed Redis in cluster mode, Valkey); the others are found from it. @default off */
  REDIS_CLUSTER: z.enum(['on', 'off']).default('off'),
  /** Secret of the HMAC that stands for the token in cache keys. @default unset */
  CACHE_KEY_SECRET: z.string().min(16, 'CACHE_KEY_SECRET debe tener al menos 16 caracteres').optional(),
  /** Only `1`: one process per instance; a fleet is several instances sharing REDIS_URL (docs/deploy.md). @default 1 */
  WORKERS: z
    .string()
    .refine((v) => Number(v) === 1, ONE_PROCESS)
    .default('1'),
  /** How long shutdown waits for operations in flight. @default 10000 */
  SHUTDOWN_TIMEOUT_MS: millis.default(10_000),
  /**
   * How long a stop keeps serving, `/ready` already 503, before it stops accepting: time for a
   * load balancer's probes to see it (Kubernetes: its readiness period times its failure threshold). @default 0
   */
  SHUTDOWN_DELAY_MS: count.max(600_000).default(0),
  /** @default 'info' */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  NODE_ENV: z.enum(['development', 'production', 'test']).optional(),
  /** `off`: no GraphiQL page (a browser's GET of /graphql is refused like any GET without a query), in production too. @default 'on' */
  GRAPHIQL: z.enum(['on', 'off']).default('on'),
  /** Answer JSON POSTs to /graphql straight from node:http (src/http/fast-path.ts) rather than through Yoga's Fetch layer. @default 'on' */
  HTTP_FAST_PATH: z.enum(['on', 'off']).default('on'),
  /** A trusted-documents manifest (JSON: hash -> document): only its documents run. @default unset: any document, and automatic persisted queries */
  TRUSTED_DOCUMENTS: z
    .string()
    .transform((path, ctx) => {
      try {
        const manifest: unknown = JSON.parse(readFileSync(path, 'utf8'));
        const ok = typeof manifest === 'object' && manifest !== null && Object.values(manifest).every((d) => typeof d === 'string');
        if (ok && Object.keys(manifest).length > 0) return manifest as Record<string, string>;
        ctx.addIssue({ code: 'custom', message: `${path} no es un objeto JSON de hash a documento` });
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: `no se pudo leer ${path}: ${(error as Error).message}` });
      }
      return z.NEVER;
    })
    .optional(),
  /** OTLP/HTTP endpoint for traces (spans go to `<endpoint>/v1/traces`). @default unset: no tracing */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  // Sign-in mode (src/config/auth.ts); SUNAT's registers (src/config/padron.ts); their webhooks (src/config/webhooks.ts);
  // SUNAT's free receipt validation (src/config/sunat.ts).
  ...AuthEnv.shape,
  ...PadronEnv.shape,
  ...WebhooksEnv.shape,
  ...SunatEnv.shape,
});

/** The configuration the code reads, shaped for its readers, derived from the environment in one place. */
const ConfigSchema = EnvSchema.superRefine((env, ctx) => {
  if (env.NODE_ENV === 'production' && !env.UPSTREAM_URL) {
    ctx.addIssue({
      code: 'custom',
      path: ['UPSTREAM_URL'],
      message:
        'NODE_ENV=production requiere UPSTREAM_URL (por ejemplo https://api.apiperu.dev); el sandbox integrado solo sirve datos de muestra',
    });
  }
  checkAuth(env, ctx);
  checkPadron(env, ctx);
  checkSunat(env, ctx);
}).transform((e) => ({
  port: e.PORT,
  host: e.HOST,
  sandboxPort: e.SANDBOX_PORT,
  /** The operations port, when /metrics and /ready are served apart from GraphQL. */
  opsPort: e.OPS_PORT,
  /** The UpstreamClient's options as they are; `baseUrl` undefined: main starts the built-in sandbox. */
  upstream: {
    baseUrl: e.UPSTREAM_URL,
    fallbackUrl: e.UPSTREAM_FALLBACK_URL,
    timeoutMs: e.UPSTREAM_TIMEOUT_MS,
    batchTimeoutMs: e.UPSTREAM_BATCH_TIMEOUT_MS,
    connections: e.UPSTREAM_CONNECTIONS,
    retries: e.UPSTREAM_RETRIES,
    deadlineMs: e.UPSTREAM_DEADLINE_MS,
    retryAfterMaxMs: e.UPSTREAM_RETRY_AFTER_MAX_MS,
    breaker: {
      failurePercent: e.BREAKER_FAILURE_PERCENT,
      minCalls: e.BREAKER_MIN_CALLS,
      windowMs: e.BREAKER_WINDOW_MS,
      cooldownMs: e.BREAKER_COOLDOWN_MS,
    },
  },
  /** Upstream calls one request may have in flight at once. */
  requestConcurrency: e.UPSTREAM_CONCURRENCY,
  limits: {
    maxDepth: e.MAX_DEPTH,
    maxAliases: e.MAX_ALIASES,
    maxTokens: e.MAX_TOKENS,
    maxDirectives: e.MAX_DIRECTIVES,
    maxOperationCost: e.MAX_OPERATION_COST,
    maxReceipts: e.MAX_RECEIPTS,
    maxRucsPerList: e.MAX_RUCS_PER_LIST,
  },
  http: {
    maxBodyBytes: e.MAX_BODY_BYTES,
    maxConcurrent: e.MAX_CONCURRENT_REQUESTS,
    headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
  },
  corsOrigins: parseOrigins(e.CORS_ORIGINS),
  cache: {
    enabled: e.CACHE === 'on',
    coalesce: e.COALESCE === 'on',
    leaseMs: e.UPSTREAM_DEADLINE_MS + 1000,
    /** The times to live a lookup's row (src/upstream/lookups.ts) picks its record's from. */
    ttlMs: {
      ruc: e.CACHE_TTL_RUC_MS,
      rucSunat: e.CACHE_TTL_RUC_SUNAT_MS,
      licencia: e.CACHE_TTL_LICENCIA_MS,
      dni: e.CACHE_TTL_DNI_MS,
      /** An exchange rate of today or a date to come (SUNAT may publish it later that day). */
      rate: e.CACHE_TTL_TIPO_DE_CAMBIO_MS,
      /** A past date's exchange rate, which never changes. */
      pastRate: MAX_TTL_MS,
    },
    notFoundTtlMs: e.CACHE_TTL_NOT_FOUND_MS,
    staleIfErrorMs: e.CACHE_STALE_IF_ERROR_MS,
    maxEntries: e.CACHE_MAX_ENTRIES,
    maxBytes: e.CACHE_MAX_BYTES,
    redisUrl: e.REDIS_URL,
    redisCluster: e.REDIS_CLUSTER === 'on',
    keySecret: e.CACHE_KEY_SECRET,
  },
  persistedQueries: { maxEntries: e.APQ_MAX_ENTRIES, maxBytes: e.APQ_MAX_BYTES },
  httpFastPath: e.HTTP_FAST_PATH === 'on',
  graphiql: e.GRAPHIQL === 'on',
  trustedDocuments: e.TRUSTED_DOCUMENTS,
  otelEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
  shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
  shutdownDelayMs: e.SHUTDOWN_DELAY_MS,
  logLevel: e.LOG_LEVEL,
  nodeEnv: e.NODE_ENV,
  /** Sign-in mode (docs/auth.md); undefined: each caller's token goes upstream as it is. */
  auth: authOf(e),
  /** SUNAT's registers kept by the gateway; undefined: off. */
  padron: padronOf(e),
  /** Subscriptions to the register's changes and their signed deliveries. */
  webhooks: webhooksOf(e),
  /** SUNAT's free receipt validation: its hosts, its pace, and the gateway's own credentials. */
  sunat: sunatOf(e),
}));

/** The parsed configuration; its type is the schema's output. */
export type Config = DeepReadonly<z.output<typeof ConfigSchema>>;

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Parses the environment once; the only reader of process.env. Throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Blank variables count as unset, as a shell's `FOO= npm start` means.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  // zod's own messages in Spanish, as the schema's custom ones are.
  const parsed = ConfigSchema.safeParse(present, { error: SPANISH.localeError });
  if (!parsed.success) {
    // One message per variable, its most specific rule, the last (`count.min(1)` breaks `count`'s `min(0)` too).
    const byVariable = new Map<string, string>();
    for (const i of parsed.error.issues) byVariable.set(i.path.join('.') || '(env)', messageOf(i, present));
    const lines = [...byVariable].map(([name, message]) => `  ${name}: ${message}`);
    throw new ConfigError(`Configuración inválida:\n${lines.join('\n')}`);
  }
  return deepFreeze(parsed.data);
}

/** The one GraphQL endpoint: fixed, not a setting, so that clients, docs and messages all name the same path. */
export const GRAPHQL_PATH = '/graphql';

/** The configuration of an empty environment: the defaults, for a part built without options (a test's client or store); stated once, in EnvSchema. */
export const DEFAULTS: Config = loadConfig({});

/**
 * The same configuration, pointed at `baseUrl` (main's built-in sandbox): its sign-in (AUTH_JWKS_URL=sandbox, `sandboxToken` the
 * plan's), registers (PADRON=sandbox) and SUNAT.
 */
export function withUpstream(config: Config, baseUrl: string, sandboxToken?: string): Config {
  const padron = config.padron?.source === SANDBOX_PADRON ? { ...config.padron, source: baseUrl + SANDBOX_PADRON_PATH } : config.padron;
  return deepFreeze({
    ...config,
    upstream: { ...config.upstream, baseUrl },
    auth: resolvedAuth(config.auth, baseUrl, sandboxToken),
    padron,
    sunat: {
      ...config.sunat,
      apiUrl: config.sunat.apiUrl === SANDBOX_SUNAT ? baseUrl : config.sunat.apiUrl,
      authUrl: config.sunat.authUrl === SANDBOX_SUNAT ? baseUrl : config.sunat.authUrl,
      ratesUrl: config.sunat.ratesUrl === SANDBOX_SUNAT ? baseUrl : config.sunat.ratesUrl,
      // The sandbox's own SUNAT validates for free with its sample credentials, unless others are set.
      credentials: config.sunat.credentials ?? (config.sunat.apiUrl === SANDBOX_SUNAT ? SANDBOX_SUNAT_CREDENTIALS : undefined),
    },
  });
}

function parseOrigins(value: string): '*' | readonly string[] {
  const origins = value.split(',').flatMap((o) => (o.trim() ? [o.trim()] : []));
  return origins.includes('*') ? '*' : Object.freeze(origins);
}
