import type { z } from 'zod';

/** What a bad variable's line says: zod's message, but for a number what was given (a number is never a secret) rather than NaN. */
export function messageOf(issue: z.core.$ZodIssue, present: Readonly<Record<string, string | undefined>>): string {
  const given = issue.code === 'invalid_type' && issue.expected === 'number' ? present[String(issue.path[0])] : undefined;
  return given === undefined ? issue.message : `se esperaba un número, se dio ${JSON.stringify(given.slice(0, 40))}`;
}
