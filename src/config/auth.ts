import { z } from 'zod';
import { secretFile } from './secret-file.js';

/** The sandbox's identity provider as AUTH_JWKS_URL: only with the built-in sandbox (UPSTREAM_URL unset). */
export const SANDBOX_IDENTITY = 'sandbox';

/** Who the sandbox's sign-in tokens are for, and what the gateway checks in that mode. */
export const SANDBOX_AUDIENCE = 'registro-gateway';

/** Where the sandbox publishes its keys, as identity providers do; its issuer is its own URL. */
export const SANDBOX_JWKS_PATH = '/.well-known/jwks.json';

/**
 * The sign-in mode's variables: callers prove who they are with a JWT, the gateway holds the
 * plan's token, and each subject has a budget of plan queries (docs/auth.md).
 */
export const AuthEnv = z.object({
  /**
   * JWKS of the identity provider: with it, every request needs a JWT signed by one of its keys, and the gateway calls with
   * UPSTREAM_TOKEN. `sandbox`: the built-in sandbox's. @default unset: the caller's token goes upstream as it is
   */
  AUTH_JWKS_URL: z
    .union([z.literal(SANDBOX_IDENTITY), z.url({ protocol: /^https?$/, message: 'AUTH_JWKS_URL debe ser una URL http(s) o sandbox' })])
    .optional(),
  /** The JWT's `iss` must be this (required with NODE_ENV=production). @default unset: not checked */
  AUTH_ISSUER: z.string().min(1).optional(),
  /** The JWT's `aud` must hold this (required with NODE_ENV=production). @default unset: not checked */
  AUTH_AUDIENCE: z.string().min(1).optional(),
  /** The claim that names the caller, for budgets and fairness. @default 'sub' */
  AUTH_SUBJECT_CLAIM: z.string().min(1).default('sub'),
  /** The plan's token, sent upstream in sign-in mode (never shown anywhere). @default unset */
  UPSTREAM_TOKEN: z.string().trim().min(1).optional(),
  /** A file holding the plan's token (a mounted secret), instead of UPSTREAM_TOKEN. @default unset */
  UPSTREAM_TOKEN_FILE: secretFile().optional(),
  /** Plan queries one subject may spend per BUDGET_WINDOW_MS, in sign-in mode. @default unset: no budget */
  BUDGET_QUERIES: z.coerce.number().int().min(1).max(1_000_000_000).optional(),
  /** The budget's window; windows start at multiples of it since the epoch (a day: at 00:00 UTC). @default 86400000 (24 h) */
  BUDGET_WINDOW_MS: z.coerce
    .number()
    .int()
    .min(1000)
    .max(366 * 24 * 3600_000)
    .default(24 * 3600_000),
  /**
   * While the shared count (Redis) cannot be reached: `local` counts on in this instance from the
   * last count it saw for each subject; `refuse` refuses paid calls (BUDGET_UNAVAILABLE). @default 'local'
   */
  BUDGET_WHEN_STORE_DOWN: z.enum(['local', 'refuse']).default('local'),
});

type AuthVars = z.output<typeof AuthEnv> & { UPSTREAM_URL?: string | undefined; NODE_ENV?: string | undefined };

/** The rules between the variables above: each broken one is an issue naming its variable. */
export function checkAuth(env: AuthVars, ctx: z.RefinementCtx): void {
  const issue = (variable: string, message: string) => ctx.addIssue({ code: 'custom', path: [variable], message });
  if (env.UPSTREAM_TOKEN && env.UPSTREAM_TOKEN_FILE) issue('UPSTREAM_TOKEN_FILE', 'use UPSTREAM_TOKEN o UPSTREAM_TOKEN_FILE, no ambos');
  if (!env.AUTH_JWKS_URL) {
    // Pass-through mode sends each caller's own token: a plan token here would be a mistake, never used.
    if (env.UPSTREAM_TOKEN || env.UPSTREAM_TOKEN_FILE)
      issue('UPSTREAM_TOKEN', 'UPSTREAM_TOKEN solo se usa con AUTH_JWKS_URL (modo con inicio de sesión)');
    return;
  }
  if (env.AUTH_JWKS_URL === SANDBOX_IDENTITY) {
    if (env.UPSTREAM_URL) issue('AUTH_JWKS_URL', 'AUTH_JWKS_URL=sandbox solo sirve con el sandbox integrado (sin UPSTREAM_URL)');
    return;
  }
  if (!env.UPSTREAM_TOKEN && !env.UPSTREAM_TOKEN_FILE) {
    issue('UPSTREAM_TOKEN', 'AUTH_JWKS_URL requiere UPSTREAM_TOKEN (o UPSTREAM_TOKEN_FILE): el token del plan con el que llama el gateway');
  }
  if (env.NODE_ENV === 'production') {
    if (!env.AUTH_ISSUER) issue('AUTH_ISSUER', 'con NODE_ENV=production, AUTH_JWKS_URL requiere AUTH_ISSUER');
    if (!env.AUTH_AUDIENCE) issue('AUTH_AUDIENCE', 'con NODE_ENV=production, AUTH_JWKS_URL requiere AUTH_AUDIENCE');
  }
}

/** Sign-in mode as the code reads it; undefined in pass-through mode. `sandbox` is resolved by main. */
export function authOf(env: z.output<typeof AuthEnv>) {
  if (!env.AUTH_JWKS_URL) return undefined;
  return {
    jwksUrl: env.AUTH_JWKS_URL,
    issuer: env.AUTH_ISSUER,
    audience: env.AUTH_AUDIENCE,
    subjectClaim: env.AUTH_SUBJECT_CLAIM,
    /** Unset only for `sandbox` until main fills it with the sandbox's token. */
    planToken: env.UPSTREAM_TOKEN ?? env.UPSTREAM_TOKEN_FILE,
    /** Undefined: no budget (BUDGET_QUERIES unset). */
    budget:
      env.BUDGET_QUERIES === undefined
        ? undefined
        : { queries: env.BUDGET_QUERIES, windowMs: env.BUDGET_WINDOW_MS, whenStoreDown: env.BUDGET_WHEN_STORE_DOWN },
  };
}

export type AuthConfig = NonNullable<ReturnType<typeof authOf>>;

/** `auth` with AUTH_JWKS_URL=sandbox resolved: the sandbox at `url` signs callers in, and its `token` is the plan's. */
export function resolvedAuth(auth: AuthConfig | undefined, url: string, token: string | undefined): AuthConfig | undefined {
  if (auth?.jwksUrl !== SANDBOX_IDENTITY || !token) return auth;
  return { ...auth, jwksUrl: url + SANDBOX_JWKS_PATH, issuer: url, audience: SANDBOX_AUDIENCE, planToken: token };
}
