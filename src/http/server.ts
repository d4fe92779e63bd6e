import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { FastPath } from './fast-path.js';
import { ASSETS_PATH } from './graphiql.js';

import type { Config } from '../config.js';
import { NOT_FOUND_MESSAGE, errorBody, type ErrorCode } from '../errors.js';
import { bearerToken } from '../context.js';
import { answerMediaType } from '../pipeline/media-types.js';

/** The one GraphQL endpoint. */
export const GRAPHQL_PATH = '/graphql';

/** What the server mounts: the Yoga app, and the fast path when there is one (src/app.ts makes both). */
export interface HttpApp {
  readonly yoga: (req: IncomingMessage, res: ServerResponse) => unknown;
  readonly fastPath: FastPath | undefined;
  /** The operations routes this port answers (all of them, or only /health with OPS_PORT). */
  readonly opsRoutes: ReadonlySet<string>;
}

/** The server's limits, as configured (src/config.ts says what each means). */
export type HttpServerOptions = Config['http'] & {
  /** Told of every request refused here, by its code (metrics count them). */
  onRefused?: (code: ErrorCode) => void;
};

/** Bytes and time a refused upload is still read for, so that its client sees the answer instead of a reset. */
const DRAIN_BYTES = 16 * 1024 * 1024;
const DRAIN_MS = 5000;
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
  const { yoga, fastPath } = app;
  // A count, not a queue: past the bound a request is refused at once, never kept waiting.
  let active = 0;
  const tokenless = takingTurns(TOKENLESS_AT_ONCE);

  const server = createServer(
    {
      headersTimeout: options.headersTimeoutMs,
      // Node's own limit, a backstop behind ours (which answers a typed 408 first).
      requestTimeout: options.requestTimeoutMs + 2000,
      keepAliveTimeout: options.keepAliveTimeoutMs,
      // How often node looks for connections past those limits (default: every 30 s).
      connectionsCheckingInterval: 1000,
    },
    (req: IncomingMessage, res: ServerResponse) => {
      const url = req.url ?? '';
      const at = url.indexOf('?');
      const path = at < 0 ? url : url.slice(0, at);
      // Health, metrics and GraphiQL's files answer whatever the GraphQL load.
      if ((req.method === 'GET' || req.method === 'HEAD') && (app.opsRoutes.has(path) || path.startsWith(ASSETS_PATH)))
        return void yoga(req, res);
      // The address alone, typed into a browser, opens GraphiQL.
      if ((req.method === 'GET' || req.method === 'HEAD') && path === '/') {
        res.writeHead(302, { location: GRAPHQL_PATH, 'content-length': 0 });
        return void res.end();
      }
      // Yoga would also serve `/graphql/`, `//graphql`, ...: every GraphQL request takes this door, with its limits.
      if (path !== GRAPHQL_PATH) {
        const message = NOT_FOUND_MESSAGE;
        // A body sent there is not read beyond the bounds of a refused upload.
        return METHODS_WITH_BODY.has(req.method ?? '')
          ? refuseUpload(req, res, 404, 'NOT_FOUND', message)
          : refuse(res, 404, 'NOT_FOUND', message);
      }
      if (cannotAnswer(req)) {
        // Refused before any work: Yoga would run the operation (and pay for its calls), then find no
        // way to write the answer and send an empty 406. This one says why, as JSON.
        const message =
          'La cabecera Accept no admite ninguna respuesta que el gateway envíe: acepte application/json ' +
          '(o multipart/mixed o text/event-stream para @defer y @stream), en UTF-8.';
        return METHODS_WITH_BODY.has(req.method ?? '')
          ? refuseUpload(req, res, 406, 'BAD_REQUEST', message)
          : refuse(res, 406, 'BAD_REQUEST', message);
      }
      if (!METHODS_WITH_BODY.has(req.method ?? '')) {
        const bad = at < 0 ? undefined : badJsonParam(url.slice(at + 1));
        if (bad) return refuse(res, 400, 'BAD_REQUEST', `El parámetro "${bad}" no es JSON válido.`);
        // Yoga does not read a body it does not expect; should one come, close after answering.
        closeIfUnread(req, res);
        return admit(req, res, undefined);
      }
      readBody(req, res, options, (body) => {
        const bad = Buffer.isBuffer(body) && isForm(req) ? badJsonParam(body.toString('utf8')) : undefined;
        if (bad) return refuse(res, 400, 'BAD_REQUEST', `El parámetro "${bad}" no es JSON válido.`);
        admit(req, res, body);
      });
    },
  );
  return server;

  function admit(req: IncomingMessage, res: ServerResponse, body: unknown) {
    if (res.destroyed) return;
    if (active >= options.maxConcurrent) {
      options.onRefused?.('OVERLOADED');
      return refuse(
        res,
        503,
        'OVERLOADED',
        `El gateway está al máximo de operaciones simultáneas (${options.maxConcurrent}); reintente en un segundo.`,
        {
          'retry-after': '1',
        },
      );
    }
    active++;
    // The place is held until the work ends, not when the client leaves: leaving cannot get around the limit.
    const release = () => void active--;
    const work = (): Promise<unknown> => {
      if (res.destroyed) return Promise.resolve();
      const taken = body === undefined ? undefined : fastPath?.(req, res, body);
      if (taken) return taken;
      // Handed to Yoga already read, as body-parser would.
      if (body !== undefined) (req as IncomingMessage & { body?: unknown }).body = body;
      return Promise.resolve(yoga(req, res));
    };
    const done = bearerToken(req.headers.authorization ?? null) === undefined ? tokenless(work) : work();
    done.then(release, release);
  }
}

