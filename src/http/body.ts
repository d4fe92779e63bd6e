import type { IncomingMessage, ServerResponse } from 'node:http';
import { refuse, refuseUpload } from './refuse.js';
import { worded } from '../errors.js';
import type { HttpServerOptions } from './server.js';

/** The document a request carries in the clear: a JSON body's `query`, or a GET's. */
export function documentOf(req: IncomingMessage, body: unknown, url: string): string | undefined {
  if (body === undefined) {
    const at = url.indexOf('?');
    return at < 0 ? undefined : (new URLSearchParams(url.slice(at + 1)).get('query') ?? undefined);
  }
  const query = typeof body === 'object' && body !== null && !Buffer.isBuffer(body) ? (body as { query?: unknown }).query : undefined;
  return typeof query === 'string' ? query : undefined;
}

/** Reads the body under the size and time limits, then calls `done` with it (never on a refusal). */
export function readBody(req: IncomingMessage, res: ServerResponse, options: HttpServerOptions, done: (body: unknown) => void) {
  const limit = options.maxBodyBytes;
  const tooLarge = () => {
    options.onRefused?.('REQUEST_ENTITY_TOO_LARGE');
    refuseUpload(req, res, worded('bodyTooLarge', { limit }));
  };
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return tooLarge();
  const timer = setTimeout(() => {
    req.off('data', onData);
    options.onRefused?.('REQUEST_TIMEOUT');
    refuseUpload(req, res, worded('bodyTooSlow', { ms: options.requestTimeoutMs }));
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
    if (body === NOT_JSON) return refuse(res, worded('bodyNotJson'));
    // Yoga would answer these in English ("POST body sent invalid JSON.", "Must provide query string.").
    if (body === undefined) return refuse(res, worded('bodyEmpty', { send: SEND_JSON }));
    if (isForm(req) && !new URLSearchParams((body as Buffer).toString('utf8')).has('query')) {
      return refuse(res, worded('formWithoutQuery', { send: SEND_JSON }));
    }
    // Refused here, typed and in Spanish: Yoga would take `{}` for no body at all (and read the
    // spent stream again), answer a missing query with a 200, and a batch in English.
    if (Array.isArray(body)) return refuse(res, worded('batch'));
    if (lacksDocument(body)) return refuse(res, worded('noDocument'));
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

const SEND_JSON = 'envíe un JSON con query (o documentId) y la cabecera Content-Type: application/json.';

/** A JSON body that does not parse. */
const NOT_JSON = Symbol('not JSON');
/** The content types Yoga reads as a JSON body. */
const JSON_TYPE = /^application\/(graphql\+)?json/i;

export const isForm = (req: IncomingMessage) => /^application\/x-www-form-urlencoded/i.test(req.headers['content-type'] ?? '');

/**
 * The name of a GET or form parameter that should be JSON and is not. Refused here: Yoga would
 * answer it with a 500 and log the parameter, SOL credentials and all.
 */
export function badJsonParam(query: string): string | undefined {
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
