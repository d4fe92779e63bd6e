import { hash } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  jwksCache,
  jwtVerify,
  type JSONWebKeySet,
  type JWKSCacheInput,
  type JWTPayload,
  type JWTVerifyOptions,
} from 'jose';
import { LRUCache } from 'lru-cache';
import { Budget, type BudgetSettings } from '../data/budget.js';
import type { BudgetCounter } from '../data/budgets.js';
import { gatewayError } from '../errors.js';
import { bearerToken } from '../schema/context.js';
import { requestState } from '../schema/request-state.js';

/** The signatures accepted: RSA, P-256 and Ed25519 keys; never `none` nor a shared secret (HMAC). */
export const ALGORITHMS = ['RS256', 'ES256', 'EdDSA'];
/** How far `exp` and `nbf` may be off, for clocks that disagree a little. */
export const CLOCK_TOLERANCE_S = 30;
/** A token naming a key not kept makes one fetch of the JWKS at most this often (a rotated key is then found). */
export const REFETCH_AFTER_MS = 5000;
/** How long fetched keys are used before they are fetched again (a key the provider dropped then goes too). */
export const KEYS_KEPT_MS = 10 * 60_000;
/** How long the identity provider has to answer. */
const JWKS_TIMEOUT_MS = 5000;
/**
 * How long a token once verified is taken again without a signature check (never past its
 * `exp`): verifying each request was most of sign-in mode's cost (docs/performance.md).
 */
export const VERIFIED_FOR_MS = 60_000;
/** Tokens remembered as verified, at most (by a hash of each: never the token itself). */
const MAX_VERIFIED = 10_000;

export interface SignInOptions {
  jwksUrl: string;
  issuer?: string | undefined;
  audience?: string | undefined;
  subjectClaim: string;
  /** Each subject's budget; undefined: none (BUDGET_QUERIES unset). */
  budget: BudgetSettings | undefined;
  budgets: BudgetCounter | undefined;
  /** Told of every refusal, by reason (for /metrics: never the subject). */
  onRefused?: (reason: Refusal) => void;
}

export type Refusal = 'missing' | 'invalid' | 'expired' | 'no_subject' | 'unavailable' | 'budget';

type Verified = { subject: string } | { refused: Exclude<Refusal, 'budget'> };

/**
 * Verifies sign-in tokens with jose against the identity provider's JWKS: its keys fetched once
 * and kept (refetched after 10 minutes, or for a key not kept, at most every REFETCH_AFTER_MS).
 * When the provider cannot be reached or hangs, the keys it last published still verify what they signed.
 */
export function createVerifier(
  options: Omit<SignInOptions, 'budget' | 'budgets' | 'onRefused'>,
  keysKeptMs = KEYS_KEPT_MS,
): (token: string | undefined) => Promise<Verified> {
  const kept: JWKSCacheInput = {};
  const remote = createRemoteJWKSet(new URL(options.jwksUrl), {
    cooldownDuration: REFETCH_AFTER_MS,
    cacheMaxAge: keysKeptMs,
    timeoutDuration: JWKS_TIMEOUT_MS,
    [jwksCache]: kept,
  });
  // A sign-in token that never expires is refused.
  const checks: JWTVerifyOptions = {
    algorithms: ALGORITHMS,
    clockTolerance: CLOCK_TOLERANCE_S,
    requiredClaims: ['exp'],
    ...(options.issuer ? { issuer: options.issuer } : {}),
    ...(options.audience ? { audience: options.audience } : {}),
  };
  const verified = new LRUCache<string, { subject: string; until: number }>({ max: MAX_VERIFIED, ttlAutopurge: false });
  const subjectOf = (key: string, payload: JWTPayload): Verified => {
    const subject = payload[options.subjectClaim];
    if (typeof subject !== 'string' || subject.length === 0) return { refused: 'no_subject' };
    verified.set(key, { subject, until: Math.min(Date.now() + VERIFIED_FOR_MS, (payload.exp! + CLOCK_TOLERANCE_S) * 1000) });
    return { subject };
  };
  const keptKeys = localSetOf(kept);
  let nextRefetch = 0;
  return async (token) => {
    if (!token) return { refused: 'missing' };
    const key = hash('sha256', token, 'base64url');
    const known = verified.get(key);
    if (known && Date.now() < known.until) return { subject: known.subject };
    // Keys due for a refetch: the kept ones verify now while the provider is asked in the
    // background, at most every REFETCH_AFTER_MS, so a provider that hangs or is down delays nobody.
    const stale = remote.fresh ? undefined : keptKeys();
    if (stale) {
      if (!remote.reloading && performance.now() >= nextRefetch) {
        nextRefetch = performance.now() + REFETCH_AFTER_MS;
        remote.reload().catch(() => undefined);
      }
      try {
        return subjectOf(key, (await jwtVerify(token, stale, checks)).payload);
      } catch (error) {
        // A key not kept is the provider's to say, as below; anything else is the token's fault.
        if (!(error instanceof errors.JWKSNoMatchingKey)) return { refused: refusalOf(error) };
      }
    }
    try {
      return subjectOf(key, (await jwtVerify(token, remote, checks)).payload);
    } catch (error) {
      return { refused: providerUnreachable(error) ? 'unavailable' : refusalOf(error) };
    }
  };
}

