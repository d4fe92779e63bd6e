import type { IncomingMessage, ServerResponse } from 'node:http';
import { getCORSHeadersByRequestAndOptions, normalizeNodeRequest, type CORSOptions } from '@whatwg-node/server';
import { isAsyncIterable, processRegularResult, type GraphQLParams, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Context, ServerContext } from '../schema/context.js';
import { worded } from '../errors.js';
import type { OperationReport } from '../pipeline/operation-report.js';
import { ONE_RESULT_ONLY } from '../pipeline/executor.js';
import { errorHandler, isJsonContentType, jsonMediaTypeOf } from '../pipeline/yoga-mirror.js';
import { hooksTheFastPathSkips, type DeclaredPlugin } from './fast-path-plugins.js';
import { refuse } from './refuse.js';

/** Takes the request and answers when its work is over, or returns undefined to leave it to Yoga. */
export type FastPath = (req: IncomingMessage, res: ServerResponse, body: unknown) => Promise<void> | undefined;

export interface FastPathOptions {
  graphqlPath: string;
  /** Every plugin the app added to Yoga's own (`usePluginList().between()`), those they added included: checked for hooks this path skips. */
  plugins: readonly DeclaredPlugin[];
  report: OperationReport;
  cors: CORSOptions;
  maskError: (error: unknown, message: string, isDev?: boolean) => Error;
  isDev: boolean;
  /** Yoga's `logging.error`, given the original of every error that was masked. */
  logError: (error: unknown) => void;
  /** Called for each request this path takes (a metric counts them). */
  onTaken?: () => void;
}

/** Throws, naming it, when a plugin has a Yoga hook this path would not run: a new plugin or hook is never skipped in silence. */
function refuseSkippedHooks(plugins: readonly DeclaredPlugin[]): void {
  plugins.forEach((plugin, i) => {
    const skipped = hooksTheFastPathSkips(plugin);
    if (skipped.length > 0)
      throw new Error(
        `HTTP_FAST_PATH: plugin ${i + 1} of the app's has ${skipped.join(', ')}, which the fast path does not run; ` +
          'run it there too (src/http/fast-path.ts) and mark it (src/http/fast-path-plugins.ts), or set HTTP_FAST_PATH=off',
      );
  });
}

/**
 * The common request, a JSON POST to /graphql, answered straight from node:http.
 *
 * Yoga wraps every request in Fetch API objects (Request, Headers, Response) and promise
 * chains, which cost more than the operation itself (docs/performance.md). Here the very same
 * envelop pipeline runs (parse and validation caches, GraphQL Armor, the cost limit, the
 * operation report, masked errors, graphql-js); only the HTTP layer around it is plain Node: the
 * request made by whatwg-node's `normalizeNodeRequest`, the answer written as Yoga writes it, and
 * what it must copy of Yoga, which exports nothing to call, in src/pipeline/yoga-mirror.ts. What this path does not take (GET,
 * GraphiQL, other content types or `Accept` values, batches, anything unusual in the body,
 * `@defer` and `@stream`) goes to Yoga unchanged, so its errors stay Yoga's own.
 * `HTTP_FAST_PATH=off` sends everything to Yoga; the end-to-end suite runs both ways and
 * test/e2e/fast-path.test.ts compares the two answers.
 */
