import { exportJWK, generateKeyPair, SignJWT, type JSONWebKeySet } from 'jose';
import { SANDBOX_AUDIENCE, SANDBOX_JWKS_PATH } from '../config/auth.js';

export const JWKS_PATH = SANDBOX_JWKS_PATH;

/** The subject of the sign-in token the banner and GraphiQL show. */
export const SANDBOX_SUBJECT = 'demo';

/** A stand-in identity provider: a key made at start, its JWKS, and sign-in tokens for any subject. */
export interface SandboxIdentity {
  readonly issuer: string;
  readonly jwks: JSONWebKeySet;
  /** A sign-in token (ES256, for a day) for `subject`, with the sandbox as issuer and the gateway as audience. */
  signIn(subject: string): Promise<string>;
}

export async function sandboxIdentity(issuer: string): Promise<SandboxIdentity> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const kid = `sandbox-${Date.now().toString(36)}`;
  const jwks: JSONWebKeySet = { keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }] };
  return {
    issuer,
    jwks,
    signIn: (subject) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
        .setSubject(subject)
        .setIssuer(issuer)
        .setAudience(SANDBOX_AUDIENCE)
        .setIssuedAt()
        .setExpirationTime('24h')
        .sign(privateKey),
  };
}
