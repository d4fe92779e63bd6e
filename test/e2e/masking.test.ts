import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createHttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/telemetry/logger.js';
import { UpstreamClient } from '../../src/upstream/client.js';

/** A client with a bug in it: the kind of fault the gateway must mask, not leak. */
class BuggyClient extends UpstreamClient {
  override lookup(): Promise<never> {
    return Promise.reject(new TypeError('Cannot read properties of undefined (reading "secretInternalDetail")'));
  }
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function serve(nodeEnv: 'production' | 'development') {
  const config = loadConfig({ UPSTREAM_URL: 'http://127.0.0.1:9', NODE_ENV: nodeEnv });
  const logs: string[] = [];
  const logger = createLogger(config, new Writable({ write: (c, _e, done) => (logs.push(String(c)), done()) }));
  const app = createApp(config, { logger, upstream: new BuggyClient({ baseUrl: config.upstream.baseUrl! }) });
  const server = createHttpServer(app, config.http);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(async () => {
    server.close();
    server.closeAllConnections();
    await app.dispose();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer t' },
    body: JSON.stringify({ query: '{ contribuyente(ruc: "20100123453") { ruc } licencia(numLicencia: "") { nombres } }' }),
  });
  return { status: res.status, text: await res.text(), logs };
}

describe('faults of the gateway itself', () => {
  it('are masked as INTERNAL_SERVER_ERROR with no message or stack outside development', async () => {
    const { status, text, logs } = await serve('production');
    expect(status).toBe(200);
    const body = JSON.parse(text);
    expect(body.errors).toContainEqual(
      expect.objectContaining({ path: ['contribuyente'], extensions: { code: 'INTERNAL_SERVER_ERROR', retryable: false } }),
    );
    expect(text).not.toContain('secretInternalDetail');
    expect(text).not.toContain('stack');
    // The sibling still resolved to its own typed error.
    expect(body.errors.find((e: { path: string[] }) => e.path[0] === 'licencia').extensions.code).toBe('INVALID_INPUT');
    // The operator still sees what happened.
    expect(logs.join('')).toContain('secretInternalDetail');
  });

  it('show the original error in development only', async () => {
    const { text } = await serve('development');
    const body = JSON.parse(text);
    const error = body.errors.find((e: { path: string[] }) => e.path[0] === 'contribuyente');
    expect(error.extensions.code).toBe('INTERNAL_SERVER_ERROR');
    expect(error.extensions.originalError.message).toContain('secretInternalDetail');
  });
});
