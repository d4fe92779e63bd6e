import { describe, expect, it } from 'vitest';
import { honouredRetryAfterMs } from '../../src/upstream/messages.js';

describe('honouredRetryAfterMs', () => {
  const MAX = 300_000;
  const now = Date.parse('2026-11-26T12:00:00Z');

  it('takes delta-seconds and HTTP dates within the bound as they are', () => {
    expect(honouredRetryAfterMs('30', MAX, now)).toBe(30_000);
    expect(honouredRetryAfterMs(' 0 ', MAX, now)).toBe(0);
    expect(honouredRetryAfterMs('Thu, 26 Nov 2026 12:01:00 GMT', MAX, now)).toBe(60_000);
    expect(honouredRetryAfterMs('Thu, 26 Nov 2026 11:00:00 GMT', MAX, now)).toBe(0);
  });

  it('counts a longer, infinite or far-off wait as the bound: never more, always a finite number', () => {
    for (const header of [
      String(10 * 365 * 24 * 3600),
      '9'.repeat(400),
      'Fri, 01 Jan 2100 00:00:00 GMT',
      'Sunday, 06-Nov-94 08:49:37 GMT'.replace('94', '99'),
    ]) {
      const ms = honouredRetryAfterMs(header, MAX, Date.parse('1999-01-01T00:00:00Z'));
      expect(Number.isFinite(ms), header.slice(0, 20)).toBe(true);
      expect(ms).toBeLessThanOrEqual(MAX);
    }
    expect(honouredRetryAfterMs('9'.repeat(400), MAX, now)).toBe(MAX);
  });

  it('counts a missing or unreadable one as 1 s', () => {
    for (const header of [undefined, '', 'soon', '-5', '1.5', '1e9', 'NaN'])
      expect(honouredRetryAfterMs(header, MAX, now), String(header)).toBe(1000);
  });
});
