import { availableParallelism } from 'node:os';
import { z } from 'zod';

/** SUNAT's registers from the built-in sandbox: only with it (UPSTREAM_URL unset). */
export const SANDBOX_PADRON = 'sandbox';
/** Where the sandbox publishes its registers, under SUNAT's file names. */
export const SANDBOX_PADRON_PATH = '/__sandbox/padron/';

/** How often a gateway on the sandbox's register looks for a new one: a newcomer's `siguiente-dia` is seen within it. */
export const SANDBOX_REFRESH_MS = 30_000;
/** Days of the register's changes kept when PADRON_CHANGES_DAYS does not say. */
export const CHANGES_DAYS = 90;

const millis = z.coerce
  .number()
  .int()
  .min(1)
  .max(30 * 24 * 3600_000);

/** SUNAT's public registers kept by the gateway (docs/padron.md). */
export const PadronEnv = z.object({
  /** `off`; `sunat`: SUNAT's addresses; `sandbox`: the built-in sandbox's; or a mirror's base URL holding the five zips under SUNAT's names. @default 'off' */
  PADRON: z
    .union([
      z.enum(['off', 'sunat', SANDBOX_PADRON]),
      z.url({ protocol: /^https?$/, message: 'PADRON debe ser off, sunat, sandbox o una URL http(s)' }),
    ])
    .default('off'),
  /** Where the register's index lives. @default './data/padron' */
  PADRON_DIR: z.string().min(1).default('./data/padron'),
  /** A register older than this (from its date) is not used: the service answers. @default 172800000 (48 h) */
  PADRON_MAX_AGE_MS: millis.default(48 * 3600_000),
  /** How often a new register is fetched and imported, in the background. Unset: 24 h; 30 s with PADRON=sandbox (its next day comes on request). */
  PADRON_REFRESH_MS: millis.optional(),
  /** Threads that run `buscarContribuyentes`, each reading the index on its own; 0: on the event loop. Unset: the machine's cores. */
  PADRON_SEARCH_THREADS: z.coerce.number().int().min(0).max(64).optional(),
  /** Days of the register's changes kept (`cambiosPadron`, `Contribuyente.cambios`). @default 90 */
  PADRON_CHANGES_DAYS: z.coerce.number().int().min(1).max(3650).default(CHANGES_DAYS),
});

type Env = z.output<typeof PadronEnv> & { UPSTREAM_URL?: string | undefined };

export function checkPadron(env: Env, ctx: z.RefinementCtx): void {
  if (env.PADRON === SANDBOX_PADRON && env.UPSTREAM_URL) {
    ctx.addIssue({ code: 'custom', path: ['PADRON'], message: 'PADRON=sandbox solo con el sandbox integrado (sin UPSTREAM_URL)' });
  }
}

/** The register's settings; undefined when it is off. `source` is `sandbox` until main knows the sandbox's URL. */
export function padronOf(e: Env) {
  if (e.PADRON === 'off') return undefined;
  const searchThreads = e.PADRON_SEARCH_THREADS ?? availableParallelism();
  const refreshMs = e.PADRON_REFRESH_MS ?? (e.PADRON === SANDBOX_PADRON ? SANDBOX_REFRESH_MS : 24 * 3600_000);
  return {
    source: e.PADRON,
    dir: e.PADRON_DIR,
    maxAgeMs: e.PADRON_MAX_AGE_MS,
    refreshMs,
    searchThreads,
    changesDays: e.PADRON_CHANGES_DAYS,
  };
}
