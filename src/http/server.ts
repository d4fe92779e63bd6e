import { hash } from 'node:crypto';
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastPath } from './fast-path.js';
import { ASSETS_PATH } from './graphiql.js';

import { GRAPHQL_PATH, type Config } from '../config.js';
import { errorAnswer, worded, type ErrorCode, type Worded } from '../errors.js';
import { badJsonParam, documentOf, isForm, readBody } from './body.js';
import { refuse, refuseUpload } from './refuse.js';
import { EXPOSED_HEADERS } from './cors.js';
import { takingTurns } from '../data/turns.js';
import { serveOps, type OpsAnswers } from './health.js';
import { answerMediaType } from '../pipeline/yoga-mirror.js';
import { asksForGraphiQL } from '../pipeline/operation-report.js';
import { CSV_PATH, serveValidationCsv } from './validation-csv.js';

/** What the server mounts: the Yoga app, and the fast path when there is one (src/app.ts makes both). */
export interface HttpApp {
  readonly yoga: (req: IncomingMessage, res: ServerResponse) => unknown;
  readonly fastPath: FastPath | undefined;
  /** The operations routes this port answers (all of them, or only /health with OPS_PORT), and their answers. */
  readonly opsRoutes: ReadonlySet<string>;
  readonly ops: OpsAnswers;
  /** CORS_ORIGINS: with `*`, a refusal written before the request is read still lets any page read it. */
  readonly corsOrigins: Config['corsOrigins'];
  /** GRAPHIQL: whether GraphiQL is served (its page, its files, and `/` leading to it). */
  readonly graphiql: boolean;
  /** Whether this document's text is one the app has parsed before (its caches know it). */
  knowsDocument(text: string): boolean;
  /** A background validation's CSV for the caller this Authorization is; undefined: not theirs, or none. */
  validationCsv?(authorization: string | undefined, id: string): Promise<AsyncIterable<string> | undefined>;
}

/** The server's limits, as configured (src/config.ts says what each means). */
export type HttpServerOptions = Config['http'] & {
  /** Told of every request refused here, by its code (metrics count them). */
  onRefused?: (code: ErrorCode) => void;
};

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The node:http server around the Yoga app.
 *
 * Only GraphQL requests whose body has been read whole are admitted: a slow or stalled upload
 * holds its socket, not a place among the requests being worked on, and is cut off after
 * HTTP_REQUEST_TIMEOUT_MS. Anything off the GraphQL path (/health, /ready, /metrics, GraphiQL's
 * files) is never admitted nor refused, so it answers whatever the GraphQL load.
 *
 * The body is read here, in plain Node, under MAX_BODY_BYTES, and a JSON body is parsed once
 * and handed to Yoga already parsed (`req.body`, as body-parser would), so no request goes
 * through web streams.
 */
export function createHttpServer(app: HttpApp, options: HttpServerOptions): Server {
  const admission = new Admission(app, options);
  const server = createServer(
    {
      headersTimeout: options.headersTimeoutMs,
      // Node's own limit, a backstop behind ours (which answers a typed 408 first).
      requestTimeout: options.requestTimeoutMs + 2000,
      keepAliveTimeout: options.keepAliveTimeoutMs,
      // How often node looks for connections past those limits (default: every 30 s).
      connectionsCheckingInterval: 1000,
    },
    (req: IncomingMessage, res: ServerResponse) => route(req, res, app, options, admission),
  );
  // The answer under way on each connection, if any: it goes out whole before a refusal of what
  // followed it on the connection (a pipelined request), which would otherwise take its place;
  // node:http then closes the connection, and the refusal goes out only if it is still open.
  const answering = new WeakMap<Duplex, ServerResponse>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    answering.set(req.socket, res);
    res.once('close', () => answering.get(req.socket) === res && answering.delete(req.socket));
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const res = answering.get(socket);
    if (res) res.once('close', () => refuseUnread(error, socket, app));
    else refuseUnread(error, socket, app);
  });
  return server;
}

/** What node:http answers a request it could not read, by its error's code (as its own default does); 400 otherwise. */
const UNREAD_STATUS: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

/**
 * A request node:http could not read. Node's own answer to headers over its 16 KB (a huge token)
 * is a bare 431 with no body and no CORS headers, which a browser app cannot read: that one gets
 * the gateway's JSON error and the CORS headers the configuration allows without reading the
 * request. Every other such refusal is written as node:http writes it (a listener replaces that).
 * Either comes after the answer under way on the connection, if any; then the connection closes.
 */
