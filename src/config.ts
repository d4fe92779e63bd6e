import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const millis = z.coerce.number().int().min(1).max(600_000);
const count = z.coerce.number().int().min(0);

const EnvSchema = z
  .object({
    /** @default 4000 */
    PORT: port.default(4000),
    /** @default '0.0.0.0' */
    HOST: z.string().min(1).default('0.0.0.0'),
    /** Base URL of the REST service; may carry a path prefix (`https://apiperu.dev/api`). Unset: the built-in sandbox. */
    UPSTREAM_URL: z.url({ protocol: /^https?$/, message: 'UPSTREAM_URL debe ser una URL http(s)' }).optional(),
    /** @default 10000 */
    UPSTREAM_TIMEOUT_MS: millis.default(10_000),
    /** @default 60000 */
    UPSTREAM_BATCH_TIMEOUT_MS: millis.default(60_000),
    /** How many upstream calls one request may have in flight at once. @default 8 */
    UPSTREAM_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(8),
    /** Where lookups go when the primary is unavailable. @default unset */
    UPSTREAM_FALLBACK_URL: z.url({ protocol: /^https?$/, message: 'UPSTREAM_FALLBACK_URL debe ser una URL http(s)' }).optional(),
    /** Retries of a lookup whose failure is retryable. @default 2 */
    UPSTREAM_RETRIES: count.max(10).default(2),
    /** One deadline over all attempts of a lookup. @default 15000 */
    UPSTREAM_DEADLINE_MS: millis.default(15_000),
    /** Consecutive retryable failures that open an origin's breaker. @default 5 */
    BREAKER_THRESHOLD: count.min(1).max(1000).default(5),
    /** How long an open breaker refuses calls before one probe. @default 10000 */
    BREAKER_COOLDOWN_MS: millis.default(10_000),
    /** Depth of a selection, introspection aside; ours nest 3 deep at most. @default 6 */
    MAX_DEPTH: count.min(1).max(100).default(6),
    /** @default 20 */
    MAX_ALIASES: count.max(1000).default(20),
    /** @default 3000 */
    MAX_TOKENS: count.min(10).max(1_000_000).default(3000),
    /** @default 10 */
    MAX_DIRECTIVES: count.max(1000).default(10),
    /** Largest request body; a larger one gets HTTP 413. @default 102400 */
    MAX_BODY_BYTES: count
      .min(1024)
      .max(100 * 1024 * 1024)
      .default(100 * 1024),
    /** Most plan queries one operation may be able to spend. @default 100 */
    MAX_OPERATION_COST: count.min(1).default(100),
    /** Comma-separated origins allowed by CORS, or `*`. @default '*' */
    CORS_ORIGINS: z.string().default('*'),
    /** How long shutdown waits for operations in flight. @default 10000 */
    SHUTDOWN_TIMEOUT_MS: millis.default(10_000),
    /** @default 'info' */
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    NODE_ENV: z.enum(['development', 'production', 'test']).optional(),
  })
  .superRefine((env, ctx) => {
    if (env.NODE_ENV === 'production' && !env.UPSTREAM_URL) {
      ctx.addIssue({
        code: 'custom',
        path: ['UPSTREAM_URL'],
        message:
          'NODE_ENV=production requires UPSTREAM_URL (for example https://api.apiperu.dev); the built-in sandbox serves sample data only',
      });
    }
  });

export interface Config {
  readonly port: number;
  readonly host: string;
  /** Undefined means: start the built-in sandbox and point at it. */
  readonly upstreamUrl: string | undefined;
  readonly upstreamTimeoutMs: number;
  readonly upstreamBatchTimeoutMs: number;
  readonly upstreamConcurrency: number;
  readonly upstreamFallbackUrl: string | undefined;
  readonly upstreamRetries: number;
  readonly upstreamDeadlineMs: number;
  readonly breakerThreshold: number;
  readonly breakerCooldownMs: number;
  readonly limits: {
    readonly maxDepth: number;
    readonly maxAliases: number;
    readonly maxTokens: number;
    readonly maxDirectives: number;
    readonly maxBodyBytes: number;
    readonly maxOperationCost: number;
  };
  /** `'*'` or the list of allowed origins. */
  readonly corsOrigins: '*' | readonly string[];
  readonly shutdownTimeoutMs: number;
  readonly logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  readonly nodeEnv: 'development' | 'production' | 'test' | undefined;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Parses the environment once; the only reader of process.env. Throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Blank variables count as unset, as a shell's `FOO= npm start` means.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    upstreamUrl: e.UPSTREAM_URL,
    upstreamTimeoutMs: e.UPSTREAM_TIMEOUT_MS,
    upstreamBatchTimeoutMs: e.UPSTREAM_BATCH_TIMEOUT_MS,
    upstreamConcurrency: e.UPSTREAM_CONCURRENCY,
    upstreamFallbackUrl: e.UPSTREAM_FALLBACK_URL,
    upstreamRetries: e.UPSTREAM_RETRIES,
    upstreamDeadlineMs: e.UPSTREAM_DEADLINE_MS,
    breakerThreshold: e.BREAKER_THRESHOLD,
    breakerCooldownMs: e.BREAKER_COOLDOWN_MS,
    limits: Object.freeze({
      maxDepth: e.MAX_DEPTH,
      maxAliases: e.MAX_ALIASES,
      maxTokens: e.MAX_TOKENS,
      maxDirectives: e.MAX_DIRECTIVES,
      maxBodyBytes: e.MAX_BODY_BYTES,
      maxOperationCost: e.MAX_OPERATION_COST,
    }),
    corsOrigins: parseOrigins(e.CORS_ORIGINS),
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    logLevel: e.LOG_LEVEL,
    nodeEnv: e.NODE_ENV,
  });
}

function parseOrigins(value: string): '*' | readonly string[] {
  const origins = value
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  return origins.includes('*') ? '*' : Object.freeze(origins);
}
