import type { IncomingMessage } from 'node:http';
import { answerMediaType, isJsonAnswer } from '../pipeline/media-types.js';

/**
 * What the fast path (./fast-path.ts) reads of a request, with Yoga's own rules: whether it is
 * a JSON POST it can take, the media type Yoga would answer with, the GraphQL parameters, and
 * a Fetch `Request` made with Yoga's own fetchAPI, which the plugins read.
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

/** Whether the body's GraphQL parameters are what Yoga's own checks would accept without a word. */
function isParams(body: unknown): body is Params {
  if (!isPlainObject(body) || typeof body['query'] !== 'string') return false;
  for (const key in body) if (body[key] != null && !PARAM_NAMES.has(key)) return false;
  const { variables, operationName, extensions } = body;
  if (!isOptionalObject(variables) || !isOptionalObject(extensions)) return false;
  return operationName == null || typeof operationName === 'string';
}

/** The body's GraphQL parameters, when the fast path can take them. */
export function paramsOf(body: unknown): Params | undefined {
  return isParams(body) ? body : undefined;
}

/** The JSON media type Yoga would answer a single result with for this `Accept`; undefined when it would choose another or none. */
export function mediaTypeOf(accept: string | undefined): string | undefined {
  const chosen = answerMediaType(accept, false);
  return isJsonAnswer(chosen) ? chosen : undefined;
}

/** Yoga's own test for a JSON body (`isContentTypeMatch`), byte for byte. */
export function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  // The part before the first comma, found without splitting the whole header (per request).
  const comma = contentType.indexOf(',');
  const first = comma < 0 ? contentType : contentType.slice(0, comma);
  return first === 'application/json' || first.startsWith('application/json;');
}

/**
 * The request as a Fetch `Request` made with Yoga's own `fetchAPI` (the same class Yoga hands
 * its plugins): method, URL and headers; the body is already read and parsed. The headers are
 * node's own object, as Yoga's adapter passes them: a header is then read by its name, where
 * a list of pairs would be searched and lower-cased on every `get`.
 */
export function fetchRequestOf(req: IncomingMessage, fetchAPI: { Request: typeof Request }): Request {
  const headers: Record<string, string> = {};
  for (const name in req.headers) {
    const value = req.headers[name];
    if (value !== undefined) headers[name] = typeof value === 'string' ? value : value.join(', ');
  }
  return new fetchAPI.Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers });
}
