import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerifier } from '../../src/pipeline/sign-in.js';
import { SigningKeys } from '../../src/pipeline/signing-keys.js';
import { startIdentityProvider, type IdentityProvider } from '../idp.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let idp: IdentityProvider;
beforeAll(async () => {
  idp = await startIdentityProvider();
});
afterAll(async () => {
  await idp?.close();
});

/**
 * Keys kept 1 s here instead of 10 minutes, and the provider asked at most every 300 ms instead
 * of 5 s, so that what happens after a refetch is due happens within the test; started and
 * fetched, as the app does before /ready says 200.
 */
async function fetchedKeys(keptMs = 1000, refetchAfterMs = 300): Promise<SigningKeys> {
  const keys = new SigningKeys(idp.jwksUrl, keptMs, refetchAfterMs);
  keys.start();
  await keys.asking;
  return keys;
}

describe('the sign-in verifier (jose, against a real JWKS server on loopback)', () => {
  it('tells a caller who sent a plan token (not a JWT) that a sign-in token is expected, without asking the provider', async () => {
    const keys = await fetchedKeys();
    const verify = createVerifier({ keys, issuer: idp.issuer, audience: idp.audience, subjectClaim: 'sub' });
    const fetched = idp.fetches;
    expect(await verify('sandbox-pro')).toEqual({ refused: 'not_a_jwt' });
    expect(idp.fetches).toBe(fetched);
    keys.close();
  });

  it('keeps verifying with the keys it last fetched once they are due for a refetch and the provider is down', async () => {
    const key = await idp.addKey('ES256');
    const keys = await fetchedKeys();
    const verify = createVerifier({ keys, issuer: idp.issuer, audience: idp.audience, subjectClaim: 'sub' });
    expect(await verify(await idp.sign(key, 'first'))).toEqual({ subject: 'first' });
    const fetched = idp.fetches;
    idp.down(true);
    try {
      await sleep(1100);
      // Due for a refetch, which fails: the kept key still verifies a token it signed.
      expect(await verify(await idp.sign(key, 'second'))).toEqual({ subject: 'second' });
      // And the provider was asked again, in the background.
      for (let i = 0; i < 50 && idp.fetches === fetched; i++) await sleep(20);
      expect(idp.fetches).toBeGreaterThan(fetched);
      // One no kept key fits cannot be judged: unavailable, not refused.
      const stranger = await idp.addKey('ES256');
      await sleep(300);
      expect(await verify(await idp.sign(stranger, 'third'))).toEqual({ refused: 'unavailable' });
      // And a bad token is still refused as bad.
      expect(await verify(await idp.sign(key, 'late', { exp: Math.floor(Date.now() / 1000) - 120 }))).toEqual({ refused: 'expired' });
    } finally {
      idp.down(false);
      keys.close();
    }
  });

  it('does not keep anyone waiting for a provider that hangs: the kept keys verify while it is asked in the background', async () => {
    const key = await idp.addKey('ES256');
    const keys = await fetchedKeys();
    const verify = createVerifier({ keys, issuer: idp.issuer, audience: idp.audience, subjectClaim: 'sub' });
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
      keys.close();
    }
  });

  it('asks a failing provider at most once per interval, failures included, whatever key ids the tokens name', async () => {
    const key = await idp.addKey('ES256');
    const keys = await fetchedKeys(60_000, 2000);
    const verify = createVerifier({ keys, issuer: idp.issuer, audience: idp.audience, subjectClaim: 'sub' });
    // Signed beforehand: the 200 verifications, not their signing, must fit in one interval on a busy machine.
    const tokens = await Promise.all(Array.from({ length: 200 }, (_, i) => idp.sign(key, `made-up-${i}`, {}, { kid: `made-up-${i}` })));
    idp.down(true);
    try {
      await sleep(2000);
      const before = idp.fetches;
      for (const token of tokens) expect(await verify(token)).toEqual({ refused: 'unavailable' });
      expect(idp.fetches - before).toBe(1);
    } finally {
      idp.down(false);
      keys.close();
    }
  });

  it('checks a token’s signature once: the same token again is taken from memory, never past its exp', async () => {
    const key = await idp.addKey('RS256');
    const keys = await fetchedKeys(60_000);
    const verify = createVerifier({ keys, subjectClaim: 'sub' });
    const soon = Math.floor(Date.now() / 1000) - 28; // expired, but within the 30 s of tolerance for 2 s more
    const token = await idp.sign(key, 'brief', { exp: soon });
    expect(await verify(token)).toEqual({ subject: 'brief' });
    expect(await verify(token)).toEqual({ subject: 'brief' });
    await sleep(2500);
    expect(await verify(token)).toEqual({ refused: 'expired' });
    keys.close();
  });
});
