import type { Logger } from 'pino';
import type { Metrics } from './metrics.js';

/** How often a store's problems of one kind are logged at most; every one is counted. */
const LOG_EVERY_MS = 10_000;

/**
 * Store errors and time-outs, each counted by step and kind, and logged at most once per
 * LOG_EVERY_MS for each, with how many went unlogged since: a store that fails every command
 * must not turn each lookup into a log line.
 */
export function storeProblems({ logger, metrics }: { logger: Logger; metrics: Metrics }) {
  const logged = new Map<string, { at: number; unlogged: number }>();
  return (op: string, error: Error): void => {
    const kind = problemKind(error);
    metrics.storeError('redis', op, kind);
    const key = `${op}:${kind}`;
    const now = performance.now();
    const last = logged.get(key);
    if (last && now - last.at < LOG_EVERY_MS) {
      last.unlogged++;
      return;
    }
    logged.set(key, { at: now, unlogged: 0 });
    logger.warn(
      { cache: 'redis', op, kind, error: error.message, unloggedSinceLast: last?.unlogged ?? 0 },
      op === 'budget'
        ? `cache store ${kind}: budgets are counted by BUDGET_WHEN_STORE_DOWN until it recovers`
        : `cache store ${kind}: lookups are shared within this process only until it recovers`,
    );
  };
}

/** What went wrong, in a few words a label can hold: a time-out, a full store (Redis's OOM refusal), or anything else. */
function problemKind(error: Error): 'timeout' | 'full' | 'error' {
  if (/timed? ?out/i.test(error.message)) return 'timeout';
  if (error.message.startsWith('OOM')) return 'full';
  return 'error';
}
