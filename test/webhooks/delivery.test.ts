import { describe, expect, it } from 'vitest';
import { nextTry } from '../../src/webhooks/delivery.js';

describe('nextTry', () => {
  it('doubles each wait from WEBHOOK_RETRY_FIRST_MS, and makes no attempt past WEBHOOK_RETRY_FOR_MS from the first', () => {
    const settings = { retryFirstMs: 5_000, retryForMs: 86_400_000 };
    let now = 0;
    const at: number[] = [0];
    for (let intentos = 1; ; intentos++) {
      const next = nextTry({ intentos, primerMs: 0 }, now, settings);
      if (next === undefined) break;
      at.push((now = next));
    }
    const waits = at.slice(1).map((t, i) => t - at[i]!);
    expect(waits.slice(0, 4)).toEqual([5_000, 10_000, 20_000, 40_000]);
    for (let i = 1; i < waits.length; i++) expect(waits[i]).toBe(2 * waits[i - 1]!);
    // 15 attempts, the last some 22.75 hours after the first (docs/webhooks.md).
    expect(at).toHaveLength(15);
    expect(at.at(-1)).toBe(5_000 * (2 ** 14 - 1));
    expect(at.at(-1)! + waits.at(-1)! * 2).toBeGreaterThan(settings.retryForMs);
  });
});
