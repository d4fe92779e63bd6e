import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { Register } from '../../src/padron/register.js';
import { FLAG_REGISTERS, PADRON_ZIP } from '../../src/padron/sources.js';
import type { SearchFilter } from '../../src/padron/search.js';

/**
 * buscarContribuyentes over a register this test writes itself (names with accents, Ñ,
 * punctuation, repeated words; lines in no order), every answer checked against what the test
 * works out on its own from the contract's rules: folding, matching, order, filters, paging.
 */

const HEADER =
  'RUC|NOMBRE O RAZÓN SOCIAL|ESTADO DEL CONTRIBUYENTE|CONDICIÓN DE DOMICILIO|UBIGEO|TIPO DE VÍA|NOMBRE DE VÍA|CÓDIGO DE ZONA|TIPO DE ZONA|NÚMERO|INTERIOR|LOTE|DEPARTAMENTO|MANZANA|KILÓMETRO|';
const WORDS = ['COMERCIAL', 'ANDINA', 'COMPAÑÍA', 'PEÑA', 'QUISPE', 'MAMANI', 'INVERSIONES', 'SERVICIOS', "O'HIGGINS", 'A', 'B', 'C', 'DE', 'LOS', 'ÁNDES', 'MAR', 'MARÍA', 'COM', '&', 'J.R.', 'SAN', 'SANTA'];
const TAILS = ['S.A.C.', 'E.I.R.L.', 'S.A.', ''];
const ESTADOS = ['ACTIVO', 'BAJA DE OFICIO', 'SUSPENSION TEMPORAL', 'BAJA DEFINITIVA'];
const CONDICIONES = ['HABIDO', 'NO HABIDO', 'NO HALLADO'];
const UBIGEOS = ['150131', '150101', '040101', '150201'];

function checkDigit(first10: string): number {
  const w = [5, 4, 3, 2, 7, 6, 5, 4, 3, 2];
  const d = 11 - ([...first10].reduce((s, c, i) => s + Number(c) * w[i]!, 0) % 11);
  return d === 10 ? 0 : d === 11 ? 1 : d;
}

/** A seeded generator: the same register every run. */
function random(seed: number) {
  return () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
}

interface Row {
  ruc: string;
  name: string;
  estado: string;
  condicion: string;
  ubigeo: string;
}

function register(size: number): Row[] {
  const next = random(7);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
  const rows: Row[] = [];
  const seen = new Set<string>();
  while (rows.length < size) {
    const company = next() < 0.4;
    const first10 = `${company ? '20' : '10'}${String(Math.floor(next() * 1e8)).padStart(8, '0')}`;
    const ruc = first10 + checkDigit(first10);
    if (seen.has(ruc)) continue;
    seen.add(ruc);
    const words = Array.from({ length: 1 + Math.floor(next() * 4) }, () => pick(WORDS));
    const name = [...words, company ? pick(TAILS) : ''].join(' ').trim() || 'X Y Z';
    rows.push({ ruc, name, estado: pick(ESTADOS), condicion: pick(CONDICIONES), ubigeo: pick(UBIGEOS) });
  }
  return rows;
}

