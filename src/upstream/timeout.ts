/**
 * An AbortSignal that aborts after `ms`, or as soon as `parent` does; `clear()` releases
 * its timer and its hold on the parent once the call is over.
 *
 * Explicit timers rather than `AbortSignal.any([parent, AbortSignal.timeout(ms)])`: on
 * Node 20 a timeout signal held only by `AbortSignal.any()` can be garbage-collected before
 * it fires, and the call then runs with no time-out at all (seen here under GC pressure).
 */
export function timeoutSignal(ms: number, parent?: AbortSignal): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException(`timed out after ${ms} ms`, 'TimeoutError')), ms);
  const onParentAbort = () => controller.abort(parent?.reason);
  if (parent?.aborted) onParentAbort();
  else parent?.addEventListener('abort', onParentAbort, { once: true });
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}