export function createFastPath(yoga: YogaServerInstance<ServerContext, Context>, options: FastPathOptions): FastPath {
  const { report, cors, graphqlPath } = options;
  refuseSkippedHooks(options.plugins);
  const fetchAPI = yoga.fetchAPI;
  // Read once: each read through Yoga's adapter proxy makes a new bound function.
  const getResultForParams = yoga.getResultForParams;
  const handleError = errorHandler(options);
  const onResultProcess = options.plugins.flatMap((plugin) => (plugin.onResultProcess ? [plugin.onResultProcess] : []));
  // This path writes JSON, chosen from the request's Accept: a hook's choice of another writer has no say here.
  const setResultProcessor = () => undefined;

  const respond = async (req: IncomingMessage, res: ServerResponse, mediaType: string, params: Params) => {
    // Without the response: its abort controller would hang three listeners on it per request, and
    // the client-gone signal is the gateway's own (src/schema/client-gone.ts). The body is read already.
    const request = normalizeNodeRequest(req, fetchAPI);
    // The report's onRequest hook, as Yoga runs it.
    report.begin(request, true);
    const context = serverContextOf(req, res, request, params, options.logError);
    // Yoga's own: the onParams hooks (its parameter checks among them), the operation through envelop, the onExecutionResult hooks.
    let result: Result | undefined;
    try {
      result = await getResultForParams({ params, request }, context);
    } catch (error) {
      // A hook refused the request (sign-in, persisted documents): as Yoga's handle catches it.
      result = { errors: handleError(error) };
    }
    // The plugins' onResultProcess hooks (the error contract, the report), as Yoga runs them before it writes the answer.
    let answered: Result = result ?? { errors: handleError(new Error('no result')) };
    const setResult = (next: Result) => void (answered = next);
    for (const hook of onResultProcess)
      await hook({ request, result: answered, setResult, acceptableMediaTypes: [mediaType], setResultProcessor, serverContext: context });
    const { status, headers, body } = await answerOf(answered, { fetchAPI, mediaType, request, cors });
    // As useNoNullOrigin (src/http/cors.ts): no header at all is the refusal.
    if (headers['Access-Control-Allow-Origin'] === 'null') delete headers['Access-Control-Allow-Origin'];
    // The report's onResponse hook.
    headers['x-request-id'] = report.end(request, status);
    if (res.destroyed) return;
    res.writeHead(status, headers);
    res.end(body);
  };

  return (req, res, body) => {
    if (req.method !== 'POST' || req.url !== graphqlPath || !isJsonContentType(req.headers['content-type'])) return undefined;
    const mediaType = jsonMediaTypeOf(req.headers.accept);
    const params = mediaType && isParams(body) ? body : undefined;
    // An incremental answer (@defer, @stream) is Yoga's to send. A GraphQL name is never escaped,
    // so a document that uses either directive, however spaced or commented, holds its name:
    // such documents go to Yoga, and the executor decides from the parsed one (ONE_RESULT_ONLY). So do subscriptions (SSE).
    if (!mediaType || !params || params.query.includes('defer') || params.query.includes('stream') || params.query.includes('subscription'))
      return undefined;
    options.onTaken?.();
    return respond(req, res, mediaType, params).catch((error: unknown) => {
      // Only a fault in this file lands here; answer as Yoga does for an error it did not expect.
      options.logError(error);
      if (res.headersSent) return void res.destroy();
      refuse(res, worded('internal'));
    });
  };
}

/** What Yoga hands its hooks as the server context, as its node adapter makes it. */
function serverContextOf(req: IncomingMessage, res: ServerResponse, request: Request, params: Params, logError: (error: unknown) => void) {
  return {
    req,
    res,
    // This path writes one JSON result: an incremental operation here is refused, never run.
    [ONE_RESULT_ONLY]: true as const,
    request,
    params,
    waitUntil: (work: Promise<unknown> | void) => void work?.catch(logError),
  };
}

/** A result as Yoga's hooks hand it on: one (with its serializer, if any) or a stream. */
type Result = Parameters<Parameters<NonNullable<Plugin['onExecutionResult']>>[0]['setResult']>[0];

/** The GraphQL parameters of a JSON body this path takes; Yoga's own onParams hook checks the rest of them. */
type Params = GraphQLParams & { query: string };

/** A body this path takes: an object (not a batch) with the document in it; Yoga checks the rest as for any request. */
function isParams(body: unknown): body is Params {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && 'query' in body && typeof body.query === 'string';
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The HTTP answer Yoga writes for one JSON result (its `processRegularResult`), with the CORS headers whatwg-node adds. */
async function answerOf(
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