/** The contract's folding, written here again on purpose (not the gateway's code). */
const fold = (text: string) =>
  text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toUpperCase()
    .replace(/[.']/g, '')
    .replace(/[^A-Z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter(Boolean);

function matches(query: string[], name: string[]): boolean {
  if (query.length === 0) return true;
  const [q, ...rest] = query;
  return name.some((w, i) => w.startsWith(q!) && matches(rest, name.filter((_, j) => j !== i)));
}

function expected(rows: Row[], texto: string, filter: SearchFilter = {}): string[] {
  const query = fold(texto);
  const fits = (r: Row) =>
    (!filter.estados || filter.estados.map((e) => fold(e).join(' ')).includes(r.estado)) &&
    (!filter.condiciones || filter.condiciones.map((e) => fold(e).join(' ')).includes(r.condicion)) &&
    (!filter.ubigeo || r.ubigeo.startsWith(filter.ubigeo)) &&
    (!filter.tipo || (filter.tipo === 'EMPRESA') === r.ruc.startsWith('20'));
  const key = (r: Row) => [fold(r.name)[0]?.startsWith(query[0]!) ? 0 : 1, r.estado === 'ACTIVO' ? 0 : 1, r.name.length, Number(r.ruc)];
  return rows
    .filter((r) => fits(r) && matches(query, fold(r.name)))
    .sort((a, b) => {
      const [x, y] = [key(a), key(b)];
      for (let i = 0; i < 4; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
      return 0;
    })
    .map((r) => r.ruc);
}

async function zipOf(entry: string, text: string): Promise<Buffer> {
  const file = new yazl.ZipFile();
  file.addBuffer(Buffer.from(text, 'latin1'), entry);
  file.end();
  const chunks: Buffer[] = [];
  for await (const chunk of file.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const ROWS = register(3_000);
let dir: string;
let server: Server;
let padron: Register;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'search-'));
  // Lines in no order: the index may not assume SUNAT's.
  const lines = [...ROWS].sort(() => 0).reverse().map((r) => `${r.ruc}|${r.name}|${r.estado}|${r.condicion}|${r.ubigeo}|-|-|-|-|-|-|-|-|-|-|`);
  // A second line for a RUC, later: an impostor's name, which neither the record nor the name index may take.
  lines.push(`${ROWS[0]!.ruc}|IMPOSTOR UNICO S.A.C.|ACTIVO|HABIDO|150131|-|-|-|-|-|-|-|-|-|-|`);
  const zips = new Map<string, Buffer>([[PADRON_ZIP, await zipOf('padron_reducido_ruc.txt', `${HEADER}\n${lines.join('\n')}\n`)]]);
  for (const { zip } of FLAG_REGISTERS) zips.set(zip, await zipOf('f.txt', 'Ruc|Nombre/Razon|A partir del|Resolucion|\n'));
  server = createServer((req, res) => {
    const zip = zips.get((req.url ?? '').slice(1));
    res.writeHead(zip ? 200 : 404).end(zip);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  padron = new Register({ source: url, dir, maxAgeMs: 86_400_000, refreshMs: 3_600_000, logger: pino({ level: 'silent' }) });
  await padron.refresh();
  expect(padron.state()).toMatchObject({ state: 'ready', rows: ROWS.length });
});
afterAll(async () => {
  await padron?.close();
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every page of a search, `first` at a time, following endCursor. */
function walk(texto: string, filter: SearchFilter = {}, first = 7): string[] {
  const rucs: string[] = [];
  let after: string | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = padron.search(texto, filter, first, after);
    expect(page.records.length).toBeLessThanOrEqual(first);
    rucs.push(...page.records.map((r) => r.ruc));
    if (!page.hasNextPage) return rucs;
    after = page.endCursor!;
  }
  throw new Error('never ended');
}

describe('buscarContribuyentes over the register', () => {
  const texts = ['com andi', 'sac', 'qui ma', 'peña', "o'higgins", 'ohiggins', 'a b c', 'com comercial', 'Compañía S.A.C.', 'ma mar maria', 'san', 'jr & de', 'los andes', 'ZZZ'];
  it.each(texts)('finds %j: every match once, in the contract’s order', (texto) => {
    const want = expected(ROWS, texto);
    expect(walk(texto)).toEqual(want);
  });

  it('matches `com andi` to COMERCIAL ANDINA S.A.C. (words in any order, each the start of a different word)', () => {
    const found = padron.search('andi com', {}, 50, undefined).records.map((r) => r.nombre_o_razon_social);
    expect(found.length).toBeGreaterThan(0);
    for (const name of found) expect(fold(name).some((w) => w.startsWith('COM')) && fold(name).some((w) => w.startsWith('ANDI'))).toBe(true);
  });

  it.each<[string, SearchFilter]>([
    ['com', { estados: ['activo'] }],
    ['com', { estados: ['Baja de Oficio', 'SUSPENSION TEMPORAL'] }],
    ['san', { condiciones: ['HABIDO'] }],
    ['mar', { ubigeo: '15' }],
    ['mar', { ubigeo: '150131', tipo: 'EMPRESA' }],
    ['quispe', { tipo: 'PERSONA_NATURAL', estados: ['ACTIVO'], condiciones: ['NO HABIDO'] }],
  ])('filters %j by %j', (texto, filter) => {
    expect(walk(texto, filter, 5)).toEqual(expected(ROWS, texto, filter));
  });

  it('never files a later line of a RUC (an impostor) under its name', () => {
    expect(padron.search('impostor', {}, 10, undefined).records).toEqual([]);
    expect(padron.search(ROWS[0]!.ruc, {}, 10, undefined).records[0]?.nombre_o_razon_social).toBe(ROWS[0]!.name);
  });

  it('finds a RUC by its 11 digits, and the RUC 10 of a DNI by its 8', () => {
    const company = ROWS.find((r) => r.ruc.startsWith('20'))!;
    expect(padron.search(company.ruc, {}, 10, undefined).records.map((r) => r.ruc)).toEqual([company.ruc]);
    const person = ROWS.find((r) => r.ruc.startsWith('10'))!;
    expect(padron.search(person.ruc.slice(2, 10), {}, 10, undefined).records.map((r) => r.ruc)).toEqual([person.ruc]);
  });

  it('refuses a text too short or too long, a RUC with a wrong check digit, and a cursor it did not give', () => {
    const company = ROWS.find((r) => r.ruc.startsWith('20'))!;
    const wrong = company.ruc.slice(0, 10) + ((Number(company.ruc[10]) + 1) % 10);
    for (const texto of ['ab', 'a.b', ' - ', 'x'.repeat(101), wrong]) expect(() => padron.search(texto, {}, 10, undefined)).toThrow();
    const page = padron.search('com', {}, 2, undefined);
    expect(() => padron.search('com', {}, 2, 'AAAA')).toThrow(/cursor/);
    // Another search's cursor: another text, or another filter.
    expect(() => padron.search('san', {}, 2, page.endCursor!)).toThrow(/otra búsqueda/);
    expect(() => padron.search('com', { tipo: 'EMPRESA' }, 2, page.endCursor!)).toThrow(/otra búsqueda/);
  });
});
