import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

/**
 * What the fast path (./fast-path.ts) reads of a request, with Yoga's own rules: whether it is
 * a JSON POST it can take, the media type Yoga would answer with, the GraphQL parameters, and
 * the part of the Fetch `Request` the plugins read, over node's request.
 */
export interface Params {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
  extensions?: Record<string, unknown> | null;
}

const PARAM_NAMES = new Set(['query', 'variables', 'operationName', 'extensions']);
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isOptionalObject = (v: unknown) => v == null || isPlainObject(v);

/** The body's GraphQL parameters when they are what Yoga's own checks would accept without a word. */
export function paramsOf(body: unknown): Params | undefined {
  if (!isPlainObject(body) || typeof body['query'] !== 'string') return undefined;
  for (const key in body) if (body[key] != null && !PARAM_NAMES.has(key)) return undefined;
  const { variables, operationName, extensions } = body;
  if (!isOptionalObject(variables) || !isOptionalObject(extensions)) return undefined;
  if (operationName != null && typeof operationName !== 'string') return undefined;
  return body as unknown as Params;
}

/**
 * The media type Yoga's result processors would answer a single result with, for this
 * `Accept`, when the processor is the regular JSON one; undefined when Yoga would choose
 * another (SSE, multipart) or none (406): those requests go to Yoga. The same walk as Yoga's
 * `useResultProcessors` (the last match wins) over the same parsing of the header.
 */
function regularMediaType(accept: string | undefined): string | undefined {
  const requested = (accept || '*/*')
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
  let chosen: { processor: string; mediaType: string } | undefined;
  for (const { processor, mediaTypes } of RESULT_PROCESSORS) {
    for (const asked of requested) {
      for (const mediaType of mediaTypes) if (matches(mediaType, asked)) chosen = { processor, mediaType };
    }
  }
  return chosen?.processor === 'regular' ? chosen.mediaType : undefined;
}

/** Yoga's processors for a result that is not a stream, in its order. */
const RESULT_PROCESSORS = [
  { processor: 'sse', mediaTypes: ['text/event-stream'] },
  { processor: 'multipart', mediaTypes: ['multipart/mixed'] },
  { processor: 'regular', mediaTypes: ['application/graphql-response+json', 'application/json'] },
];

/** Yoga's `isMatchingMediaType`: a wildcard on the asked side matches. */
function matches(processorType: string, askedType: string): boolean {
  const [pre, suf] = processorType.split('/');
  const [askedPre, askedSuf] = askedType.split('/');
  return (askedPre === '*' || askedPre === pre) && (askedSuf === '*' || askedSuf === suf);
}

/** Clients send a handful of distinct `Accept` values; each is worked out once. */
const mediaTypes = new Map<string, string | undefined>();
export function mediaTypeOf(accept: string | undefined): string | undefined {
  const key = accept ?? '';
  if (mediaTypes.has(key)) return mediaTypes.get(key);
  const found = regularMediaType(accept);
  if (mediaTypes.size < 256) mediaTypes.set(key, found);
  return found;
}

/** Yoga's own test for a JSON body (`isContentTypeMatch`), byte for byte. */
export function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  // The part before the first comma, found without splitting the whole header (per request).
  const comma = contentType.indexOf(',');
  const first = comma < 0 ? contentType : contentType.slice(0, comma);
  return first === 'application/json' || first.startsWith('application/json;');
}

/** The part of the Fetch `Headers` interface the plugins read, over node's header object. */
class NodeHeaders {
  constructor(private readonly raw: IncomingHttpHeaders) {}
  get(name: string): string | null {
    const value = this.raw[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  }
  has(name: string): boolean {
    return this.raw[name.toLowerCase()] !== undefined;
  }
  keys(): IterableIterator<string> {
    return Object.keys(this.raw)[Symbol.iterator]();
  }
  *entries(): IterableIterator<[string, string]> {
    for (const key of Object.keys(this.raw)) yield [key, this.get(key)!];
  }
  forEach(fn: (value: string, key: string) => void): void {
    for (const [key, value] of this.entries()) fn(value, key);
  }
  [Symbol.iterator]() {
    return this.entries();
  }
}

/** The part of the Fetch `Request` interface the envelop plugins and the context read. */
export class NodeRequest {
  readonly method: string;
  readonly headers: NodeHeaders;
  constructor(private readonly req: IncomingMessage) {
    this.method = req.method ?? 'GET';
    this.headers = new NodeHeaders(req.headers);
  }
  get url(): string {
    return `http://${this.req.headers.host ?? 'localhost'}${this.req.url ?? '/'}`;
  }
}
