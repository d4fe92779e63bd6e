import { hash } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import { errors, type JWTPayload, type JWTVerifyOptions } from 'jose';
import { LRUCache } from 'lru-cache';
import { Budget, type BudgetSettings } from '../data/budgets.js';
import type { BudgetCounter } from '../data/budgets.js';
import { refusalError, worded, type RefusalKey } from '../errors.js';
import { bearerToken } from '../schema/context.js';
import { requestState } from '../schema/request-state.js';
import { REFETCH_AFTER_MS, SigningKeys, verifyWith } from './signing-keys.js';

/** The signatures accepted: RSA, P-256 and Ed25519 keys; never `none` nor a shared secret (HMAC). */
export const ALGORITHMS = ['RS256', 'ES256', 'EdDSA'];
/** How far `exp` and `nbf` may be off, for clocks that disagree a little. */
export const CLOCK_TOLERANCE_S = 30;
export { REFETCH_AFTER_MS };
/**
 * How long a token once verified is taken again without a signature check (never past its
 * `exp`): verifying each request was most of sign-in mode's cost (docs/performance.md).
 */
export const VERIFIED_FOR_MS = 60_000;
/** Tokens remembered as verified, at most (by a hash of each: never the token itself). */
const MAX_VERIFIED = 10_000;

export interface SignInOptions {
  /** The identity provider's keys (its JWKS), fetched at start. */
  keys: SigningKeys;
  issuer?: string | undefined;
  audience?: string | undefined;
  subjectClaim: string;
  /** Each subject's budget; undefined: none (BUDGET_QUERIES unset). */
  budget: BudgetSettings | undefined;
  budgets: BudgetCounter | undefined;
  /** Told of every refusal, by reason (for /metrics: never the subject). */
  onRefused?: (reason: Refusal) => void;
}

export type Refusal = 'missing' | 'not_a_jwt' | 'invalid' | 'expired' | 'no_subject' | 'unavailable' | 'budget';

type Verified = { subject: string } | { refused: Exclude<Refusal, 'budget'> };

/**
 * Verifies sign-in tokens with jose against the identity provider's keys as `keys` keeps them.
 * A token no kept key fits makes `keys` ask the provider (at most every REFETCH_AFTER_MS): a
 * rotated key is then found. Otherwise nobody waits for the provider, however it answers.
 */
export function createVerifier(
  options: Omit<SignInOptions, 'budget' | 'budgets' | 'onRefused'>,
): (token: string | undefined) => Promise<Verified> {
  const { keys } = options;
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
  return async (token) => {
    if (!token) return { refused: 'missing' };
    // Three base64url parts: anything else (the service's plan token, say) is no JWT, and needs no key.
    if (!JWT_SHAPE.test(token)) return { refused: 'not_a_jwt' };
    const key = hash('sha256', token, 'base64url');
    const known = verified.get(key);
    if (known && Date.now() < known.until) return { subject: known.subject };
    // Before the first keys, only the fetch already under way (the start's) is waited for.
    if (!keys.ready) await keys.asking;
    for (let asked = false; ; asked = true) {
      const kept = keys.kept();
      if (!kept) return { refused: 'unavailable' };
      const fetched = keys.fetched;
      try {
        return subjectOf(key, await verifyWith(token, kept, checks));
      } catch (error) {
        // A key not kept, or another key published since under a kept one's kid: the provider may
        // know it. If it cannot say, nobody can; a fetch that brought nothing new settles it.
        const unknownKey = error instanceof errors.JWKSNoMatchingKey;
        if (!unknownKey && !(error instanceof errors.JWSSignatureVerificationFailed)) return { refused: refusalOf(error) };
        if (asked) return { refused: unknownKey && keys.failing ? 'unavailable' : 'invalid' };
        await keys.refresh();
        if (keys.fetched === fetched) return { refused: unknownKey && keys.failing ? 'unavailable' : 'invalid' };
      }
    }
  };
}

const JWT_SHAPE = /^[\w-]+\.[\w-]+\.[\w-]*$/;

function refusalOf(error: unknown): 'invalid' | 'expired' {
  return error instanceof errors.JWTExpired ? 'expired' : 'invalid';
}

/** When to try again after AUTH_UNAVAILABLE: the provider's keys are asked again after REFETCH_AFTER_MS. */
const RETRY_AFTER_S = Math.ceil(REFETCH_AFTER_MS / 1000);

/** Each refusal's words (src/errors.ts, REFUSALS). */
const REFUSED = {
  missing: 'signInMissing',
  not_a_jwt: 'signInNotAJwt',
  invalid: 'signInInvalid',
  expired: 'signInExpired',
  no_subject: 'signInNoSubject',
  unavailable: 'signInUnavailable',
} as const satisfies Record<Exclude<Refusal, 'budget'>, RefusalKey>;

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
      const refused = worded(REFUSED[verified.refused]);
      throw verified.refused === 'unavailable'
        ? refusalError(refused, {
            retryAfterSeconds: RETRY_AFTER_S,
            http: { status: refused.status, headers: { 'Retry-After': String(RETRY_AFTER_S) } },
          })
        : refusalError(refused, { http: { status: refused.status, headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } } });
    },
  };
}
