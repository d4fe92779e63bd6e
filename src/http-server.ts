import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { fastPathOf, type App } from './app.js';
import { ERROR_CODES } from './errors.js';

export interface HttpServerOptions {
  /** Largest request body; a larger one is answered 413 here, before Yoga sees it. */
  maxBodyBytes: number;
  /**
   * Requests handled at once; the rest wait, unread, in arrival order. A burst of 1,000
   * connections then costs 1,000 sockets, not 1,000 operations half-way through. @default 64
   */
  maxConcurrent?: number;
}

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The node:http server around the Yoga app.
 *
 * The request body is read here, in plain Node, under MAX_BODY_BYTES: a larger body is
 * answered 413 at once, and a JSON body is parsed once and handed to Yoga already parsed
 * (`req.body`, as body-parser would), so no request goes through web streams. Measured:
 * Yoga's own size-limited stream reading cost more than the rest of a small operation.
 *
 * An answer sent before the whole body was read (the 413) says `Connection: close`: Node
 * would otherwise wait for the rest of that body before reading the next request on the
 * connection, and a keep-alive client would hang.
 */
export function createHttpServer(app: App, options: HttpServerOptions): Server {
  const limit = options.maxConcurrent ?? 64;
  let active = 0;
  const waiting: (() => void)[] = [];
  const next = () => waiting.shift()?.();
  const admit = (run: () => void, res: ServerResponse) => {
    const go = () => {
      // A client that left while waiting takes no slot.
      if (res.destroyed || res.writableEnded) return next();
      active++;
      // 'close' comes once per response, whether it finished or the client went away.
      res.once('close', () => {
        active--;
        next();
      });
      run();
    };
    if (active < limit) go();
    else waiting.push(go);
  };
  const fastPath = fastPathOf(app);
  return createServer((req: IncomingMessage, res: ServerResponse) => admit(() => handle(req, res), res));

  function handle(req: IncomingMessage, res: ServerResponse) {
    if (!METHODS_WITH_BODY.has(req.method ?? '')) {
      // Yoga does not read a body it does not expect; should one come, close after answering.
      closeIfUnread(req, res);
      void app(req, res);
      return;
    }
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > options.maxBodyBytes) {
      tooLarge(res, options.maxBodyBytes);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > options.maxBodyBytes) {
        req.off('data', onData);
        req.pause();
        tooLarge(res, options.maxBodyBytes);
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => {
      if (res.headersSent) return;
      const body = bodyFor(req, Buffer.concat(chunks, size));
      if (fastPath?.(req, res, body)) return;
      (req as IncomingMessage & { body?: unknown }).body = body;
      void app(req, res);
    });
  }
}

/**
 * What Yoga gets as the already-read body: the parsed value of a JSON body (an object or an
 * array); otherwise the raw bytes, which Yoga parses (and refuses) as it always would.
 */
function bodyFor(req: IncomingMessage, raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  if ((req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) {
    try {
      const parsed: unknown = JSON.parse(raw.toString('utf8'));
      if (typeof parsed === 'object' && parsed !== null) return parsed;
    } catch {
      // Not JSON after all: Yoga answers its own typed 400.
    }
  }
  return raw;
}

/** Makes an answer sent before the whole request body was read say `Connection: close`. */
function closeIfUnread(req: IncomingMessage, res: ServerResponse) {
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
    if (!req.complete) this.setHeader('connection', 'close');
    return writeHead.apply(this, args);
  } as ServerResponse['writeHead'];
}

function tooLarge(res: ServerResponse, limit: number) {
  const body = JSON.stringify({
    errors: [
      {
        message: `El cuerpo de la petición supera ${limit} bytes (MAX_BODY_BYTES).`,
        extensions: { code: 'REQUEST_ENTITY_TOO_LARGE' satisfies keyof typeof ERROR_CODES, retryable: false },
      },
    ],
  });
  // Sent before the rest of the body was read: the connection cannot be reused.
  res.writeHead(413, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.end(body);
}
