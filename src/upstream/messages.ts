/**
 * The messages by which the real service says what a refusal without a `code` means: a 2xx with
 * `success: false` and only a message (upstream-notes, "Envelopes and refusals seen in
 * practice"). One table, each entry with the fact it comes from; docs/errors.md lists them.
 */
export const RECOGNISED_MESSAGES = [
  {
    refusal: 'document_not_found',
    pattern: /no se encontr(aron|ó) (registros?|resultados?|datos)/i,
    example: 'No se encontraron registros',
    source: 'upstream-notes: a lookup that found nothing, answered HTTP 200 without a code',
  },
  {
    refusal: 'quota_exceeded',
    pattern: /superado la cantidad de consultas|consultas (mensuales|del plan) (agotadas|se agotaron)/i,
    example: 'Ha superado la cantidad de consultas mensuales',
    source: 'upstream-notes: an exhausted plan, answered with a 2xx',
  },
] as const;

/** What a refusal's message says it is, when it is one of the table's; undefined otherwise. */
export function refusalInMessage(message: string | undefined): (typeof RECOGNISED_MESSAGES)[number]['refusal'] | undefined {
  if (!message) return undefined;
  return RECOGNISED_MESSAGES.find((m) => m.pattern.test(message))?.refusal;
}

/** How long a throttle whose `Retry-After` is missing or unreadable holds a caller back. */
const WITHOUT_RETRY_AFTER_MS = 1000;

/**
 * The wait a throttling 429's `Retry-After` asks for, in ms from now, as honoured: delta-seconds
 * or an HTTP date (RFC 9110 10.2.3), at most `maxMs` (a longer, infinite or far-off one counts as
 * that, so that one answer cannot lock a token out); 1 s when absent or unreadable.
 */
export function honouredRetryAfterMs(header: string | undefined, maxMs: number, now = Date.now()): number {
  const value = header?.trim() ?? '';
  // An HTTP date starts with its day's name; Date.parse alone would also read '-5' or '1.5' as dates.
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : /^[A-Za-z]{3}/.test(value) ? Date.parse(value) - now : NaN;
  if (Number.isNaN(ms)) return WITHOUT_RETRY_AFTER_MS;
  return Math.min(Math.max(0, ms), maxMs);
}

/**
 * A service that quotes the call's secrets back (the token, SOL credentials) must not have them
 * shown or logged by us: each is replaced, the longest first, so that one inside another goes whole.
 */
export function scrubbed(message: string, token: string, secrets: readonly string[] | undefined): string {
  let said = token && message.includes(token) ? message.replaceAll(token, '[token]') : message;
  if (!secrets) return said;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret && said.includes(secret)) said = said.replaceAll(secret, '[credencial]');
  }
  return said;
}
