import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, REFUSALS, RETRYABLE_BY_DEFAULT, worded, type ErrorCode } from '../src/errors.js';

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

describe('REFUSALS', () => {
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
    );

  it('word every refusal: no file of src/ but src/errors.ts makes a typed error or writes an error body of its own words', () => {
    const elsewhere = files('src')
      .filter((f) => f !== join('src', 'errors.ts'))
      .filter((f) => /\bgatewayError\(|errorAnswer\('|errorBody\('|new PadronRefused\('[^']*\s/.test(readFileSync(f, 'utf8')));
    expect(elsewhere).toEqual([]);
  });

  it('give each refusal a code of the contract, and an HTTP status only where one is an error', () => {
    for (const [key, refusal] of Object.entries(REFUSALS)) {
      expect(ERROR_CODES, key).toHaveProperty(refusal.code);
      if ('status' in refusal) expect(refusal.status, key).toBeGreaterThanOrEqual(400);
    }
  });

  it('words the register’s refusals, named below this floor, in Spanish', () => {
    expect(worded('textTooLong', { max: 100 })).toEqual({
      code: 'INVALID_INPUT',
      message: 'texto: a lo más 100 caracteres',
      retryable: undefined,
      status: undefined,
    });
  });
});
