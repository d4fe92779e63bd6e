/**
 * An AbortSignal that aborts after `ms`; `clear()` releases its timer once the call is over.
 *
 * An explicit timer rather than `AbortSignal.timeout(ms)` combined through
 * `AbortSignal.any()`: on Node 20 a timeout signal held only by `AbortSignal.any()` can be
 * garbage-collected before it fires, and the call then runs with no time-out at all (seen
 * here under GC pressure; test/upstream/client.test.ts keeps it from coming back).
 */
export function timeoutSignal(ms: number): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException(`timed out after ${ms} ms`, 'TimeoutError')), ms);
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
