import type { YogaLogger } from 'graphql-yoga';
import type { Logger } from 'pino';
import { isLocalRefusal, rootCause, upstreamCodeOf, type ErrorCode } from '../errors.js';
import { UpstreamError, UpstreamHttpError } from '../upstream/errors.js';

/**
 * Upstream answers the contract gives a code of its own: the caller's input, document, plan,
 * quota, token or pace, never a fault. The operation's line already names their codes.
 */
const CONTRACT_ANSWERS: ReadonlySet<ErrorCode> = new Set([
  'INVALID_INPUT',
  'DOCUMENT_NOT_FOUND',
  'QUOTA_EXCEEDED',
  'RATE_LIMITED',
  'UNAUTHENTICATED',
  'FORBIDDEN',
]);

/**
 * Yoga's `logging`, onto our logger. Yoga logs the original of every masked error at `error`;
 * only a fault of the gateway is one. An answer the contract gives (a budget refusal, a 404, a
 * plan's 403, throttling, bad input) is logged at debug, and a failure of the upstream (it is
 * unavailable, or its answer unusable) is a warning; both with their kind and status, no stack.
 */
export function yogaLogging(logger: Logger, { holdsThePlan = false }: { holdsThePlan?: boolean } = {}): YogaLogger {
  // Signed in, the upstream's 401 or 403 refuses the gateway's own plan token: the operator's to fix.
  const answers = holdsThePlan
    ? new Set([...CONTRACT_ANSWERS].filter((c) => c !== 'UNAUTHENTICATED' && c !== 'FORBIDDEN'))
    : CONTRACT_ANSWERS;
  return {
    // Yoga says two debug lines per operation: nothing is built for them at the usual info level.
    debug: (...args: unknown[]) => void (logger.isLevelEnabled('debug') && logger.debug({ args }, 'yoga')),
    info: (...args: unknown[]) => logger.info({ args }, 'yoga'),
    warn: (...args: unknown[]) => logger.warn({ args }, 'yoga'),
    error: (...args: unknown[]) => {
      const cause = rootCause(args[0]);
      if (isLocalRefusal(cause)) return logger.debug({ refusal: cause.name }, 'local refusal');
      if (!(cause instanceof UpstreamError)) return logger.error({ err: args[0] }, 'unexpected error');
      // A refusal repeated without a call (a rejected token's other fields) was logged with its call.
      const answer = answers.has(upstreamCodeOf(cause)!) || (cause instanceof UpstreamHttpError && cause.withoutCall);
      (answer ? logger.debug : logger.warn).call(
        logger,
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
        answer ? 'upstream refusal' : 'upstream failure',
      );
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
