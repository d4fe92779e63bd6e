import { createWriteStream } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { request } from 'undici';
import { FLAG_REGISTERS, PADRON_ZIP } from './sources.js';

/** The most a zip may weigh: SUNAT's padrón is about 391 MB, a flag register 5 to 50 MB. */
const MAX_PADRON_BYTES = 2 * 1024 ** 3;
const MAX_FLAGS_BYTES = 512 * 1024 ** 2;

/** The zips fetched for one import: where each is on disk, and the padrón's date as its server gives it. */
export interface Fetched {
  padron: string;
  flags: string[];
  lastModified: number | undefined;
}

/** How far an import has come, for its progress lines and /health: updated as bytes and lines go by. */
export interface ImportProgress {
  phase: 'fetching' | 'indexing';
  bytesFetched: number;
  linesRead: number;
}

/** A URL as messages, logs and /health may show it: no credentials, no query. */
export const shown = (url: string) => {
  const { origin, pathname } = new URL(url);
  return origin + pathname;
};

/**
 * Downloads the five zips into `dir`, each at most its size; undefined when the padrón has not
 * changed since `since` (the server answers 304 to If-Modified-Since). Nothing is unzipped on disk.
 */
export async function fetchZips(
  urls: { padron: string; flags: string[] },
  dir: string,
  since: number | undefined,
  signal: AbortSignal,
  progress?: ImportProgress,
): Promise<Fetched | undefined> {
  await mkdir(dir, { recursive: true });
  const padron = join(dir, PADRON_ZIP);
  const got = await download(urls.padron, padron, MAX_PADRON_BYTES, since, signal, progress);
  if (!got) return undefined;
  const flags = await Promise.all(
    urls.flags.map(async (url, i) => {
      const path = join(dir, FLAG_REGISTERS[i]!.zip);
      await download(url, path, MAX_FLAGS_BYTES, undefined, signal, progress);
      return path;
    }),
  );
  return { padron, flags, lastModified: got.lastModified };
}

async function download(
  url: string,
  path: string,
  maxBytes: number,
  since: number | undefined,
  signal: AbortSignal,
  progress: ImportProgress | undefined,
) {
  const { username, password } = new URL(url);
  // A mirror's credentials in its URL go as Basic authentication, and are shown nowhere.
  const basic = username
    ? `Basic ${Buffer.from(`${decodeURIComponent(username)}:${decodeURIComponent(password)}`).toString('base64')}`
    : undefined;
  const plain = new URL(url);
  plain.username = '';
  plain.password = '';
  const res = await request(plain, {
    headers: { ...(since ? { 'if-modified-since': new Date(since).toUTCString() } : {}), ...(basic ? { authorization: basic } : {}) },
    headersTimeout: 60_000,
    bodyTimeout: 120_000,
    signal,
  });
  if (res.statusCode === 304) {
    await res.body.dump();
    return undefined;
  }
  if (res.statusCode !== 200) {
    await res.body.dump();
    throw new Error(`${shown(url)}: HTTP ${res.statusCode}`);
  }
  let seen = 0;
  const bounded = new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      if (progress) progress.bytesFetched += chunk.length;
      done(seen > maxBytes ? new Error(`${shown(url)}: over ${maxBytes} bytes`) : null, chunk);
    },
  });
  await pipeline(res.body, bounded, createWriteStream(`${path}.part`), { signal });
  await rename(`${path}.part`, path);
  const modified = Date.parse(String(res.headers['last-modified'] ?? ''));
  return { lastModified: Number.isNaN(modified) ? undefined : modified };
}
