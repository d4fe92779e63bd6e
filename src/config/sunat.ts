import { join } from 'node:path';
import { z } from 'zod';
import { secretFile } from './secret-file.js';

/** SUNAT's own hosts (docs/sunat.md); `sandbox`: the built-in sandbox's, which answers their calls. */
export const SUNAT_API = 'https://api.sunat.gob.pe';
export const SUNAT_AUTH = 'https://api-seguridad.sunat.gob.pe';
export const SANDBOX_SUNAT = 'sandbox';
/** SUNAT's page of exchange rates, whose month listing `TIPO_DE_CAMBIO=sunat` reads. */
export const SUNAT_RATES_HOST = 'https://e-consulta.sunat.gob.pe';
/** The built-in sandbox's sample credentials (its banner prints them): `npm start` validates through its SUNAT with them. */
export const SANDBOX_SUNAT_CREDENTIALS = {
  rucEmpresa: '20100123453',
  clientId: 'sandbox-client-id',
  clientSecret: 'sandbox-client-secret',
} as const;

const host = (name: string) =>
  z.union([z.literal(SANDBOX_SUNAT), z.url({ protocol: /^https?$/, message: `${name} debe ser una URL http(s) o sandbox` })]).optional();

/** SUNAT's free receipt validation (docs/sunat.md). */
export const SunatEnv = z.object({
  /** The gateway's own SUNAT API credentials: with all three, every validation goes to SUNAT. @default unset */
  SUNAT_API_CLIENT_ID: z.string().trim().min(1).max(200).optional(),
  /** @default unset (never shown anywhere) */
  SUNAT_API_CLIENT_SECRET: z.string().trim().min(1).max(500).optional(),
  /** A file holding the client secret (a mounted secret), instead of SUNAT_API_CLIENT_SECRET. @default unset */
  SUNAT_API_CLIENT_SECRET_FILE: secretFile().optional(),
  /** The RUC the credentials belong to: the company asking. @default unset */
  // Its form only: the check digit is the REST side's (upstream/keys.ts, a floor up), and SUNAT refuses a wrong RUC anyway.
  SUNAT_API_RUC: z
    .string()
    .trim()
    .regex(/^(10|15|16|17|20)\d{9}$/, 'SUNAT_API_RUC debe ser un RUC: 11 dígitos que empiezan con 10, 15, 16, 17 o 20')
    .optional(),
  /** SUNAT's API host. @default SUNAT's with UPSTREAM_URL set; `sandbox` without */
  SUNAT_API_URL: host('SUNAT_API_URL'),
  /** SUNAT's token host. @default SUNAT's with UPSTREAM_URL set; `sandbox` without */
  SUNAT_AUTH_URL: host('SUNAT_AUTH_URL'),
  /** Calls to SUNAT in flight per clientId. @default 5 */
  SUNAT_API_CONCURRENCY: z.coerce.number().int().min(1).max(50).default(5),
  /** One call to SUNAT. @default 10000 */
  SUNAT_API_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  /** `servicio`: a receipt SUNAT could not answer (down, after the retries) goes to the paid service, billed. @default 'off' */
  SUNAT_API_FALLBACK: z.enum(['off', 'servicio']).default('off'),
  /**
   * Whose exchange rates: `sunat` (SUNAT's month listing, free), `sandbox`, `servicio` (always the paid lookup), or a mirror's
   * base URL answering SUNAT's listing path. @default `sunat` with UPSTREAM_URL set; `sandbox` without
   */
  /** Receipts one background validation takes. @default 50000 */
  VALIDACION_MASIVA_MAX: z.coerce.number().int().min(1).max(1_000_000).default(50_000),
  /** Unfinished background validations one caller may have at once. @default 3 */
  VALIDACION_MASIVA_POR_LLAMANTE: z.coerce.number().int().min(1).max(1000).default(3),
  /** Days a finished validation's results are kept. @default 30 */
  VALIDACION_MASIVA_DIAS: z.coerce.number().int().min(1).max(3650).default(30),
  /** Where background validations live without REDIS_URL. @default PADRON_DIR/validaciones */
  VALIDACION_DIR: z.string().min(1).optional(),
  TIPO_DE_CAMBIO: z
    .union([
      z.enum(['sunat', SANDBOX_SUNAT, 'servicio']),
      z.url({ protocol: /^https?$/, message: 'TIPO_DE_CAMBIO debe ser sunat, sandbox, servicio o una URL http(s)' }),
    ])
    .optional(),
});

