import type { IncomingMessage } from 'node:http';
import { getCORSHeadersByRequestAndOptions, type CORSOptions } from '@whatwg-node/server';
import { GraphQLError, getOperationAST } from 'graphql';
import {
  createGraphQLError,
  isAsyncIterable,
  processRegularResult,
  type GraphQLParams,
  type Plugin,
  type YogaServerInstance,
} from 'graphql-yoga';
import type { Context } from '../schema/context.js';

/**
 * Everything copied from graphql-yoga because it does not export it, in one place: what the
 * node:http fast path (src/http/fast-path.ts) must do exactly as Yoga does for a JSON POST, and
 * the choice of an answer's media type, which the executor reads too. Each part names the Yoga
 * code it follows. A test (test/pipeline/yoga-mirror.test.ts) fails when the installed Yoga is
 * not the version below: upgrading Yoga means reading this file against the new one.
 */
export const MIRRORED_YOGA_VERSION = '5.24.1';

// ---- The hooks: which Yoga hooks exist around an operation, and which the fast path runs as Yoga does.
/** Yoga's hooks around an operation, beyond envelop's (which the fast path runs as Yoga does, through `getEnveloped`). */
export const YOGA_HOOKS = ['onRequest', 'onRequestParse', 'onParams', 'onExecutionResult', 'onResultProcess', 'onResponse'] as const;
export type YogaHook = (typeof YOGA_HOOKS)[number];
/** Those the fast path runs for any plugin, as Yoga does. */
const HOOKS_RUN_AS_YOGA_DOES: ReadonlySet<string> = new Set(['onParams', 'onExecutionResult']);
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

// ---- The request: Yoga's checks of a JSON POST and its node adapter's Request.
/** The GraphQL parameters of a JSON body the fast path takes: Yoga's, with the document there. */
export type Params = GraphQLParams & { query: string };

const PARAM_NAMES = new Set(['query', 'variables', 'operationName', 'extensions']);
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isOptionalObject = (v: unknown) => v == null || isPlainObject(v);

/** Whether a body's GraphQL parameters pass Yoga's `checkGraphQLQueryParams` without a word (a null operationName too, as in Yoga). */
export function isParams(body: unknown): body is Params {
  if (!isPlainObject(body) || typeof body['query'] !== 'string') return false;
  for (const key in body) if (body[key] != null && !PARAM_NAMES.has(key)) return false;
  const { variables, operationName, extensions } = body;
  if (!isOptionalObject(variables) || !isOptionalObject(extensions)) return false;
  return operationName == null || typeof operationName === 'string';
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
 * plugins): method, URL and headers; the body is already read. The headers are node's own
 * object, as Yoga's node adapter passes them: a header is then read by its name, where a list of
 * pairs would be searched and lower-cased on every `get`.
 */
export function fetchRequestOf(req: IncomingMessage, fetchAPI: { Request: typeof Request }): Request {
  const headers: Record<string, string> = {};
  for (const name in req.headers) {
    const value = req.headers[name];
    if (value !== undefined) headers[name] = typeof value === 'string' ? value : value.join(', ');
  }
  return new fetchAPI.Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers });
}

// ---- The operation: Yoga's `handleError`, its params handler and `getResultForParams`.
type ParamsHandler = Parameters<NonNullable<Plugin['onParams']>>[0]['paramsHandler'];
/** A result as Yoga's hooks hand it on: one (with its serializer, if any) or a stream. */
export type Result = Parameters<Parameters<NonNullable<Plugin['onExecutionResult']>>[0]['setResult']>[0];
/** What Yoga hands its hooks as the server context: node's req and res, the request, its parameters, `waitUntil`. */
export type ServerContext = Parameters<ParamsHandler>[0]['context'];

export interface OperationOptions {
  /** The app's plugins, whose onParams and onExecutionResult hooks run here as in Yoga. */
  plugins: readonly Plugin[];
  maskError: (error: unknown, message: string, isDev?: boolean) => Error;
  isDev: boolean;
  /** Yoga's `logging.error`, given the original of every error that was masked. */
  logError: (error: unknown) => void;
}

/** What Yoga does from a request's parameters to its result, through the same envelop pipeline. */
export function createOperationRunner(
  yoga: YogaServerInstance<Record<string, never>, Context>,
  options: OperationOptions,
): (request: Request, context: ServerContext, params: GraphQLParams) => Promise<Result> {
  // Read once: each read through Yoga's adapter proxy makes a new bound function.
  const getEnveloped = yoga.getEnveloped;
  const fetchAPI = yoga.fetchAPI;
  const onParams = options.plugins.flatMap((p) => (p.onParams ? [p.onParams] : []));
  const onExecutionResult = options.plugins.flatMap((p) => (p.onExecutionResult ? [p.onExecutionResult] : []));

  const handleError = errorHandler(options);
  const run = paramsHandler(getEnveloped, handleError);

  /** Yoga's `getResultForParams`: the onParams hooks, the operation (unless a hook answered), the onExecutionResult hooks. */
  return async (request, context, params) => {
    if (onParams.length === 0 && onExecutionResult.length === 0) return run(context, params);
    try {
      let result: Result | undefined;
      let handler: ParamsHandler = (payload) => run(context, payload.params);
      for (const hook of onParams) {
        const pending = hook({
          params,
          request,
          setParams: (next) => void (params = next),
          paramsHandler: handler,
          setParamsHandler: (next) => void (handler = next),
          setResult: (next) => void (result = next),
          fetchAPI,
          context,
        });
        if (pending) await pending;
      }
      result ??= await handler({ request, params, context });
      for (const hook of onExecutionResult) {
        await hook({ result, setResult: (next) => void (result = next), request, context });
      }
      return result;
    } catch (error) {
      return { errors: handleError(error) };
    }
  };
}

/** Yoga's `handleError`: the same masking, and the original logged when it was masked. */
function errorHandler(options: OperationOptions): (error: unknown) => GraphQLError[] {
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

/** Yoga's params handler: parse, validate, context, execute, through envelop. */
function paramsHandler(
  getEnveloped: YogaServerInstance<Record<string, never>, Context>['getEnveloped'],
  handleError: (error: unknown) => GraphQLError[],
): (context: ServerContext, params: GraphQLParams) => Promise<Result> {
  return async (context, params) => {
    try {
      // Yoga's own check of the parameters, for those a hook has set.
      if (params.query === undefined) throw createGraphQLError('Must provide query string.');
      const enveloped = getEnveloped(context);
      const document = enveloped.parse(params.query);
      const errors = enveloped.validate(enveloped.schema, document);
      if (errors.length > 0) return { errors };
      const contextValue = await enveloped.contextFactory();
      const args = {
        schema: enveloped.schema,
        document,
        contextValue,
        variableValues: params.variables,
        operationName: params.operationName,
      };
      const operation = getOperationAST(document, params.operationName);
      return await (operation?.operation === 'subscription' ? enveloped.subscribe(args) : enveloped.execute(args));
    } catch (error) {
      return { errors: handleError(error) };
    }
  };
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
