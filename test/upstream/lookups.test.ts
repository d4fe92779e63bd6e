import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PLAN_COST } from '../../src/upstream/billing.js';
import { LOOKUP_OPS, LOOKUPS } from '../../src/upstream/lookups.js';
import { SPEC_PRICE } from '../../src/sandbox/prices.js';

/** Every source file of src/ but the sandbox's, by its path. */
function sources(dir = 'src'): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return path === join('src', 'sandbox') ? [] : sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

describe('each lookup is declared once, in its row', () => {
  /**
   * The newest lookups, whose names are their own (a RUC or a DNI is named everywhere): adding
   * one touched its row, its reader, its schema file (and the schema's index importing that
   * file), and nothing else in src/ outside the sandbox.
   */
  const newest: [string, RegExp, string][] = [
    ['establecimientos', /establecimientos|Establecimiento|ruc-establecimientos-anexos/, 'src/schema/empresa.ts'],
    ['tipoDeCambio', /tipoDeCambio|TipoDeCambio|tipo-de-cambio/, 'src/schema/tipo-de-cambio.ts'],
  ];

  it.each(newest)('%s is named only by its row, its reader and its schema file', (_op, named, schemaFile) => {
    const naming = sources().filter((path) => named.test(readFileSync(path, 'utf8')));
    const allowed = new Set(['src/upstream/lookups.ts', 'src/upstream/schemas.ts', schemaFile]);
    // The schema's index imports each domain file, by its file name only.
    const index = readFileSync('src/schema/index.ts', 'utf8');
    if (naming.includes('src/schema/index.ts') && index.split('\n').every((line) => !named.test(line) || /^import '\.\//.test(line)))
      allowed.add('src/schema/index.ts');
    expect(naming.filter((path) => !allowed.has(path))).toEqual([]);
  });

  it('derives the price list from the rows, which the sandbox’s own spec prices confirm', () => {
    for (const op of LOOKUP_OPS) {
      expect(PLAN_COST[LOOKUPS[op].path], op).toBe(LOOKUPS[op].price);
      expect(SPEC_PRICE[LOOKUPS[op].path], op).toBe(LOOKUPS[op].price);
    }
  });
});
