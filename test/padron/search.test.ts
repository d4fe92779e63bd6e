import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Register } from '../../src/padron/register.js';
import type { SearchFilter } from '../../src/padron/search.js';
import { commonWords, expected, fold, lineOf, mirrorOf, register, registerOver, rucOf } from '../fixtures/register.js';

/**
 * buscarContribuyentes over a register the test writes itself (test/fixtures/register.ts: lines in
 * no order), every answer checked against what the fixture works out on its own from the
 * contract's rules: folding, matching, order, filters, paging.
 */

const ROWS = register(3_000);

// The same searches on the event loop (PADRON_SEARCH_THREADS=0) and on two threads of their own.
describe.each([0, 2])('with PADRON_SEARCH_THREADS=%i', (searchThreads) => {
  let dir: string;
  let server: Server;
  let padron: Register;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'search-'));
    // Lines in no order (the generator's, not RUC order), and a second line for a RUC, later: an impostor's name, which neither the record nor the name index may take.
    const lines = [...ROWS.map(lineOf), `${ROWS[0]!.ruc}|IMPOSTOR UNICO S.A.C.|ACTIVO|HABIDO|150131|-|-|-|-|-|-|-|-|-|-|`];
    const mirror = await mirrorOf(lines);
    server = mirror.server;
    padron = registerOver(mirror.url, dir, { searchThreads });
    await padron.refresh();
    expect(padron.state()).toMatchObject({ state: 'ready', rows: ROWS.length });
  });
  afterAll(async () => {
    await padron?.close();
    server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Every page of a search, `first` at a time, following endCursor. */
  async function walk(texto: string, filter: SearchFilter = {}, first = 7): Promise<string[]> {
    const rucs: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 10_000; pages++) {
      const page = await padron.search(texto, filter, first, after);
      // A page holds `first` matches unless it is the last (contract).
      if (page.hasNextPage) expect(page.records.length).toBe(first);
      else expect(page.records.length).toBeLessThanOrEqual(first);
      rucs.push(...page.records.map((r) => r.ruc));
      if (!page.hasNextPage) return rucs;
      after = page.endCursor!;
    }
    throw new Error('never ended');
  }

  describe('buscarContribuyentes over the register', async () => {
    const texts = [
      'com andi',
      'sac',
      'qui ma',
      'peña',
      "o'higgins",
      'ohiggins',
      'a b c',
      'com comercial',
      'Compañía S.A.C.',
      'ma mar maria',
      'san',
      'jr & de',
      'los andes',
      'ZZZ',
      // Words of which one begins the other: the name's first word holds only one of them.
      'quispe quispe',
      'qui quispe',
      'quispe qui',
      'san santa',
      'santa san sant',
      'mamani quispe peña',
    ];
    it.each(texts)('finds %j: every match once, in the contract’s order', async (texto) => {
      const want = expected(ROWS, texto);
      expect(await walk(texto)).toEqual(want);
    });

    it('matches `com andi` to COMERCIAL ANDINA S.A.C. (words in any order, each the start of a different word)', async () => {
      const found = (await padron.search('andi com', {}, 50, undefined)).records.map((r) => r.nombre_o_razon_social);
      expect(found.length).toBeGreaterThan(0);
      for (const name of found)
        expect(fold(name).some((w) => w.startsWith('COM')) && fold(name).some((w) => w.startsWith('ANDI'))).toBe(true);
    });

    it.each<[string, SearchFilter]>([
      ['com', { estados: ['activo'] }],
      ['com', { estados: ['Baja de Oficio', 'SUSPENSION TEMPORAL'] }],
      ['san', { condiciones: ['HABIDO'] }],
      ['mar', { ubigeo: '15' }],
      ['mar', { ubigeo: '150131', tipo: 'EMPRESA' }],
      ['quispe', { tipo: 'PERSONA_NATURAL', estados: ['ACTIVO'], condiciones: ['NO HABIDO'] }],
    ])('filters %j by %j', async (texto, filter) => {
      expect(await walk(texto, filter, 5)).toEqual(expected(ROWS, texto, filter));
    });

    it('never files a later line of a RUC (an impostor) under its name', async () => {
      expect((await padron.search('impostor', {}, 10, undefined)).records).toEqual([]);
      expect((await padron.search(ROWS[0]!.ruc, {}, 10, undefined)).records[0]?.nombre_o_razon_social).toBe(ROWS[0]!.name);
    });

    it('finds a RUC by its 11 digits, and the RUC 10 of a DNI by its 8', async () => {
      const company = ROWS.find((r) => r.ruc.startsWith('20'))!;
      expect((await padron.search(company.ruc, {}, 10, undefined)).records.map((r) => r.ruc)).toEqual([company.ruc]);
      const person = ROWS.find((r) => r.ruc.startsWith('10'))!;
      expect((await padron.search(person.ruc.slice(2, 10), {}, 10, undefined)).records.map((r) => r.ruc)).toEqual([person.ruc]);
    });

    it('refuses a text too short or too long, a RUC with a wrong check digit, and a cursor it did not give', async () => {
      const company = ROWS.find((r) => r.ruc.startsWith('20'))!;
      const wrong = company.ruc.slice(0, 10) + ((Number(company.ruc[10]) + 1) % 10);
      for (const texto of ['ab', 'a.b', ' - ', 'x'.repeat(101), wrong])
        await expect(padron.search(texto, {}, 10, undefined)).rejects.toThrow();
      const page = await padron.search('com', {}, 2, undefined);
      await expect(padron.search('com', {}, 2, 'AAAA')).rejects.toMatchObject({ refusal: 'cursorNotOurs' });
      // Another search's cursor: another text, or another filter.
      await expect(padron.search('san', {}, 2, page.endCursor!)).rejects.toMatchObject({ refusal: 'cursorOfAnother' });
      await expect(padron.search('com', { tipo: 'EMPRESA' }, 2, page.endCursor!)).rejects.toMatchObject({ refusal: 'cursorOfAnother' });
    });
  });
});

