import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hasPairs, openPairs } from '../../src/padron/name-index.js';
import { nameIndexStep } from '../../src/padron/name-step.js';
import { search } from '../../src/padron/search.js';
import { namesOf, openIndex } from '../../src/padron/versions.js';
import { rucOf } from '../fixtures/register.js';

const dir = mkdtempSync(join(tmpdir(), 'name-step-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What the index keeps of a row: name, estado, condición, UBIGEO, the address's parts, the flags. */
const kept = (name: string, estado = 'ACTIVO') => `${name}|${estado}|HABIDO|150131|-|-|-|-|-|-|-|-|-|-|NNNN`;

describe('the name index step', () => {
  it('files each row it is given and writes both indexes at its finish, with their counts for the meta', async () => {
    const db = await openIndex(join(dir, 'v-1'));
    const rows: [string, string][] = [
      [rucOf('10', 10_000_001), kept('QUISPE MAMANI JUAN CARLOS')],
      [rucOf('10', 10_000_002), kept('MAMANI QUISPE CARLOS')],
      [rucOf('20', 10_000_003), kept('COMERCIAL ANDINA S.A.C.', 'BAJA DE OFICIO')],
    ];
    db.transactionSync(() => rows.forEach(([ruc, value]) => db.putSync(ruc, value)));
    const run = nameIndexStep.begin({ db, path: join(dir, 'v-1'), scratch: join(dir, 'scratch') });
    for (const [ruc, value] of rows) run.row(ruc, value);
    // A RUC that is no RUC is counted, never filed.
    run.row('20100000000', kept('SIN DIGITO VERIFICADOR'));
    expect(await run.finish()).toEqual({ names: { entries: 10, pairs: expect.any(Number), unindexed: 1 } });
    expect(hasPairs(openPairs(db))).toBe(true);
    const index = { version: 'v-1', db, names: namesOf(db)! };
    expect(search(index, 'carlos quispe', {}, 10, undefined).found.map((f) => f.ruc)).toEqual([rows[1]![0], rows[0]![0]]);
    expect(search(index, 'andina', {}, 10, undefined).found.map((f) => f.ruc)).toEqual([rows[2]![0]]);
    await db.close();
  });
});
