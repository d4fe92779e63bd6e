import { GraphQLError } from 'graphql';
import { createGraphQLError } from 'graphql-yoga';

/**
 * What the node:http fast path (src/http/fast-path.ts) must do as Yoga does and Yoga does not
 * export, and nothing else: the choice of an answer's media type (which the executor and the
 * server read too), the test for a JSON body, and the handling of an error a hook throws, each
 * naming the Yoga code it follows. What Yoga exports the fast path calls. CI runs the tests
 * against the newest graphql-yoga 5.x (scripts/yoga-latest.sh), so an upgrade is a lockfile change.
 */

// ---- The answer's media type: Yoga's `useResultProcessors` and `result-processor/accept.js`.
/** Yoga's processors, in its order; the last match wins. Only the first two can send a stream. */
const PROCESSORS = [
  { mediaTypes: ['text/event-stream'], streams: true },
  { mediaTypes: ['multipart/mixed'], streams: true },
  { mediaTypes: ['application/graphql-response+json', 'application/json'], streams: false },
] as const;

/** The media types an `Accept` asks for, in the order Yoga tries them (utf-8 only; none given is any). */
function requested(accept: string | null | undefined): string[] {
  return (accept || '*/*')
    .replace(/\s/g, '')
    .toLowerCase()
    .split(',')
    .flatMap((entry) => {
      const [mediaType, ...params] = entry.split(';');
      // Only utf-8 is served; utf-8 is assumed when no charset is given.
      const charset = params.find((p) => p.includes('charset=')) ?? 'charset=utf-8';
      return mediaType !== undefined && charset === 'charset=utf-8' ? [mediaType] : [];
    })
    .reverse();
}

/** Yoga's `isMatchingMediaType`: a wildcard on the asked side matches. */
function matches(processorType: string, askedType: string): boolean {
  const [pre, suf] = processorType.split('/');
  const [askedPre, askedSuf] = askedType.split('/');
  return (askedPre === '*' || askedPre === pre) && (askedSuf === '*' || askedSuf === suf);
}

/** Clients send a handful of distinct `Accept` values: each is worked out once (a bounded few are kept). */
const chosenFor = [new Map<string, string | undefined>(), new Map<string, string | undefined>()];

/**
 * The media type Yoga answers with for this `Accept`, for a stream (`stream`) or a single result;
 * undefined when it would have none (it then answers an empty 406, after running the operation).
 */
export function answerMediaType(accept: string | null | undefined, stream: boolean): string | undefined {
  const known = chosenFor[stream ? 1 : 0]!;
  const key = accept ?? '';
  if (known.has(key)) return known.get(key);
  const chosen = choose(accept, stream);
  if (known.size < 256) known.set(key, chosen);
  return chosen;
}

function choose(accept: string | null | undefined, stream: boolean): string | undefined {
  const asked = requested(accept);
  let chosen: string | undefined;
  for (const processor of PROCESSORS) {
    if (stream && !processor.streams) continue;
    for (const type of asked) for (const mediaType of processor.mediaTypes) if (matches(mediaType, type)) chosen = mediaType;
  }
  return chosen;
}

/** The JSON media type Yoga would answer a single result with for this `Accept`; undefined when it would choose another or none. */
export function jsonMediaTypeOf(accept: string | undefined): string | undefined {
  const chosen = answerMediaType(accept, false);
  return chosen === 'application/json' || chosen === 'application/graphql-response+json' ? chosen : undefined;
}

// ---- The request's body: Yoga's `isContentTypeMatch` (request-parser/utils.js).
/** Yoga's test for a JSON body, byte for byte. */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  // The part before the first comma, found without splitting the whole header (per request).
  const comma = contentType.indexOf(',');
  const first = comma < 0 ? contentType : contentType.slice(0, comma);
  return first === 'application/json' || first.startsWith('application/json;');
}

// ---- An error thrown before the operation ran (by an onParams hook): Yoga's `handleError` (error.js), not exported.
export interface ErrorOptions {
  maskError: (error: unknown, message: string, isDev?: boolean) => Error;
  isDev: boolean;
  /** Yoga's `logging.error`, given the original of every error that was masked. */
  logError: (error: unknown) => void;
}

/** Yoga's `handleError` with masking on: an aggregate's errors each, an abort none, anything else masked (and logged when masking changed it). */
export function errorHandler(options: ErrorOptions): (error: unknown) => GraphQLError[] {
  const handleError = (error: unknown): GraphQLError[] => {
    if (typeof error === 'object' && error !== null && 'errors' in error && Array.isArray(error.errors))
      return error.errors.flatMap(handleError);
    if (error instanceof DOMException && (error.name === 'AbortError' || error.name === 'TimeoutError')) return [];
    const masked = options.maskError(error, 'Unexpected error.', options.isDev);
    if (masked !== error) options.logError(error);
    return [masked instanceof GraphQLError ? masked : createGraphQLError(masked.message, { originalError: masked })];
  };
  return handleError;
}