function refuseUnread(error: NodeJS.ErrnoException, socket: Duplex, app: HttpApp): void {
  const status = UNREAD_STATUS[error.code ?? ''] ?? 400;
  if (socket.writable) {
    let head = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n`;
    if (status === 431) {
      const answer = errorAnswer(worded('headersTooLarge'), {
        ...(app.corsOrigins === '*'
          ? { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED_HEADERS.join(', ') }
          : {}),
      });
      head += Object.entries(answer.headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('');
      // Ended, not destroyed: a reset could reach the client before it reads the answer, while it
      // is still sending the rest of its request, which is read and thrown away meanwhile.
      socket.end(`${head}\r\n${answer.body}`);
      socket.resume();
      setTimeout(() => socket.destroy(), UNREAD_DRAIN_MS).unref();
      return;
    }
    socket.write(`${head}\r\n`);
  }
  socket.destroy(error);
}

/** How long a socket refused before its request was read is still drained, at most. */
const UNREAD_DRAIN_MS = 2000;

/** Where a request goes: the operations routes, GraphiQL's files, a refusal, or GraphQL work once its body is read. */
function route(req: IncomingMessage, res: ServerResponse, app: HttpApp, options: HttpServerOptions, admission: Admission): void {
  const url = req.url ?? '';
  const at = url.indexOf('?');
  const path = at < 0 ? url : url.slice(0, at);
  const reading = req.method === 'GET' || req.method === 'HEAD';
  // Health, readiness and metrics answer whatever the GraphQL load, straight from node:http.
  if (reading && app.opsRoutes.has(path)) return serveOps(req, res, app.ops);
  // A background validation's results, as a file (src/http/validation-csv.ts).
  const csv = (reading || req.method === 'OPTIONS') && app.validationCsv ? CSV_PATH.exec(path) : null;
  if (csv) return void serveValidationCsv(req, res, csv[1]!, app.validationCsv!, app.corsOrigins);
  // GraphiQL's files answer whatever the GraphQL load too.
  if (reading && app.graphiql && path.startsWith(ASSETS_PATH)) return void app.yoga(req, res);
  // The address alone, typed into a browser, opens GraphiQL.
  if (reading && app.graphiql && path === '/') {
    res.writeHead(302, { location: GRAPHQL_PATH, 'content-length': 0 });
    return void res.end();
  }
  // Yoga would also serve `/graphql/`, `//graphql`, ...: every GraphQL request takes this door, with its limits.
  if (path !== GRAPHQL_PATH) return refuseRequest(req, res, worded('routeNotFound', { path: GRAPHQL_PATH }));
  if (cannotAnswer(req, app.graphiql)) {
    // Refused before any work: Yoga would run the operation (and pay for its calls), then find no
    // way to write the answer and send an empty 406. This one says why, as JSON.
    return refuseRequest(req, res, worded('acceptNothing'));
  }
  if (!METHODS_WITH_BODY.has(req.method ?? '')) {
    const bad = at < 0 ? undefined : badJsonParam(url.slice(at + 1));
    if (bad) return refuse(res, worded('paramNotJson', { name: bad }));
    // Yoga does not read a body it does not expect; should one come, close after answering.
    closeIfUnread(req, res);
    return admission.admit(req, res, undefined);
  }
  readBody(req, res, options, (body) => {
    const bad = Buffer.isBuffer(body) && isForm(req) ? badJsonParam(body.toString('utf8')) : undefined;
    if (bad) return refuse(res, worded('paramNotJson', { name: bad }));
    admission.admit(req, res, body);
  });
}

/** A refusal; a body sent with the request is not read beyond the bounds of a refused upload. */
function refuseRequest(req: IncomingMessage, res: ServerResponse, refused: Worded): void {
  return METHODS_WITH_BODY.has(req.method ?? '') ? refuseUpload(req, res, refused) : refuse(res, refused);
}

/**
 * GraphQL work let in, or refused at once: a count, not a queue, so past the bound a request is
 * refused (OVERLOADED, retryable), never kept waiting; and new documents one a turn (below).
 * The places are shared among callers: below MAX_CONCURRENT_REQUESTS anyone enters, so a lone
 * caller may take every place; at it, a caller holding less than its share (the bound over the
 * callers holding places, itself included) still enters, up to twice the bound in all, so one
 * caller's flood is what is refused, never another caller's few requests.
 */
class Admission {
  #active = 0;
  /** Places each caller holds, by the hash of its Authorization header. */
  readonly #held = new Map<string, number>();
  readonly #newDocuments = takingTurns(NEW_DOCUMENTS_PER_TURN);

  constructor(
    private readonly app: HttpApp,
    private readonly options: HttpServerOptions,
  ) {}

  admit(req: IncomingMessage, res: ServerResponse, body: unknown): void {
    if (res.destroyed) return;
    const { app, options } = this;
    const document = documentOf(req, body, req.url ?? '');
    const isNew = document !== undefined && !app.knowsDocument(document);
    if (isNew && this.#newDocuments.waiting >= NEW_DOCUMENTS_WAITING) {
      options.onRefused?.('OVERLOADED');
      return refuse(res, worded('newDocumentsWaiting', { waiting: NEW_DOCUMENTS_WAITING }), { 'retry-after': '1' });
    }
    const caller = callerOf(req);
    const held = this.#held.get(caller) ?? 0;
    if (!this.#mayEnter(held)) {
      options.onRefused?.('OVERLOADED');
      return refuse(res, worded('callerHasItsShare', { max: options.maxConcurrent }), { 'retry-after': '1' });
    }
    this.#active++;
    this.#held.set(caller, held + 1);
    // The place is held until the work ends, not when the client leaves: leaving cannot get around the limit.
    const release = () => {
      this.#active--;
      const left = this.#held.get(caller)! - 1;
      if (left === 0) this.#held.delete(caller);
      else this.#held.set(caller, left);
    };
    const work = (): Promise<unknown> => {
      if (res.destroyed) return Promise.resolve();
      const taken = body === undefined ? undefined : app.fastPath?.(req, res, body);
      if (taken) return taken;
      // Handed to Yoga already read, as body-parser would.
      if (body !== undefined) (req as IncomingMessage & { body?: unknown }).body = body;
      return Promise.resolve(app.yoga(req, res));
    };
    (isNew ? this.#newDocuments.run(work) : work()).then(release, release);
  }

  /** Whether a caller holding `held` places may take one more. */
  #mayEnter(held: number): boolean {
    const max = this.options.maxConcurrent;
    if (this.#active < max) return true;
    if (this.#active >= max * 2) return false;
    const callers = this.#held.size + (held === 0 ? 1 : 0);
    return held < Math.max(1, Math.floor(max / callers));
  }
}

/**
 * Who a request is, for its share of the places: a hash of its Authorization header (a token, or
 * a sign-in JWT, which names one subject), never the header itself; '' for a request without one.
 */
function callerOf(req: IncomingMessage): string {
  const authorization = req.headers.authorization;
  return authorization ? hash('sha256', authorization, 'base64url') : '';
}

/**
 * Documents this process has not seen yet are parsed and validated one a turn of the event loop:
 * a large one takes milliseconds, and anyone, with a token or a made-up one, can send a flood of
 * distinct ones. A request whose document is known (nearly all) never waits. At most
 * NEW_DOCUMENTS_WAITING wait; past that, a new document is refused (OVERLOADED, retryable).
 */
const NEW_DOCUMENTS_PER_TURN = 1;
const NEW_DOCUMENTS_WAITING = 256;

/**
 * A GraphQL request whose `Accept` takes none of the answers Yoga can write (JSON, multipart,
 * event stream, each in UTF-8). GraphiQL's page (a GET for HTML, when it is served) and preflights are Yoga's.
 */
function cannotAnswer(req: IncomingMessage, graphiql: boolean): boolean {
  if (req.method !== 'POST' && req.method !== 'GET') return false;
  if (graphiql && asksForGraphiQL(req.method, req.headers.accept)) return false;
  return answerMediaType(req.headers.accept, false) === undefined;
}

/** Makes an answer sent before the whole request body was read say `Connection: close`. */
function closeIfUnread(req: IncomingMessage, res: ServerResponse) {
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
    if (!req.complete) this.setHeader('connection', 'close');
    return writeHead.apply(this, args);
  } as ServerResponse['writeHead'];
}
