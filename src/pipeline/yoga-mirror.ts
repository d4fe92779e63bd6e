import type { IncomingMessage } from 'node:http';
import { getCORSHeadersByRequestAndOptions, type CORSOptions } from '@whatwg-node/server';
import { GraphQLError } from 'graphql';
import { createGraphQLError, isAsyncIterable, processRegularResult, type GraphQLParams, type Plugin } from 'graphql-yoga';

/**
 * What the node:http fast path (src/http/fast-path.ts) must do as Yoga does for a JSON POST and
 * Yoga does not export, in one place, each part naming the Yoga code it follows; what Yoga does
 * export (`getResultForParams`: the onParams hooks, its parameter checks, the operation through
 * envelop, the onExecutionResult hooks; `processRegularResult`) the fast path calls. The choice of
 * an answer's media type is here too, which the executor and the server read. CI runs the tests
 * against the newest graphql-yoga 5.x (scripts/yoga-latest.sh), so an upgrade is a lockfile change.
 */

// ---- The hooks: which Yoga hooks exist around an operation, and which the fast path runs as Yoga does.
/** Yoga's hooks around an operation, beyond envelop's (which the fast path runs as Yoga does, through `getEnveloped`). */
export const YOGA_HOOKS = ['onRequest', 'onRequestParse', 'onParams', 'onExecutionResult', 'onResultProcess', 'onResponse'] as const;
export type YogaHook = (typeof YOGA_HOOKS)[number];
/** Those the fast path runs for any plugin, as Yoga does (the first two through Yoga's own getResultForParams). */
const HOOKS_RUN_AS_YOGA_DOES: ReadonlySet<string> = new Set(['onParams', 'onExecutionResult', 'onResultProcess']);
/** Instrumentation around envelop's own steps, which `getEnveloped` runs on both paths; Yoga's others (request, operation, ...) not. */
const ENVELOP_INSTRUMENTATION: ReadonlySet<string> = new Set(['init', 'parse', 'validate', 'context', 'execute', 'subscribe']);

/** Where a plugin declares which of its Yoga hooks the fast path does the work of itself, and why. */
export const FAST_PATH = Symbol('gateway.fastPath');
export interface FastPathTreatment {
  /** Hooks the fast path does not run because it does their work itself. */
  readonly doesItself: readonly YogaHook[];
  /** Why that is the same work, in a sentence. */
  readonly because: string;
}
export type DeclaredPlugin = Plugin & { readonly [FAST_PATH]?: FastPathTreatment };

/** The plugin, declaring how the fast path treats it. */
export function treatedByFastPath<P extends Plugin>(plugin: P, treatment: FastPathTreatment): P & DeclaredPlugin {
  return Object.assign(plugin, { [FAST_PATH]: treatment });
}

/** The Yoga hooks (and instrumentation steps) of a plugin that the fast path would not run. */
export function hooksTheFastPathSkips(plugin: DeclaredPlugin): string[] {
  const doesItself: readonly string[] = plugin[FAST_PATH]?.doesItself ?? [];
  const skipped: string[] = YOGA_HOOKS.filter(
    (hook) => plugin[hook] !== undefined && !HOOKS_RUN_AS_YOGA_DOES.has(hook) && !doesItself.includes(hook),
  );
  for (const step of Object.keys(plugin.instrumentation ?? {}))
    if (!ENVELOP_INSTRUMENTATION.has(step)) skipped.push(`instrumentation.${step}`);
  return skipped;
}

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

// ---- The request: which bodies the fast path takes, and Yoga's node adapter's Request.
/** The GraphQL parameters of a JSON body the fast path takes; Yoga's own onParams hook checks the rest of them. */
export type Params = GraphQLParams & { query: string };

/** A body the fast path takes: an object (not a batch) with the document in it; Yoga checks the rest as for any request. */
export function isParams(body: unknown): body is Params {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && typeof (body as Params).query === 'string';
}

/** Yoga's test for a JSON body (`isContentTypeMatch`), byte for byte. */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  // The part before the first comma, found without splitting the whole header (per request).
  const comma = contentType.indexOf(',');
  const first = comma < 0 ? contentType : contentType.slice(0, comma);
  return first === 'application/json' || first.startsWith('application/json;');
}

/**
 * The request as a Fetch `Request` made with Yoga's own `fetchAPI` (the class Yoga hands its
 * plugins): method, URL and headers, as whatwg-node's `normalizeNodeRequest` makes it, without
 * the body (already read) and the abort controller it hangs on the response (the client-gone
 * signal is the gateway's own: src/schema/client-gone.ts).
 */
export function fetchRequestOf(req: IncomingMessage, fetchAPI: { Request: typeof Request }): Request {
  const headers: Record<string, string> = {};
  for (const name in req.headers) {
    const value = req.headers[name];
    if (value !== undefined) headers[name] = typeof value === 'string' ? value : value.join(', ');
  }
  return new fetchAPI.Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers });
}

// ---- An error thrown before the operation ran (by an onParams hook): Yoga's `handleError` (error.js), not exported.
/** A result as Yoga's hooks hand it on: one (with its serializer, if any) or a stream. */
export type Result = Parameters<Parameters<NonNullable<Plugin['onExecutionResult']>>[0]['setResult']>[0];

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

// ---- The answer: Yoga's `processRegularResult` and whatwg-node's CORS headers.
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The HTTP answer Yoga writes for one JSON result, with the CORS headers whatwg-node adds. */
export async function answerOf(
  result: Result,
  {
    fetchAPI,
    mediaType,
    request,
    cors,
  }: { fetchAPI: Parameters<typeof processRegularResult>[1]; mediaType: string; request: Request; cors: CORSOptions },
): Promise<Answer> {
  let answer: Answer;
  if (!isAsyncIterable(result) && !result.errors?.length && !result.extensions?.['http']) {
    // What processRegularResult does for a result without errors, without the Response object.
    answer = {
      status: 200,
      headers: { 'Content-Type': `${mediaType}; charset=utf-8` },
      body: (result.stringify ?? JSON.stringify)(result),
    };
  } else {
    const response = await processRegularResult(result, fetchAPI, mediaType);
    const headers: Record<string, string> = {};
    response.headers.forEach((value, key) => (headers[key] = value));
    answer = { status: response.status, headers, body: await response.text() };
  }
  Object.assign(answer.headers, getCORSHeadersByRequestAndOptions(request, cors));
  answer.headers['content-length'] = String(Buffer.byteLength(answer.body));
  return answer;
}