type Env = z.output<typeof SunatEnv> & { UPSTREAM_URL?: string | undefined; PADRON_DIR: string };

export function checkSunat(env: Env, ctx: z.RefinementCtx): void {
  const secret = env.SUNAT_API_CLIENT_SECRET ?? env.SUNAT_API_CLIENT_SECRET_FILE;
  if (env.SUNAT_API_CLIENT_SECRET && env.SUNAT_API_CLIENT_SECRET_FILE)
    ctx.addIssue({
      code: 'custom',
      path: ['SUNAT_API_CLIENT_SECRET_FILE'],
      message: 'use SUNAT_API_CLIENT_SECRET o SUNAT_API_CLIENT_SECRET_FILE, no ambos',
    });
  const given = [env.SUNAT_API_CLIENT_ID, secret, env.SUNAT_API_RUC].filter((v) => v !== undefined).length;
  if (given > 0 && given < 3)
    ctx.addIssue({
      code: 'custom',
      path: ['SUNAT_API_CLIENT_ID'],
      message: 'las credenciales de la API de SUNAT van juntas: SUNAT_API_CLIENT_ID, SUNAT_API_CLIENT_SECRET (o _FILE) y SUNAT_API_RUC',
    });
}

export function sunatOf(e: Env) {
  const secret = e.SUNAT_API_CLIENT_SECRET ?? e.SUNAT_API_CLIENT_SECRET_FILE;
  return {
    apiUrl: e.SUNAT_API_URL ?? (e.UPSTREAM_URL ? SUNAT_API : SANDBOX_SUNAT),
    authUrl: e.SUNAT_AUTH_URL ?? (e.UPSTREAM_URL ? SUNAT_AUTH : SANDBOX_SUNAT),
    concurrency: e.SUNAT_API_CONCURRENCY,
    timeoutMs: e.SUNAT_API_TIMEOUT_MS,
    fallback: e.SUNAT_API_FALLBACK,
    /** Where SUNAT's month listing of exchange rates is read; undefined: the paid lookup only. */
    ratesUrl: ratesUrlOf(e.TIPO_DE_CAMBIO ?? (e.UPSTREAM_URL ? 'sunat' : SANDBOX_SUNAT)),
    jobs: {
      max: e.VALIDACION_MASIVA_MAX,
      perCaller: e.VALIDACION_MASIVA_POR_LLAMANTE,
      keptDays: e.VALIDACION_MASIVA_DIAS,
      dir: e.VALIDACION_DIR ?? join(e.PADRON_DIR, 'validaciones'),
    },
    /** Where read months of rates are kept without Redis. */
    ratesDir: join(e.PADRON_DIR, 'tipos-de-cambio'),
    /** The gateway's own credentials; undefined: only a call's `credencialesApi` goes to SUNAT. */
    credentials:
      e.SUNAT_API_CLIENT_ID && secret && e.SUNAT_API_RUC
        ? { rucEmpresa: e.SUNAT_API_RUC, clientId: e.SUNAT_API_CLIENT_ID, clientSecret: secret }
        : undefined,
  };
}

function ratesUrlOf(setting: string): string | undefined {
  if (setting === 'servicio') return undefined;
  return setting === 'sunat' ? SUNAT_RATES_HOST : setting;
}

export type SunatSettings = ReturnType<typeof sunatOf>;
