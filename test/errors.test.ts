import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, RETRYABLE_BY_DEFAULT, type ErrorCode } from '../src/errors.js';

/** docs/errors.md's table, row by row: the codes of a row and its `retryable` column. */
function documentedRows(): { codes: string[]; retryable: string }[] {
  const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
  return doc
    .split('\n')
    .filter((line) => /^\| .* \| `[A-Z_]+`.* \| (true|false) \|$/.test(line))
    .map((line) => {
      const cells = line.split(' | ');
      return { codes: [...cells.at(-2)!.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]!), retryable: cells.at(-1)!.replace(' |', '') };
    });
}

describe('docs/errors.md', () => {
  const rows = documentedRows();

  it('lists every code of ERROR_CODES, and no other', () => {
    expect([...new Set(rows.flatMap((r) => r.codes))].sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it("gives each code the gateway's own retryable, and UPSTREAM_ERROR and REGISTER_UNAVAILABLE both (they depend on the case)", () => {
    for (const { codes, retryable } of rows) {
      for (const code of codes as ErrorCode[]) {
        if (code === 'UPSTREAM_ERROR' || code === 'REGISTER_UNAVAILABLE') continue;
        expect(retryable, code).toBe(String(RETRYABLE_BY_DEFAULT.has(code)));
      }
    }
    const upstreamError = rows.filter((r) => r.codes.includes('UPSTREAM_ERROR')).map((r) => r.retryable);
    expect(upstreamError.sort()).toEqual(['false', 'true']);
    expect([...new Set(rows.filter((r) => r.codes.includes('REGISTER_UNAVAILABLE')).map((r) => r.retryable))].sort()).toEqual([
      'false',
      'true',
    ]);
  });
});