/**
 * How many requests without a bearer token are worked on at once. They can make no upstream call
 * (only introspection, or a refusal), yet parsing and validating a large distinct document takes
 * milliseconds of the event loop: a flood of them must not hold back the callers with a token.
 */
const TOKENLESS_AT_ONCE = 1;

/**
 * Runs at most `limit` of the works given at once, in arrival order, each started from the
 * event loop's check phase (setImmediate), never inline: a request's 'end' comes on the tick
 * queue, so works started inline would run back to back with no look at the sockets between.
 * This way, between two turns, every request that has arrived meanwhile gets its own. Written
 * here: p-limit starts the next work within the same turn, which is what must not happen.
 */
function takingTurns(limit: number): (work: () => Promise<unknown>) => Promise<unknown> {
  let running = 0;
  let scheduled = false;
  const waiting: (() => void)[] = [];
  const schedule = () => {
    if (scheduled || waiting.length === 0 || running >= limit) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      while (running < limit && waiting.length > 0) waiting.shift()!();
    });
  };
  return (work) =>
    new Promise((resolve) => {
      waiting.push(() => {
        running++;
        const done = work();
        const finish = () => {
          running--;
          schedule();
        };
        done.then(finish, finish);
        resolve(done);
      });
      schedule();
    });
}

/** Reads the body under the size and time limits, then calls `done` with it (never on a refusal). */
function readBody(req: IncomingMessage, res: ServerResponse, options: HttpServerOptions, done: (body: unknown) => void) {
  const limit = options.maxBodyBytes;
  const tooLarge = () => {
    options.onRefused?.('REQUEST_ENTITY_TOO_LARGE');
    refuseUpload(req, res, 413, 'REQUEST_ENTITY_TOO_LARGE', `El cuerpo de la petición supera ${limit} bytes (MAX_BODY_BYTES).`);
  };
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return tooLarge();
  const timer = setTimeout(() => {
    req.off('data', onData);
    options.onRefused?.('REQUEST_TIMEOUT');
    refuseUpload(req, res, 408, 'REQUEST_TIMEOUT', `El cuerpo de la petición no llegó completo en ${options.requestTimeoutMs} ms.`);
  }, options.requestTimeoutMs);
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size <= limit) return void chunks.push(chunk);
    clearTimeout(timer);
    req.off('data', onData);
    tooLarge();
  };
  req.on('data', onData);
  req.once('close', () => clearTimeout(timer));
  req.once('end', () => {
    clearTimeout(timer);
    if (res.headersSent) return;
    const body = bodyFor(req, Buffer.concat(chunks, size));
    if (body === NOT_JSON) return refuse(res, 400, 'BAD_REQUEST', 'El cuerpo de la petición no es JSON válido.');
    // Refused here, typed and in Spanish: Yoga would take `{}` for no body at all (and read the
    // spent stream again), answer a missing query with a 200, and a batch in English.
    if (Array.isArray(body)) return refuse(res, 400, 'BAD_REQUEST', 'Una petición lleva una sola operación: no se aceptan lotes (arrays).');
    if (lacksDocument(body)) return refuse(res, 400, 'BAD_REQUEST', 'Falta el documento GraphQL: envíe query (o documentId).');
    done(body);
  });
}

