import { UpstreamHttpError } from './errors.js';

/**
 * What the upstream refused during one request, so that the request sends no call it already
 * knows the answer to: a rejected token (401) stops every further call with it, and a 403 that
 * refuses an operation to the plan stops that operation's further calls. Each such call fails at
 * once with the same refusal, marked as made without a call (`UpstreamHttpError.withoutCall`).
 */
export class Refusals {
  #token: UpstreamHttpError | undefined;
  #paths: Map<string, UpstreamHttpError> | undefined;
  /** Set by whoever recalls other requests' refusals (src/data/lookups.ts), once per request. */
  recalled: Promise<void> | undefined;

  /** Takes note of an upstream answer that refuses the token or the operation; anything else is ignored. */
  note(error: unknown): void {
    if (!(error instanceof UpstreamHttpError)) return;
    if (error.reason === 'unauthenticated') this.#token ??= error;
    else if (error.reason === 'forbidden' && !this.#paths?.has(error.path)) (this.#paths ??= new Map()).set(error.path, error);
  }

  /** The refusal a call to `path` would get, repeated without a call; undefined when none is known. */
  refusal(path: string): UpstreamHttpError | undefined {
    const known = this.#token ?? this.#paths?.get(path);
    return known && UpstreamHttpError.repeated(known, path);
  }
}
