import { describe, expect, it } from 'vitest';
import { refusalOf, UpstreamHttpError, upstreamErrorData, upstreamErrorFrom } from '../../src/upstream/errors.js';

describe('refusalOf: the one reading of an error answer', () => {
  it('reads 401 and 403 whatever the code, a spec code with its own status or a 2xx, and anything else as other', () => {
    expect(refusalOf(401, 'invalid_input')).toBe('unauthenticated');
    expect(refusalOf(403, undefined)).toBe('forbidden');
    expect(refusalOf(404, 'document_not_found')).toBe('document_not_found');
    expect(refusalOf(200, 'quota_exceeded')).toBe('quota_exceeded');
    expect(refusalOf(400, 'document_not_found')).toBe('other');
    expect(refusalOf(418, undefined)).toBe('other');
    expect(refusalOf(400, '__proto__')).toBe('other');
  });

  it('is carried by the error, and read again the same after a trip through the shared store', () => {
    const error = new UpstreamHttpError({ path: '/ruc', status: 429, upstreamCode: 'quota_exceeded' });
    expect(error).toMatchObject({ code: 'UPSTREAM_HTTP_ERROR', kind: 'http', reason: 'quota_exceeded' });
    expect(upstreamErrorFrom(JSON.parse(JSON.stringify(upstreamErrorData(error))))).toMatchObject({
      code: 'UPSTREAM_HTTP_ERROR',
      reason: 'quota_exceeded',
    });
  });
});
