import type { IncomingMessage, ServerResponse } from 'node:http';
import { getCORSHeadersByRequestAndOptions, type CORSOptions } from '@whatwg-node/server';
import { GraphQLError, getOperationAST, type ExecutionResult } from 'graphql';
import { createGraphQLError, processRegularResult, type GraphQLParams, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { INTERNAL_MESSAGE, errorBody, resultWithContract } from '../errors.js';
import { fetchRequestOf, isJson, mediaTypeOf, paramsOf, type Params } from './fast-path-request.js';
import type { OperationReport } from '../pipeline/operation-report.js';
import { ONE_RESULT_ONLY } from '../pipeline/executor.js';

/**
 * The common request, a JSON POST to /graphql, answered straight from node:http.
 *
 * Yoga wraps every request in Fetch API objects (Request, Headers, Response) and promise
 * chains, which cost more than the operation itself (docs/performance.md). Here the very same envelop pipeline runs (parse and validation caches, GraphQL
 * Armor, the cost limit, the operation report, masked errors, graphql-js):
 * only the HTTP layer around it is plain Node. What this path does not take (GET, GraphiQL,
 * other content types or `Accept` values, batches, anything unusual in the body) goes to Yoga
 * unchanged, so its errors stay Yoga's own. `HTTP_FAST_PATH=off` sends everything to Yoga; the
 * end-to-end suite runs both ways and test/e2e/fast-path.test.ts compares the two answers.
 *
 * Mirrors, in order, what Yoga does for such a request: its onRequest hooks that apply here
 * (the report's), parameter checks (held by the eligibility test), `getEnveloped(context)`,
 * parse, validate, context, execute, error handling with the same masking, the result hooks
 * (error contract, report), `processRegularResult` for any answer with errors, CORS headers
 * as whatwg-node computes them, and the report's `x-request-id`.
 */
/** Takes the request and answers when its work is over, or returns undefined to leave it to Yoga. */
export type FastPath = (req: IncomingMessage, res: ServerResponse, body: unknown) => Promise<void> | undefined;

export interface FastPathOptions {
  graphqlPath: string;
  /** Every plugin the app added to Yoga's own (`usePluginList().between()`), those they added included. */
  plugins: readonly Plugin[];
  /** The Yoga hooks of those plugins whose work this path does itself (the report's, the error contract's, ...), hook by hook. */
  replicated: ReadonlyMap<Plugin, readonly YogaHook[]>;
  report: OperationReport;
  cors: CORSOptions;
  maskError: (error: unknown, message: string, isDev?: boolean) => Error;
  isDev: boolean;
  /** Yoga's `logging.error`, given the original of every error that was masked. */
  logError: (error: unknown) => void;
  /** Called for each request this path takes (a metric counts them). */
  onTaken?: () => void;
}

/** Yoga's hooks around an operation, beyond envelop's (which run here as in Yoga, through `getEnveloped`). */
const YOGA_HOOKS = ['onRequest', 'onRequestParse', 'onParams', 'onExecutionResult', 'onResultProcess', 'onResponse'] as const;
export type YogaHook = (typeof YOGA_HOOKS)[number];
/** Those this path runs for any plugin, as Yoga does. */
const RUN_HERE: ReadonlySet<string> = new Set(['onParams', 'onExecutionResult']);
/** Instrumentation around envelop's own steps, which `getEnveloped` runs here as in Yoga; Yoga's others (request, operation, ...) it does not. */
const ENVELOP_INSTRUMENTATION: ReadonlySet<string> = new Set(['init', 'parse', 'validate', 'context', 'execute', 'subscribe']);

/**
 * The plugins between its two markers, once envelop has set them up (and so with those they
 * added through `addPlugin`): put `first` before the app's plugins and `last` after them.
 */
export function usePluginList(): { first: Plugin; last: Plugin; between(): readonly Plugin[] } {
  let all: readonly unknown[] = [];
  const first: Plugin = {};
  const last: Plugin = {
    onPluginInit({ plugins }) {
      all = plugins;
    },
  };
  return {
    first,
    last,
    between: () => {
      const from = all.indexOf(first);
      const to = all.indexOf(last);
      if (from < 0 || to < from) throw new Error('usePluginList: its markers are not among the plugins, in order');
      return all.slice(from + 1, to) as Plugin[];
    },
  };
}

/** Throws, naming it, when a plugin has a Yoga hook this path would not run: a new plugin or hook is never skipped in silence. */
function refuseUnrunHooks(plugins: readonly Plugin[], replicated: ReadonlyMap<Plugin, readonly YogaHook[]>): void {
  plugins.forEach((plugin, i) => {
    const done = replicated.get(plugin) ?? [];
    const unrun: string[] = YOGA_HOOKS.filter((hook) => plugin[hook] !== undefined && !RUN_HERE.has(hook) && !done.includes(hook));
    for (const step of Object.keys(plugin.instrumentation ?? {}))
      if (!ENVELOP_INSTRUMENTATION.has(step)) unrun.push(`instrumentation.${step}`);
    if (unrun.length > 0)
      throw new Error(
        `HTTP_FAST_PATH: plugin ${i + 1} of the app's has ${unrun.join(', ')}, which the fast path does not run; ` +
          'run it there too (src/http/fast-path.ts) or set HTTP_FAST_PATH=off',
      );
  });
}

type Result = ExecutionResult | AsyncIterable<unknown>;
type ParamsHandler = Parameters<NonNullable<Plugin['onParams']>>[0]['paramsHandler'];
/** What Yoga hands its hooks as the server context: node's req and res, the request, its parameters, `waitUntil`. */
type ServerContext = Parameters<ParamsHandler>[0]['context'];

export function createFastPath(
  yoga: YogaServerInstance<Record<string, never>, any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  options: FastPathOptions,
): FastPath {
  // Read once: each read through Yoga's adapter proxy makes a new bound function.
  const getEnveloped = yoga.getEnveloped;
  const fetchAPI = yoga.fetchAPI;
  const { report, cors, graphqlPath } = options;
  refuseUnrunHooks(options.plugins, options.replicated);
  const onParams = options.plugins.flatMap((p) => (p.onParams ? [p.onParams] : []));
  const onExecutionResult = options.plugins.flatMap((p) => (p.onExecutionResult ? [p.onExecutionResult] : []));

  /** Yoga's `handleError`: the same masking, and the original logged when it was masked. */
  const handleError = (error: unknown): GraphQLError[] => {
    if (typeof error === 'object' && error !== null && 'errors' in error && Array.isArray(error.errors)) {
      return error.errors.flatMap(handleError);
    }
    if (isAbortError(error)) return [];
    const masked = options.maskError(error, 'Unexpected error.', options.isDev);
    if (masked !== error) options.logError(error);
    return [masked instanceof GraphQLError ? masked : createGraphQLError(masked.message, { originalError: masked })];
  };

  /** The operation itself: what Yoga's params handler does. */
  const run = async (context: ServerContext, params: Params): Promise<Result> => {
    try {
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
      return (await (operation?.operation === 'subscription' ? enveloped.subscribe(args) : enveloped.execute(args))) as ExecutionResult;
    } catch (error) {
      return { errors: handleError(error) };
    }
  };

  /** Yoga's `getResultForParams`: the onParams hooks, the operation (unless a hook answered), the onExecutionResult hooks. */
  const resultFor = async (request: Request, context: ServerContext, params: Params): Promise<Result> => {
    if (onParams.length === 0 && onExecutionResult.length === 0) return run(context, params);
    try {
      let result: Result | undefined;
      let handler: ParamsHandler = (payload) => run(context, payload.params as Params) as ReturnType<ParamsHandler>;
      for (const hook of onParams) {
        const pending = hook({
          params: params as GraphQLParams,
          request,
          setParams: (next) => void (params = next as Params),
          paramsHandler: handler,
          setParamsHandler: (next) => void (handler = next),
          setResult: (next) => void (result = next),
          fetchAPI,
          context,
        });
        if (pending) await pending;
      }
      result ??= await handler({ request, params: params as GraphQLParams, context });
      for (const hook of onExecutionResult) {
        await hook({ result: result as ExecutionResult, setResult: (next) => void (result = next as Result), request, context });
      }
      return result;
    } catch (error) {
      return { errors: handleError(error) };
    }
  };

  const respond = async (req: IncomingMessage, res: ServerResponse, mediaType: string, params: Params) => {
    const request = fetchRequestOf(req, fetchAPI);
    report.begin(request, true);
    const context: ServerContext & { req: IncomingMessage; res: ServerResponse; [ONE_RESULT_ONLY]: true } = {
      req,
      res,
      // This path writes one JSON result: an incremental operation here is refused, never run.
      [ONE_RESULT_ONLY]: true,
      request,
      // A JSON body's operationName may be null where Yoga's type says undefined; Yoga passes it on alike.
      params: params as GraphQLParams,
      waitUntil: (work: Promise<unknown> | void) => void work?.catch(options.logError),
    };
    const result = resultWithContract(await resultFor(request, context, params));
    report.result(request, result as ExecutionResult);

    let status = 200;
    let headers: Record<string, string> = { 'Content-Type': `${mediaType}; charset=utf-8` };
    let body: string;
    const plain = result as ExecutionResult & { stringify?: (r: unknown) => string };
    if (!(Symbol.asyncIterator in result) && !plain.errors?.length && !plain.extensions?.['http']) {
      // What processRegularResult does for a result without errors, without the Response object.
      body = (plain.stringify ?? JSON.stringify)(plain);
    } else {
      const response = await processRegularResult(result as ExecutionResult, fetchAPI, mediaType);
      status = response.status;
      headers = {};
      response.headers.forEach((value, key) => (headers[key] = value));
      body = await response.text();
    }
    for (const [name, value] of Object.entries(getCORSHeadersByRequestAndOptions(request, cors) ?? {})) {
      // As useNoNullOrigin in src/app.ts: no header at all is the refusal.
      if (name === 'Access-Control-Allow-Origin' && value === 'null') continue;
      headers[name] = value;
    }
    headers['content-length'] = String(Buffer.byteLength(body));
    headers['x-request-id'] = report.end(request, status);
    if (res.destroyed) return;
    res.writeHead(status, headers);
    res.end(body);
  };

  return (req, res, body) => {
    if (req.method !== 'POST' || req.url !== graphqlPath || !isJson(req.headers['content-type'])) return undefined;
    const mediaType = mediaTypeOf(req.headers.accept);
    const params = mediaType ? paramsOf(body) : undefined;
    // An incremental answer (@defer, @stream) is Yoga's to send. A GraphQL name is never escaped,
    // so a document that uses either directive, however spaced or commented, holds its name:
    // such documents go to Yoga, and the executor decides from the parsed one (ONE_RESULT_ONLY).
    if (!mediaType || !params || params.query.includes('defer') || params.query.includes('stream')) return undefined;
    options.onTaken?.();
    return respond(req, res, mediaType, params).catch((error: unknown) => {
      // Only a fault in this file lands here; answer as Yoga does for an error it did not expect.
      options.logError(error);
      if (res.headersSent) return void res.destroy();
      const text = errorBody('INTERNAL_SERVER_ERROR', INTERNAL_MESSAGE);
      res.writeHead(500, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
  };
}

function isAbortError(error: unknown): boolean {
  return error instanceof DOMException && (error.name === 'AbortError' || error.name === 'TimeoutError');
}
