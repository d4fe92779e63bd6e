import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65535);
const millis = z.coerce.number().int().min(1).max(600_000);

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
    logLevel: e.LOG_LEVEL,
    nodeEnv: e.NODE_ENV,
  });
}
