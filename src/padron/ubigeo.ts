import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A location code's names: department, province and district. */
export interface Place {
  departamento: string;
  provincia: string;
  distrito: string;
}

const FILE = join('resources', 'ubigeo.tsv');

/** resources/ubigeo.tsv, found from this module up (src/padron/ in development, dist/src/padron/ built). */
function tablePath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++, dir = dirname(dir)) if (existsSync(join(dir, FILE))) return join(dir, FILE);
  throw new Error(`${FILE} not found above ${fileURLToPath(import.meta.url)}`);
}

let table: Map<string, Place> | undefined;

/** SUNAT's location codes and their names (resources/ubigeo.tsv names its source), read once. */
export function ubigeoTable(): ReadonlyMap<string, Place> {
  if (table) return table;
  table = new Map();
  for (const line of readFileSync(tablePath(), 'utf8').split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const [code, departamento, provincia, distrito] = line.split('\t');
    if (code && departamento && provincia && distrito) table.set(code, { departamento, provincia, distrito });
  }
  return table;
}