describe('a page’s bounded work', () => {
  let dir: string;
  let server: Server;
  let padron: Register;
  // 6,000 names that hold two of the three words and are too short to hold all three (16 characters; "CASTRO LOPEZ
  // MARIA" takes 18), ranked before the 10 that match: a join through them spends the page's work.
  const SHORT = 6_000;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'search-work-'));
    // And 6,000 whose first word is QUISPE and no other, ranked before the 10 that hold it twice.
    const names = (i: number) =>
      i < SHORT
        ? `CASTRO ${i % 2 ? 'LOPEZ' : 'MARIA'} ANA`
        : i < SHORT + 10
          ? `CASTRO LOPEZ MARIA ${i}`
          : i < 2 * SHORT + 10
            ? 'QUISPE MAMANI ANA'
            : `QUISPE QUISPE MARIA ${i}`;
    const rows = Array.from({ length: 2 * SHORT + 20 }, (_, i) => ({
      ruc: rucOf('10', 10_000_000 + i),
      name: names(i),
      estado: 'ACTIVO',
      condicion: 'HABIDO',
      ubigeo: '150131',
    }));
    const mirror = await mirrorOf(rows.map(lineOf));
    server = mirror.server;
    padron = registerOver(mirror.url, dir, { searchThreads: 0 });
    await padron.refresh();
  });
  afterAll(async () => {
    await padron?.close();
    server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('passes over the names too short to hold every word, and answers a full first page', async () => {
    const page = await padron.search('castro lopez maria', {}, 10, undefined);
    expect(page.records.map((r) => r.nombre_o_razon_social)).toEqual(
      Array.from({ length: 10 }, (_, k) => `CASTRO LOPEZ MARIA ${SHORT + k}`),
    );
    expect(page.hasNextPage).toBe(false);
  });

  it('reads a word that begins the first word again among the later words only, and answers a full first page', async () => {
    const page = await padron.search('quispe quispe', {}, 10, undefined);
    expect(page.records.map((r) => r.nombre_o_razon_social)).toEqual(
      Array.from({ length: 10 }, (_, k) => `QUISPE QUISPE MARIA ${2 * SHORT + 10 + k}`),
    );
    expect(page.hasNextPage).toBe(false);
  });
});

describe('a register of common words that rarely meet', () => {
  let dir: string;
  let server: Server;
  let padron: Register;
  const ROWS = commonWords(60_000);
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'search-common-'));
    const mirror = await mirrorOf(ROWS.map(lineOf));
    server = mirror.server;
    padron = registerOver(mirror.url, dir, { searchThreads: 0 });
    await padron.refresh();
  }, 120_000);
  afterAll(async () => {
    await padron?.close();
    server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A whole name as a person types it: as written, its words reversed, in lower case, without accents. */
  const typings = (name: string) => [
    name,
    name.split(' ').reverse().join(' '),
    name.toLowerCase(),
    name.normalize('NFD').replace(/[\u0300-\u036f]/g, ''),
  ];

  it('finds a whole name, typed four ways, where the contract’s order puts it on a full first page', async () => {
    for (const row of ROWS.filter((r) => r.ruc.startsWith('10')).slice(0, 40)) {
      for (const texto of typings(row.name)) {
        const want = expected(ROWS, texto);
        const page = await padron.search(texto, {}, 10, undefined);
        expect(
          page.records.map((r) => r.ruc),
          texto,
        ).toEqual(want.slice(0, 10));
        expect(page.hasNextPage, texto).toBe(want.length > 10);
        if (want.indexOf(row.ruc) < 10) expect(page.records.map((r) => r.ruc)).toContain(row.ruc);
      }
    }
  });

  it.each(['juan', 'maria', 'quispe mamani', 'juan carlos', 'qui', 'mam jua', 'inversiones sac', 'cruz de la', 'peña juan maria'])(
    'answers %j with full pages until the last, every match in the contract’s order',
    async (texto) => {
      const rucs: string[] = [];
      let after: string | undefined;
      for (let pages = 0; pages < 5; pages++) {
        const page = await padron.search(texto, {}, 10, after);
        if (page.hasNextPage) expect(page.records.length).toBe(10);
        rucs.push(...page.records.map((r) => r.ruc));
        if (!page.hasNextPage) break;
        after = page.endCursor!;
      }
      expect(rucs).toEqual(expected(ROWS, texto).slice(0, rucs.length));
      expect(rucs.length).toBe(Math.min(50, expected(ROWS, texto).length));
    },
  );
});
