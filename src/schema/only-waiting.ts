import type { ServerResponse } from 'node:http';

/**
 * A request that only waits on another request's upstream call holds no full place among the
 * requests being worked on: the HTTP server, a floor up, hangs a hook on the response as it
 * admits it, and the lookups call it when they join a call in flight. So one caller's flood of
 * identical lookups, all sharing one call, cannot keep other callers out.
 */
const HOOK = Symbol('gateway.onlyWaiting');
type WithHook = ServerResponse & { [HOOK]?: () => void };

/** Set by the server: what to do when the request behind `res` starts waiting on another's call. */
export function whenOnlyWaiting(res: ServerResponse, hook: () => void): void {
  (res as WithHook)[HOOK] = hook;
}

/** Told by the lookups: the request behind `res` now waits on another request's call. */
export function onlyWaiting(res: ServerResponse): void {
  (res as WithHook)[HOOK]?.();
}
