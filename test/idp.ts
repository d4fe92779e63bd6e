import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

export type Alg = 'RS256' | 'ES256' | 'EdDSA';

interface Key {
  kid: string;
  alg: Alg;
  privateKey: CryptoKey;
  jwk: JWK;
}

export interface IdentityProvider {
  issuer: string;
  jwksUrl: string;
  audience: string;
  /** GETs of the JWKS so far. */
  readonly fetches: number;
  /** A key made now, published in the JWKS (or kept apart, `published: false`), under a `kid` of its own unless given one. */
  addKey(alg: Alg, options?: { published?: boolean; kid?: string }): Promise<Key>;
  /** Stops publishing `key` (a key rotated out). */
  unpublish(key: Key): void;
  /** A signed JWT for `subject`, by `key`, with this provider's issuer and audience unless `claims` say otherwise. */
  sign(key: Key, subject: string | undefined, claims?: JWTPayload & { exp?: number }, header?: Record<string, unknown>): Promise<string>;
  /** While down, the JWKS answers 503. */
  down(isDown: boolean): void;
  /** While hanging, the JWKS never answers. */
  hang(isHanging: boolean): void;
  /** A page or anything else served at `path` (a browser test's sign-in page). */
  serve(path: string, contentType: string, body: string): void;
  close(): Promise<void>;
}

/** A test's own identity provider on loopback: keys made in the test, a JWKS, and its tokens. */
export async function startIdentityProvider(audience = 'registro-gateway-test'): Promise<IdentityProvider> {
  const keys: Key[] = [];
  const published = new Set<string>();
  const pages = new Map<string, { contentType: string; body: string }>();
  let fetches = 0;
  let isDown = false;
  let isHanging = false;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const page = pages.get(path);
    if (page) return void res.writeHead(200, { 'content-type': page.contentType }).end(page.body);
    if (path !== '/jwks.json') return void res.writeHead(404).end();
    fetches++;
    if (isHanging) return;
    if (isDown) return void res.writeHead(503).end('down');
    const jwks = { keys: keys.filter((k) => published.has(k.kid)).map((k) => k.jwk) };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let n = 0;
  return {
    issuer: base,
    jwksUrl: `${base}/jwks.json`,
    audience,
    get fetches() {
      return fetches;
    },
    async addKey(alg, options = {}) {
      const { privateKey, publicKey } = await generateKeyPair(alg, alg === 'RS256' ? { modulusLength: 2048 } : {});
      const kid = options.kid ?? `k${++n}-${alg}`;
      const key = { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
      keys.push(key);
      if (options.published !== false) published.add(kid);
      return key;
    },
    unpublish: (key) => void published.delete(key.kid),
    sign: (key, subject, claims = {}, header = {}) => {
      const jwt = new SignJWT(
        Object.fromEntries(Object.entries({ iss: base, aud: audience, ...claims }).filter(([, v]) => v !== undefined)),
      )
        .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...header })
        .setIssuedAt();
      if (subject !== undefined) jwt.setSubject(subject);
      // `exp: undefined` given on purpose: a token that never expires.
      if (!('exp' in claims)) jwt.setExpirationTime('1h');
      return jwt.sign(key.privateKey);
    },
    down: (value) => void (isDown = value),
    hang: (value) => void (isHanging = value),
    serve: (path, contentType, body) => void pages.set(path, { contentType, body }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