/**
 * What Yoga gets as the already-read body: the parsed value of a JSON body (an object or an
 * array); otherwise the raw bytes, which Yoga parses (and refuses) as it always would.
 */
function bodyFor(req: IncomingMessage, raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  if (JSON_TYPE.test(req.headers['content-type'] ?? '')) {
    try {
      const parsed: unknown = JSON.parse(raw.toString('utf8'));
      if (typeof parsed === 'object' && parsed !== null) return parsed;
    } catch {
      // Refused here: Yoga's own 400 quotes the body back, SOL credentials and all.
      return NOT_JSON;
    }
  }
  return raw;
}

/** A JSON body that names no document: no query, no documentId, no persisted query's hash. */
const lacksDocument = (body: unknown) =>
  typeof body === 'object' &&
  body !== null &&
  !Buffer.isBuffer(body) &&
  ['query', 'documentId', 'extensions'].every((k) => (body as Record<string, unknown>)[k] == null);

/** A JSON body that does not parse. */
const NOT_JSON = Symbol('not JSON');
/** The content types Yoga reads as a JSON body. */
const JSON_TYPE = /^application\/(graphql\+)?json/i;

const isForm = (req: IncomingMessage) => /^application\/x-www-form-urlencoded/i.test(req.headers['content-type'] ?? '');

/**
 * The name of a GET or form parameter that should be JSON and is not. Refused here: Yoga would
 * answer it with a 500 and log the parameter, SOL credentials and all.
 */
function badJsonParam(query: string): string | undefined {
  const params = new URLSearchParams(query);
  for (const name of ['variables', 'extensions']) {
    const value = params.get(name);
    if (!value) continue;
    try {
      JSON.parse(value);
    } catch {
      return name;
    }
  }
  return undefined;
}

/**
 * A GraphQL request whose `Accept` takes none of the answers Yoga can write (JSON, multipart,
 * event stream, each in UTF-8). GraphiQL's page (a GET for HTML) and preflights are Yoga's.
 */
function cannotAnswer(req: IncomingMessage): boolean {
  if (req.method !== 'POST' && req.method !== 'GET') return false;
  if (req.method === 'GET' && (req.headers.accept ?? '').includes('text/html')) return false;
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

function refuse(res: ServerResponse, status: number, code: ErrorCode, message: string, headers: Record<string, string> = {}) {
  const body = errorBody(code, message);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/**
 * Refuses an upload part-way. The answer goes out at once, but the connection stays open while
 * the rest of the body is read and thrown away (up to DRAIN_BYTES and DRAIN_MS): closing it
 * under a client still writing would show that client a reset (EPIPE) instead of the answer.
 */
function refuseUpload(req: IncomingMessage, res: ServerResponse, status: number, code: ErrorCode, message: string) {
  if (res.headersSent) return;
  const body = errorBody(code, message);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  res.write(body);
  let drained = 0;
  const finish = () => {
    clearTimeout(timer);
    req.off('data', onData);
    res.end();
  };
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_BYTES) finish();
  };
  const timer = setTimeout(finish, DRAIN_MS);
  if (req.complete) return finish();
  req.on('data', onData);
  req.once('end', finish);
  req.once('close', finish);
  req.resume();
}