/** The keys jose last fetched (its `jwksCache`), as a local set, made again only when they change. */
function localSetOf(kept: JWKSCacheInput): () => ReturnType<typeof createLocalJWKSet> | undefined {
  let local: { jwks: JSONWebKeySet; set: ReturnType<typeof createLocalJWKSet> } | undefined;
  return () => {
    if (!('jwks' in kept)) return undefined;
    if (local?.jwks !== kept.jwks) local = { jwks: kept.jwks, set: createLocalJWKSet(kept.jwks) };
    return local.set;
  };
}

/** jose could not get the key set: a time-out, a network error, a status other than 200, or a body that is no JWKS. */
function providerUnreachable(error: unknown): boolean {
  if (!(error instanceof errors.JOSEError)) return true;
  return error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || error.code === errors.JOSEError.code;
}

function refusalOf(error: unknown): 'invalid' | 'expired' {
  return error instanceof errors.JWTExpired ? 'expired' : 'invalid';
}

const UNAVAILABLE_MESSAGE = 'El proveedor de identidad no responde y ninguna clave guardada verifica el token; reintente en unos segundos.';
/** When to try again after AUTH_UNAVAILABLE: the provider's keys are asked again after REFETCH_AFTER_MS. */
const RETRY_AFTER_S = Math.ceil(REFETCH_AFTER_MS / 1000);

const MESSAGES: Record<Exclude<Refusal, 'budget' | 'unavailable'>, string> = {
  missing: 'Falta el token de inicio de sesión: envíe Authorization: Bearer <JWT> de su proveedor de identidad.',
  invalid: 'El token de inicio de sesión no es válido (firma, algoritmo, emisor, audiencia, vigencia o formato).',
  expired: 'El token de inicio de sesión venció: inicie sesión de nuevo.',
  no_subject: 'El token de inicio de sesión no dice quién es el usuario (falta la claim de AUTH_SUBJECT_CLAIM).',
};

/**
 * Sign-in mode: every GraphQL request carries a JWT, verified before anything else runs (and
 * so before any upstream call); the caller is then its subject, with a budget read once. A
 * refusal answers the whole request: 401 with `WWW-Authenticate`, or 503 when the identity
 * provider is out of reach.
 */
export function useSignIn(options: SignInOptions): Plugin {
  const verify = createVerifier(options);
  return {
    onParams: async ({ request }) => {
      const verified = await verify(bearerToken(request.headers.get('authorization')));
      if ('subject' in verified) {
        const state = requestState(request);
        const { budget: settings, budgets } = options;
        // The subject stands as one hash, where callers take turns and in its budget's key: never in clear.
        const caller = hash('sha256', verified.subject, 'base64url');
        const budget = settings && budgets && (await Budget.open(budgets, caller, settings, () => options.onRefused?.('budget')));
        state.signedIn = { caller, budget };
        return;
      }
      options.onRefused?.(verified.refused);
      // Thrown, not set as the result: no later hook (persisted documents) may answer instead.
      throw verified.refused === 'unavailable'
        ? gatewayError('AUTH_UNAVAILABLE', UNAVAILABLE_MESSAGE, {
            extensions: { retryAfterSeconds: RETRY_AFTER_S, http: { status: 503, headers: { 'Retry-After': String(RETRY_AFTER_S) } } },
          })
        : gatewayError('UNAUTHENTICATED', MESSAGES[verified.refused], {
            extensions: { http: { status: 401, headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } } },
          });
    },
  };
}
