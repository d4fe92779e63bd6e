import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerifier, REFETCH_AFTER_MS } from '../../src/pipeline/sign-in.js';
import { startIdentityProvider, type IdentityProvider } from '../idp.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let idp: IdentityProvider;
beforeAll(async () => {
  idp = await startIdentityProvider();
});
afterAll(async () => {
  await idp?.close();
});

describe('the sign-in verifier (jose, against a real JWKS server on loopback)', () => {
  it('keeps verifying with the keys it last fetched once they are due for a refetch and the provider is down', async () => {
    const key = await idp.addKey('ES256');
    // Keys kept 1 s here instead of 10 minutes, so that the refetch is due within the test.
    const verify = createVerifier({ jwksUrl: idp.jwksUrl, issuer: idp.issuer, audience: idp.audience, subjectClaim: 'sub' }, 1000);
    expect(await verify(await idp.sign(key, 'first'))).toEqual({ subject: 'first' });
    const fetched = idp.fetches;
    idp.down(true);
    try {
      await sleep(Math.max(1100, REFETCH_AFTER_MS + 100));
      // Due for a refetch, which fails: the kept key still verifies a token it signed.
      expect(await verify(await idp.sign(key, 'second'))).toEqual({ subject: 'second' });
      // And the provider was asked again, in the background.
      for (let i = 0; i < 50 && idp.fetches === fetched; i++) await sleep(20);
      expect(idp.fetches).toBeGreaterThan(fetched);
      // One no kept key fits cannot be judged: unavailable, not refused.
      const stranger = await idp.addKey('ES256');
      expect(await verify(await idp.sign(stranger, 'third'))).toEqual({ refused: 'unavailable' });
      // And a bad token is still refused as bad.
      expect(await verify(await idp.sign(key, 'late', { exp: Math.floor(Date.now() / 1000) - 120 }))).toEqual({ refused: 'expired' });
    } finally {
      idp.down(false);
    }
  });

  it('does not keep anyone waiting for a provider that hangs: the kept keys verify while it is asked in the background', async () => {
    const key = await idp.addKey('ES256');
    const verify = createVerifier({ jwksUrl: idp.jwksUrl, issuer: idp.issuer, audience: idp.audience, subjectClaim: 'sub' }, 1000);
    expect(await verify(await idp.sign(key, 'before'))).toEqual({ subject: 'before' });
    idp.hang(true);
    try {
      await sleep(1100);
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        expect(await verify(await idp.sign(key, `during-${i}`))).toEqual({ subject: `during-${i}` });
        expect(performance.now() - started).toBeLessThan(500);
      }
    } finally {
      idp.hang(false);
    }
  });

  it('checks a token’s signature once: the same token again is taken from memory, never past its exp', async () => {
    const key = await idp.addKey('RS256');
    const verify = createVerifier({ jwksUrl: idp.jwksUrl, subjectClaim: 'sub' });
    const soon = Math.floor(Date.now() / 1000) - 28; // expired, but within the 30 s of tolerance for 2 s more
    const token = await idp.sign(key, 'brief', { exp: soon });
    expect(await verify(token)).toEqual({ subject: 'brief' });
    expect(await verify(token)).toEqual({ subject: 'brief' });
    await sleep(2500);
    expect(await verify(token)).toEqual({ refused: 'expired' });
  });
});
