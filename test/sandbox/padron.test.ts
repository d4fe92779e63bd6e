import { describe, expect, it } from 'vitest';
import { PublishedRegister } from '../../src/sandbox/padron.js';

describe("the sandbox's published register", () => {
  it('dates its first day at the start of today in Lima, so a restarted sandbox never publishes over its next day', () => {
    const first = new PublishedRegister();
    // 00:00 in Lima is 05:00 UTC, worked out apart from the code: today's, or yesterday's before 05:00 UTC.
    const now = new Date();
    const limaDay = new Date(now.getTime() - 5 * 3_600_000).toISOString().slice(0, 10);
    expect(first.at.toISOString()).toBe(`${limaDay}T05:00:00.000Z`);
    const firstAt = first.at.getTime();
    const nextDay = first.nextDay();
    expect(nextDay.getTime()).toBeGreaterThan(firstAt);
    // Restarted: its first day again, older than the next day a gateway may have imported.
    expect(new PublishedRegister().at.getTime()).toBeLessThan(nextDay.getTime());
  });
});
