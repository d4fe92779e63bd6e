import type { YogaLogger } from 'graphql-yoga';
import type { Logger } from 'pino';
import { rootCause } from '../errors.js';
import { UpstreamError, UpstreamHttpError } from '../upstream/errors.js';

/**
 * Yoga's `logging`, onto our logger. Yoga logs the original of every masked error at `error`;
 * an upstream failure is the upstream's, not ours: a warning with its kind and status, no stack.
 */
export function yogaLogging(logger: Logger): YogaLogger {
  return {
    debug: (...args: unknown[]) => logger.debug({ args }, 'yoga'),
    info: (...args: unknown[]) => logger.info({ args }, 'yoga'),
    warn: (...args: unknown[]) => logger.warn({ args }, 'yoga'),
    error: (...args: unknown[]) => {
      const cause = rootCause(args[0]);
      if (!(cause instanceof UpstreamError)) return logger.error({ err: args[0] }, 'unexpected error');
      // A refusal repeated without a call (a rejected token's other fields) was logged with its call.
      (cause instanceof UpstreamHttpError && cause.withoutCall ? logger.debug : logger.warn).call(
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
        'upstream failure',
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
