/**
 * How graphql-yoga chooses the media type of an answer from the request's `Accept`, mirrored
 * because Yoga does not export it (its `useResultProcessors` and `result-processor/accept.js`):
 * the fast path answers only what Yoga would answer as plain JSON, and the executor refuses an
 * incremental operation (@defer, @stream) whose answer Yoga would have no way to send.
 */

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

/** Whether Yoga answers a single result for this `Accept` as plain JSON (the fast path's to take). */
export const isJsonAnswer = (mediaType: string | undefined): boolean =>
  mediaType === 'application/json' || mediaType === 'application/graphql-response+json';
