import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { afterAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { fillIndex } from '../../src/padron/import.js';

const dir = mkdtempSync(join(tmpdir(), 'padron-import-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let scratches = 0;
/** Where an import sorts its runs. */
const scratch = () => join(dir, `scratch-${scratches++}`);

/** A zip holding `text` (ISO-8859-1) as `entry`, written to `name` in the test's directory. */
async function zip(name: string, entry: string, text: string): Promise<string> {
  const file = new yazl.ZipFile();
  file.addBuffer(Buffer.from(text, 'latin1'), entry);
  file.end();
  const chunks: Buffer[] = [];
  for await (const chunk of file.outputStream) chunks.push(chunk as Buffer);
  const path = join(dir, name);
  writeFileSync(path, Buffer.concat(chunks));
  return path;
}

const HEADER =
  'RUC|NOMBRE O RAZÓN SOCIAL|ESTADO DEL CONTRIBUYENTE|CONDICIÓN DE DOMICILIO|UBIGEO|TIPO DE VÍA|NOMBRE DE VÍA|CÓDIGO DE ZONA|TIPO DE ZONA|NÚMERO|INTERIOR|LOTE|DEPARTAMENTO|MANZANA|KILÓMETRO|';
const ROW = '20100123453|COMERCIAL ANDINA S.A.C.|ACTIVO|HABIDO|150131|AV.|JAVIER PRADO ESTE|-|-|1234|-|-|-|-|-|';

describe('fillIndex', () => {
  it('stops at a line longer than any register’s, rather than hold it whole', async () => {
    const flags = await Promise.all([0, 1, 2, 3].map((i) => zip(`f${i}.zip`, 'f.txt', 'Ruc|Nombre/Razon|A partir del|Resolucion|\r\n')));
    const padron = await zip('long.zip', 'padron_reducido_ruc.txt', `${HEADER}\n${ROW}\n${'X'.repeat(200_000)}\n${ROW}\n`);
    const db = open<string, string>({ path: join(dir, 'index'), encoding: 'string' });
    try {
      await expect(fillIndex(db, { padron, flags, lastModified: Date.now() }, scratch())).rejects.toThrow(
        /long.zip: a line over 4096 bytes/,
      );
    } finally {
      await db.close();
    }
  });

  it('reads lines ended by LF, CRLF or a lone CR alike, and ISO-8859-1', async () => {
    const flags = await Promise.all(
      [0, 1, 2, 3].map((i) => zip(`g${i}.zip`, 'f.txt', `Ruc|Nombre/Razon|A partir del|Resolucion|\r20100123453|X|01/01/2020|R|\r`)),
    );
    const enye = '20622222222|INVERSIONES PEÑA S.R.L.|ACTIVO|HABIDO|150131|CAL.|LOS PINOS|-|-|12|-|-|-|-|-|';
    const padron = await zip('ends.zip', 'padron_reducido_ruc.txt', `${HEADER}\r\n${ROW}\r${enye}\n`);
    const db = open<string, string>({ path: join(dir, 'index2'), encoding: 'string' });
    try {
      const filled = await fillIndex(db, { padron, flags, lastModified: 1_700_000_000_000 }, scratch());
      expect(filled).toMatchObject({ rows: 2, skipped: { fields: 0, ruc: 0, name: 0 }, dateMs: 1_700_000_000_000 });
      expect(db.get('20622222222')).toBe('INVERSIONES PEÑA S.R.L.|ACTIVO|HABIDO|150131|CAL.|LOS PINOS|-|-|12|-|-|-|-|-|NNNN');
      expect(db.get('20100123453')?.endsWith('|SSSS')).toBe(true);
    } finally {
      await db.close();
    }
  });

  it('refuses what is not SUNAT’s register: mostly bad lines, or far fewer rows than the register in use', async () => {
    const flags = await Promise.all([0, 1, 2, 3].map((i) => zip(`h${i}.zip`, 'f.txt', 'Ruc|Nombre/Razon|A partir del|Resolucion|\r\n')));
    const bad = Array.from({ length: 200 }, (_, i) => `2010012345${i % 10}|SOLO CUATRO|ACTIVO|`).join('\n');
    const noisy = await zip('noisy.zip', 'padron_reducido_ruc.txt', `${HEADER}\n${ROW}\n${bad}\n`);
    const small = await zip('small.zip', 'padron_reducido_ruc.txt', `${HEADER}\n${ROW}\n`);
    const db = open<string, string>({ path: join(dir, 'index3'), encoding: 'string' });
    try {
      await expect(fillIndex(db, { padron: noisy, flags, lastModified: 1 }, scratch())).rejects.toThrow(
        /200 of 202 lines skipped: not SUNAT's register/,
      );
      await expect(fillIndex(db, { padron: small, flags, lastModified: 1 }, scratch(), { rowsInUse: 18_000_000 })).rejects.toThrow(
        /not a whole register/,
      );
    } finally {
      await db.close();
    }
  });

  it('stops at a long line wherever it falls, between short lines of one chunk too', async () => {
    const flags = await Promise.all([0, 1, 2, 3].map((i) => zip(`k${i}.zip`, 'f.txt', 'Ruc|Nombre/Razon|A partir del|Resolucion|\r\n')));
    const padron = await zip('inside.zip', 'padron_reducido_ruc.txt', `${HEADER}\n${ROW}\n${'X'.repeat(6_000)}\n${ROW}\n`);
    const db = open<string, string>({ path: join(dir, 'index4'), encoding: 'string' });
    try {
      await expect(fillIndex(db, { padron, flags, lastModified: Date.now() }, scratch())).rejects.toThrow(
        /inside.zip: a line over 4096 bytes/,
      );
    } finally {
      await db.close();
    }
  });

  it('writes the same index whatever the order of the lines: sorted on disk, then appended in RUC order', async () => {
    const flags = await Promise.all([0, 1, 2, 3].map((i) => zip(`o${i}.zip`, 'f.txt', 'Ruc|Nombre/Razon|A partir del|Resolucion|\r\n')));
    const rows = Array.from({ length: 2_000 }, (_, i) =>
      ROW.replace('20100123453', `20${String(100_000_000 + i * 7919).slice(0, 9)}`).replace('COMERCIAL', `COMERCIAL ${i}`),
    );
    const shuffled = rows
      .map((r, i) => [((i * 7_919) % 2_003) / 2_003, r] as const)
      .sort((a, b) => a[0] - b[0])
      .map(([, r]) => r);
    const inOrder = await zip('inorder.zip', 'padron_reducido_ruc.txt', `${HEADER}\n${[...rows].sort().join('\n')}\n`);
    const noOrder = await zip('noorder.zip', 'padron_reducido_ruc.txt', `${HEADER}\n${shuffled.join('\n')}\n`);
    const a = open<string, string>({ path: join(dir, 'ordered'), encoding: 'string' });
    const b = open<string, string>({ path: join(dir, 'unordered'), encoding: 'string' });
    try {
      expect(await fillIndex(a, { padron: inOrder, flags, lastModified: 1 }, scratch())).toMatchObject({ rows: 2_000 });
      expect(await fillIndex(b, { padron: noOrder, flags, lastModified: 1 }, scratch())).toMatchObject({ rows: 2_000 });
      // The root database also names the name index's database: the rows are the 11-digit keys.
      const all = (db: typeof a) =>
        [...db.getRange()].filter(({ key }) => /^\d{11}$/.test(String(key))).map(({ key, value }) => `${String(key)}=${value}`);
      expect(all(b)).toEqual(all(a));
      expect(all(a)).toHaveLength(2_000);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('keeps the first line of a RUC listed twice (a later one is no impostor) and counts it; refuses a register of duplicates', async () => {
    const flags = await Promise.all([0, 1, 2, 3].map((i) => zip(`d${i}.zip`, 'f.txt', 'Ruc|Nombre/Razon|A partir del|Resolucion|\r\n')));
    const impostor = ROW.replace('COMERCIAL ANDINA S.A.C.', 'IMPOSTOR S.A.');
    const other = '20622222222|INVERSIONES PEÑA S.R.L.|ACTIVO|HABIDO|150131|CAL.|LOS PINOS|-|-|12|-|-|-|-|-|';
    const twice = await zip('twice.zip', 'padron_reducido_ruc.txt', `${HEADER}\n${ROW}\n${other}\n${impostor}\n`);
    const copies = await zip('copies.zip', 'padron_reducido_ruc.txt', `${HEADER}\n${Array.from({ length: 500 }, () => ROW).join('\n')}\n`);
    const db = open<string, string>({ path: join(dir, 'index5'), encoding: 'string' });
    const db2 = open<string, string>({ path: join(dir, 'index6'), encoding: 'string' });
    try {
      const filled = await fillIndex(db, { padron: twice, flags, lastModified: 1 }, scratch());
      expect(filled).toMatchObject({ rows: 2, skipped: { duplicate: 1 } });
      expect(db.get('20100123453')?.startsWith('COMERCIAL ANDINA S.A.C.|')).toBe(true);
      await expect(fillIndex(db2, { padron: copies, flags, lastModified: 1 }, scratch())).rejects.toThrow(
        /499 of 500 lines list a RUC again: not SUNAT's register/,
      );
    } finally {
      await db.close();
      await db2.close();
    }
  });

  it('gives up at once when stopped, whatever the lines: millions of blank ones write no batch to look at the signal between', async () => {
    const flags = await Promise.all([0, 1, 2, 3].map((i) => zip(`s${i}.zip`, 'f.txt', 'Ruc|Nombre/Razon|A partir del|Resolucion|\r\n')));
    const padron = await zip('blank.zip', 'padron_reducido_ruc.txt', `${HEADER}\n${ROW}\n${'\n'.repeat(30_000_000)}`);
    const db = open<string, string>({ path: join(dir, 'index7'), encoding: 'string' });
    const stop = new AbortController();
    try {
      const importing = fillIndex(db, { padron, flags, lastModified: 1 }, scratch(), { signal: stop.signal });
      await new Promise((r) => setTimeout(r, 200));
      const stoppedAt = performance.now();
      stop.abort(new Error('stopping'));
      await expect(importing).rejects.toThrow(/stopping/);
      expect(performance.now() - stoppedAt).toBeLessThan(1_000);
    } finally {
      await db.close();
    }
  }, 60_000);

  it('bounds what flag registers may hold: one RUC listed 3 million times in a row is one RUC, and more than 2 million RUCs are refused', async () => {
    const flag = (name: string, text: string) => zip(name, 'f.txt', `Ruc|Nombre/Razon|A partir del|Resolucion|\r\n${text}`);
    const repeated = await flag('r0.zip', '20100123453|X|01/01/2020|R|\r\n'.repeat(3_000_000));
    const plain = await Promise.all([1, 2, 3].map((i) => flag(`r${i}.zip`, '')));
    const padron = await zip('flagged.zip', 'padron_reducido_ruc.txt', `${HEADER}\n${ROW}\n`);
    const db = open<string, string>({ path: join(dir, 'index8'), encoding: 'string' });
    const db2 = open<string, string>({ path: join(dir, 'index9'), encoding: 'string' });
    try {
      // Over the bound if each repeat counted.
      await fillIndex(db, { padron, flags: [repeated, ...plain], lastModified: 1 }, scratch());
      expect(db.get('20100123453')?.endsWith('|SNNN')).toBe(true);
      const many = await flag('m0.zip', Array.from({ length: 2_000_001 }, (_, i) => `${20_000_000_000 + i * 2}|X|\r\n`).join(''));
      await expect(fillIndex(db2, { padron, flags: [many, ...plain], lastModified: 1 }, scratch())).rejects.toThrow(
        /m0.zip: over 2000000 RUCs/,
      );
    } finally {
      await db.close();
      await db2.close();
    }
  }, 60_000);

  it('reads a name written in UTF-8 right, and skips and counts one whose bytes are neither ISO-8859-1 text nor UTF-8', async () => {
    const flags = await Promise.all([0, 1, 2, 3].map((i) => zip(`u${i}.zip`, 'f.txt', 'Ruc|Nombre/Razon|A partir del|Resolucion|\r\n')));
    // PEÑA's Ñ as UTF-8's two bytes (C3 91), as the zip's ISO-8859-1 reading sees them; then a lone C1 control byte.
    const utf8 = '20622222222|INVERSIONES PE\u00c3\u0091A S.R.L.|ACTIVO|HABIDO|150131|CAL.|LOS PINOS|-|-|12|-|-|-|-|-|';
    const broken = '20633333333|EMPRESA \u0085 RARA S.A.C.|ACTIVO|HABIDO|150131|CAL.|LOS PINOS|-|-|12|-|-|-|-|-|';
    const padron = await zip('utf8.zip', 'padron_reducido_ruc.txt', `${HEADER}\n${ROW}\n${utf8}\n${broken}\n`);
    const db = open<string, string>({ path: join(dir, 'index10'), encoding: 'string' });
    try {
      const filled = await fillIndex(db, { padron, flags, lastModified: 1 }, scratch());
      expect(filled).toMatchObject({ rows: 2, skipped: { name: 1 } });
      expect(db.get('20622222222')?.split('|')[0]).toBe('INVERSIONES PEÑA S.R.L.');
      expect(db.get('20633333333')).toBeUndefined();
    } finally {
      await db.close();
    }
  });
});
