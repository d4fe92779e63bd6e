/**
 * A register in SUNAT's exact format (upstream-notes, "SUNAT's public registers"), made up at
 * any size, written as SUNAT publishes it: padron_reducido_ruc.zip holding
 * padron_reducido_ruc.txt (ISO-8859-1, `|`-separated, a trailing `|`, a header), and the four flag
 * registers. Its mix follows SUNAT's: 84 % natural persons (RUC 10, no address), 12.6 % RUC 20,
 * the rest 15 and 17; half ACTIVO, 40 % BAJA DE OFICIO. Streamed: 18.3 million lines never sit in memory.
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';

/** SUNAT's register in 2026: 18.3 million lines with the header. */
export const FULL_SIZE = 18_300_000;

const HEADER =
  'RUC|NOMBRE O RAZÓN SOCIAL|ESTADO DEL CONTRIBUYENTE|CONDICIÓN DE DOMICILIO|UBIGEO|TIPO DE VÍA|NOMBRE DE VÍA|CÓDIGO DE ZONA|TIPO DE ZONA|NÚMERO|INTERIOR|LOTE|DEPARTAMENTO|MANZANA|KILÓMETRO|';
/** Peru's commonest surnames first (QUISPE alone is some 3 % of persons): drawn by a Zipf-like rule, then a long tail of made-up ones. */
const SURNAMES = (
  'QUISPE FLORES SANCHEZ RODRIGUEZ GARCIA ROJAS MAMANI HUAMAN CHAVEZ MUÑOZ DIAZ TORRES VASQUEZ RAMOS LOPEZ MENDOZA GONZALES CASTILLO ' +
  'RAMIREZ ESPINOZA PEREZ HERNANDEZ VARGAS GUTIERREZ CRUZ CONDORI TICONA APAZA CCAHUANA HUAYTA PAREDES SALAZAR CHOQUE MORALES ' +
  'REYES ALVAREZ FERNANDEZ SILVA JIMENEZ ORTIZ ROMERO CARDENAS CORDOVA NUÑEZ CASTRO RIVERA AGUILAR MEDINA VEGA CALDERON'
).split(' ');
const GIVEN = (
  'JUAN CARLOS MARIA ELENA JOSE LUIS ROSA ALBERTO ANA CARMEN JORGE VICTOR CESAR MIGUEL ANGEL JULIO MANUEL PEDRO PABLO RAUL ' +
  'LUZ GLADYS NANCY MARTHA ELIZABETH FLOR DE MARIA YOLANDA MERCEDES EDGAR WILBER FREDY HUGO SONIA NELLY ROCIO JESUS'
).split(' ');
const SYLLABLES = 'CA HUA MA PA TI CO RI LLA QUI SA NA TA YA CHU PI RO LU ME NI TU CHA QUE SU RA'.split(' ');
const OPENINGS = [
  'INVERSIONES',
  'SERVICIOS GENERALES',
  'CORPORACION',
  'CONSTRUCTORA',
  'COMERCIAL',
  'DISTRIBUIDORA',
  'GRUPO',
  'EMPRESA DE TRANSPORTES',
  'CONSORCIO',
  'MULTISERVICIOS',
  'AGROINDUSTRIAS',
  'INMOBILIARIA',
  'NEGOCIACIONES',
  'IMPORTACIONES Y EXPORTACIONES',
  'ASOCIACION',
  'TEXTIL',
];
const TAILS = ['S.A.C.', 'E.I.R.L.', 'S.R.L.', 'S.A.', 'SOCIEDAD ANONIMA CERRADA', '& ASOCIADOS S.A.C.', 'DEL PERU S.A.C.'];

