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

/**
 * `Retry-After` in whole seconds from now: delta-seconds, or an HTTP date (RFC 9110 10.2.3);
 * undefined when absent or unreadable.
 */
export function retryAfterSeconds(header: string | undefined, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
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