/** A well-mixed 32-bit hash of `i` and `salt`: the same register every run, without a generator's state. */
function mix(i: number, salt: number): number {
  let h = Math.imul(i ^ Math.imul(salt, 0x9e3779b1), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
/** An index below `n`, small ones far likelier (a surname's frequency falls with its rank). */
const zipf = (i: number, salt: number, n: number) => Math.floor(n * (mix(i, salt) / 2 ** 32) ** 1.4);
const pick = <T>(xs: readonly T[], i: number, salt: number) => xs[mix(i, salt) % xs.length]!;
/** A made-up word of 2 to 4 syllables: the register's long tail of rare surnames and brand names. */
const madeUp = (i: number, salt: number) =>
  Array.from({ length: 2 + (mix(i, salt) % 3) }, (_, k) => pick(SYLLABLES, i, salt * 7 + k)).join('');
const surname = (i: number, salt: number) => (mix(i, salt + 1) % 4 === 0 ? madeUp(i, salt) : SURNAMES[zipf(i, salt, SURNAMES.length)]!);

/**
 * How names are drawn: `peru`, Peru's commonest surnames far likelier and a long tail of rare ones;
 * `common`, every word from a vocabulary of under a hundred a kind, drawn evenly (Peru's trait at
 * its harshest: every word of a name common, the whole name rare).
 */
export type NameMode = 'peru' | 'common';
export const NAME_MODE: NameMode = process.env['BENCH_PADRON_NAMES'] === 'common' ? 'common' : 'peru';

/** 99 surnames, 99 given names (compound ones too: `DEL CARMEN`), 99 words of companies and 12 legal forms. */
export const VOCABULARY = {
  surnames: [
    ...SURNAMES,
    ...'CARRASCO SOTO HUAMANI PALOMINO ARIAS QUISPE-TITO YUPANQUI INGA ÑAUPARI SUAREZ CAMPOS CORNEJO PACHECO LEON DE LA CRUZ BENITES ACOSTA ALVARADO VILLANUEVA PINEDA OCHOA MARTINEZ QUIROZ CABRERA CCOPA PUMA LUQUE ARAUJO GOMEZ VILCA LAURA MOLINA NAVARRO ZAPATA DELGADO VALDIVIA MIRANDA ESPINOZA-RAMOS ÁVILA BAUTISTA'.split(
      ' ',
    ),
  ].slice(0, 99),
  given: [
    ...GIVEN,
    ...'DEL CARMEN ALEJANDRO FERNANDO RICARDO ROBERTO SANTIAGO FRANCISCO JAVIER DANIEL DAVID EDUARDO ENRIQUE GUILLERMO HECTOR ISABEL JULIA LUCIA PATRICIA SILVIA TERESA VERONICA YESENIA ZENAIDA ÑUSTA EUSEBIO TEÓFILO WALTER MARIO MARCO OSCAR RENE RUTH SARA EVA INES NORMA DORIS'.split(
      ' ',
    ),
  ].slice(0, 99),
  companyWords: [
    ...OPENINGS.flatMap((o) => o.split(' ')),
    ...'ANDINA ANDINO PERU PERUANA SUR NORTE LIMA AREQUIPA CUSCO INCA SOL LUNA MAR ORO PLATA COBRE VERDE AZUL ROJO NEGOCIOS LOGISTICA MINERA AGRICOLA PESQUERA INDUSTRIAL TECNOLOGIA SISTEMAS SOLUCIONES PROYECTOS INGENIERIA CONSULTORES ASESORES TRANSPORTES TURISMO HOTEL RESTAURANTE FARMACIA BOTICA FERRETERIA LIBRERIA CLINICA COLEGIO ESTUDIO ABOGADOS SAN SANTA ROSA JUAN PEDRO MARIA'.split(
      ' ',
    ),
  ].slice(0, 99),
  forms: [
    'S.A.C.',
    'E.I.R.L.',
    'S.R.L.',
    'S.A.',
    'SOCIEDAD ANONIMA CERRADA',
    'SAC',
    'EIRL',
    'S.A.A.',
    '& ASOCIADOS S.A.C.',
    'DEL PERU S.A.C.',
    'Y CIA S.A.',
    'S. COM.',
  ],
};

function commonName(i: number, lines: number): string {
  const v = VOCABULARY;
  if (rucAt(i, lines).startsWith('10')) {
    const given = mix(i, 5) % 3 === 0 ? `${pick(v.given, i, 6)} ${pick(v.given, i, 7)}` : pick(v.given, i, 6);
    return `${pick(v.surnames, i, 1)} ${pick(v.surnames, i, 3)} ${given}`;
  }
  const words = Array.from({ length: 1 + (mix(i, 13) % 3) }, (_, k) => pick(v.companyWords, i, 20 + k));
  return `${words.join(' ')} ${pick(v.forms, i, 12)}`;
}

/** The `i`-th taxpayer's name: a person's two surnames and given names, or a company's. */
export function nameAt(i: number, lines: number): string {
  if (NAME_MODE === 'common') return commonName(i, lines);
  if (rucAt(i, lines).startsWith('10')) {
    const given = mix(i, 5) % 3 === 0 ? `${pick(GIVEN, i, 6)} ${pick(GIVEN, i, 7)}` : pick(GIVEN, i, 6);
    return `${surname(i, 1)} ${surname(i, 3)} ${given}`;
  }
  return `${pick(OPENINGS, i, 8)} ${madeUp(i, 9)}${mix(i, 10) % 3 === 0 ? ` ${surname(i, 11)}` : ''} ${pick(TAILS, i, 12)}`;
}
const UBIGEOS = ['150131', '150122', '150101', '040101', '130101', '200101', '080101', '120101', '140101', '110101'];

/** SUNAT's modulo-11 check digit. */
function checkDigit(first10: string): string {
  const weights = [5, 4, 3, 2, 7, 6, 5, 4, 3, 2];
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += Number(first10[i]) * weights[i]!;
  const digit = 11 - (sum % 11);
  return String(digit === 10 ? 0 : digit === 11 ? 1 : digit);
}

/** Where each prefix's rows start, as a share of the register: 10… 84 %, 15… 2.5 %, 17… 0.5 %, 20… 13 %. */
const GROUPS = [
  { prefix: '10', from: 0 },
  { prefix: '15', from: 0.84 },
  { prefix: '17', from: 0.865 },
  { prefix: '20', from: 0.87 },
] as const;

/** The `i`-th RUC of a register of `lines` rows: valid, the same every run, and in RUC order as SUNAT writes them. */
export function rucAt(i: number, lines: number): string {
  const at = i / lines;
  const g = GROUPS.findLastIndex((x) => at >= x.from);
  const start = Math.ceil(GROUPS[g]!.from * lines);
  const end = g + 1 < GROUPS.length ? Math.ceil(GROUPS[g + 1]!.from * lines) : lines;
  const number = 10_000_000 + Math.floor(((i - start) * 89_999_999) / Math.max(1, end - start));
  const first10 = `${GROUPS[g]!.prefix}${number}`;
  return first10 + checkDigit(first10);
}

/** The `i`-th row's line as the register writes it. */
export function lineAt(i: number, lines: number): string {
  const ruc = rucAt(i, lines);
  const estado = i % 10 < 5 ? 'ACTIVO' : i % 10 < 9 ? 'BAJA DE OFICIO' : 'SUSPENSION TEMPORAL';
  const condicion = i % 7 === 0 ? 'NO HALLADO' : 'HABIDO';
  const name = nameAt(i, lines);
  if (ruc.startsWith('10')) return `${ruc}|${name}|${estado}|${condicion}|-|-|-|-|-|-|-|-|-|-|-|`;
  return `${ruc}|${name}|${estado}|${condicion}|${UBIGEOS[i % 10]}|AV.|LOS ${SURNAMES[i % 10]}|URB.|SANTA ROSA|${(i % 2000) + 1}|-|-|-|-|-|`;
}

/**
 * The next day's register changes 0.5 % of the rows, a third each: a condición turned NO HABIDO, a
 * taxpayer gone, and a new one (the RUC after this row's, which the numbering leaves free).
 */
const CHANGE_EVERY = 600;
function dayTwo(i: number, lines: number, line: string): string[] {
  const k = i % CHANGE_EVERY;
  if (k === 0) return [line.replace('|HABIDO|', '|NO HABIDO|').replace('|NO HALLADO|', '|NO HABIDO|')];
  if (k === CHANGE_EVERY / 3) return [];
  if (k !== (2 * CHANGE_EVERY) / 3) return [line];
  const ruc = rucAt(i, lines);
  const first10 = String(Number(ruc.slice(0, 10)) + 1);
  return [line, `${first10}${checkDigit(first10)}${line.slice(11).replace(/\|[^|]*/, '|NUEVO CONTRIBUYENTE S.A.C.')}`];
}

/** A step that visits every row once, in no order, when `order` is `none` (a prime that divides no register's size here). */
const SHUFFLE_STEP = 7_368_787;

/** The register's text, `lines` lines with the header, in chunks of ISO-8859-1 bytes: in RUC order, as SUNAT writes it, or in none. */
/** A day of the register: the first, the next (0.5 % of rows changed), or a next where every row's condición changed. */
export type Day = 1 | 2 | 'all';

/** The row's line with its condición changed: HABIDO turns NO HABIDO, anything else HABIDO. */
const flipped = (line: string): string =>
  line.includes('|HABIDO|') ? line.replace('|HABIDO|', '|NO HABIDO|') : line.replace(/\|(NO HALLADO|NO HABIDO)\|/, '|HABIDO|');

function padronText(lines: number, order: 'ruc' | 'none', day: Day = 1): Readable {
  let i = 0;
  const rows = lines - 1;
  const at =
    order === 'ruc' || rows % SHUFFLE_STEP === 0
      ? (k: number) => k
      : (k: number) => Number((BigInt(k) * BigInt(SHUFFLE_STEP)) % BigInt(rows));
  return new Readable({
    read() {
      const chunk: string[] = i === 0 ? [HEADER] : [];
      const end = Math.min(lines - 1, i + 5000);
      for (; i < end; i++) {
        const line = lineAt(at(i), rows);
        if (day === 1) chunk.push(line);
        else if (day === 'all') chunk.push(flipped(line));
        else chunk.push(...dayTwo(at(i), rows, line));
      }
      if (chunk.length) this.push(Buffer.from(`${chunk.join('\n')}\n`, 'latin1'));
      if (i >= lines - 1) this.push(null);
    },
  });
}

function flagText(lines: number, step: number, of: number): Buffer {
  const rows = ['Ruc|Nombre/Razon|A partir del|Resolucion|'];
  for (let i = 0; i < lines; i++) rows.push(`${rucAt((i * step) % of, of)}|CONTRIBUYENTE ${i}|01/01/2020|R.S. ${i}-2020|`);
  return Buffer.from(`${rows.join('\r\n')}\r\n`, 'latin1');
}

async function writeZip(path: string, entry: string, content: Readable | Buffer, at: Date): Promise<void> {
  const zip = new yazl.ZipFile();
  if (Buffer.isBuffer(content)) zip.addBuffer(content, entry, { mtime: at });
  else zip.addReadStream(content, entry, { mtime: at });
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(path));
}

/** Writes the five zips into `dir`, the padrón with `lines` lines: at SUNAT's size by default; of the `day` asked. */
export async function writeRegister(
  dir: string,
  lines = FULL_SIZE,
  at = new Date(),
  order: 'ruc' | 'none' = 'ruc',
  day: Day = 1,
): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeZip(join(dir, 'padron_reducido_ruc.zip'), 'padron_reducido_ruc.txt', padronText(lines, order, day), at);
  const flags = Math.max(1, Math.round(lines / 100));
  const rows = lines - 1;
  await writeZip(join(dir, 'AgenRet_TXT.zip'), 'AgenRet_TXT.txt', flagText(flags, 37, rows), at);
  await writeZip(join(dir, 'BueCont_TXT.zip'), 'BueCont_TXT.txt', flagText(flags, 53, rows), at);
  await writeZip(join(dir, 'AgenPercVI_TXT.zip'), 'AgenPercVI_TXT.txt', flagText(flags / 4, 101, rows), at);
  await writeZip(join(dir, 'AgenPerc_TXT.zip'), 'AgenPerc_TXT.txt', flagText(flags / 10, 211, rows), at);
}
