import yazl from 'yazl';
import { TAXPAYERS, type SandboxTaxpayer } from './data.js';
import { UBIGEO } from './records.js';

/**
 * SUNAT's five public registers as the sandbox publishes them (PADRON=sandbox): its taxpayers in
 * padron_reducido_ruc.txt's exact format (ISO-8859-1, `|`-separated, a trailing `|`), with the
 * lines importers trip on, and the flag registers listing its agents and good taxpayers.
 */

const HEADER =
  'RUC|NOMBRE O RAZÓN SOCIAL|ESTADO DEL CONTRIBUYENTE|CONDICIÓN DE DOMICILIO|UBIGEO|TIPO DE ' +
  'VÍA|NOMBRE DE VÍA|CÓDIGO DE ZONA|TIPO DE ZONA|NÚMERO|INTERIOR|LOTE|DEPARTAMENTO|MANZANA|KILÓMETRO|';
const LABELS: Readonly<Record<string, number>> = { 'NRO.': 0, 'INT.': 1, 'LOTE.': 2, 'DPTO.': 3, 'MZA.': 4, 'KM.': 5 };

/** A sample address (`AV. JAVIER PRADO ESTE NRO. 1234`) in the register's columns: vía, zone, then each labelled part. */
function addressColumns(direccion: string): string[] {
  const words = direccion.trim().split(/\s+/);
  if (direccion.trim() === '-' || direccion.trim() === '') return ['-', '-', '-', '-', '-', '-', '-', '-', '-', '-'];
  const labelled = ['-', '-', '-', '-', '-', '-'];
  const via: string[] = [];
  for (let i = 1; i < words.length; i++) {
    const at = LABELS[words[i]!];
    if (at === undefined && labelled.every((v) => v === '-')) via.push(words[i]!);
    else if (at !== undefined) labelled[at] = words[++i] ?? '-';
  }
  const [numero, interior, lote, dpto, manzana, km] = labelled;
  return [words[0]!, via.join(' ') || '-', '-', '-', numero!, interior!, lote!, dpto!, manzana!, km!];
}

/** One taxpayer's line, as SUNAT writes it. */
function line(t: SandboxTaxpayer): string {
  return [t.ruc, t.nombre_o_razon_social, t.estado, t.condicion, UBIGEO[t.distrito] ?? '-', ...addressColumns(t.direccion), ''].join('|');
}

/** Lines only the register has, and the lines importers trip on (each skipped and counted, but the first two). */
export const REGISTER_ONLY = {
  /** A company the service's sample data does not know, with a zone and a flat in its address. */
  company: '20611111119|CONSTRUCTORA EL "SOL" S.A.C.|ACTIVO|HABIDO|150122|AV.|LARCO|URB.|SAN ANTONIO|345|-|-|501|-|-|',
  /** Its Ñ written as UTF-8's replacement character (bytes EF BF BD), as some copies of the register hold it. */
  enye: '20622222222|INVERSIONES PE\u00EF\u00BF\u00BDA S.R.L.|ACTIVO|HABIDO|150131|CAL.|LOS PINOS|-|-|12|-|-|-|-|-|',
  /** A district code no table names. */
  unknownPlace: '20633333336|TIENDA DEL FIN DEL MUNDO E.I.R.L.|ACTIVO|HABIDO|999999|JR.|ULTIMO|-|-|1|-|-|-|-|-|',
} as const;

const QUIRKS = [
  '20644444440||ACTIVO|HABIDO|150131|AV.|SIN NOMBRE|-|-|1|-|-|-|-|-|', // no name
  '20655555553|CORTA S.A.C.|ACTIVO|HABIDO|150131|', // too few fields
  '20666666667|LARGA S.A.C.|ACTIVO|HABIDO|150131|AV.|X|-|-|1|-|-|-|-|-|EXTRA|', // too many
  '2067777777|RUC CORTO S.A.C.|ACTIVO|HABIDO|150131|AV.|X|-|-|1|-|-|-|-|-|', // 10 digits
];

/** The number of lines of each kind the sandbox's padrón holds, for tests. */
export const SANDBOX_PADRON = { rows: TAXPAYERS.length + Object.keys(REGISTER_ONLY).length, skipped: { name: 1, fields: 2, ruc: 1 } };

/** A RUC listed only in a flag register: no record for it. */
export const FLAG_ONLY_RUC = '20688888884';

function flagText(listed: readonly string[]): string {
  const lines = ['Ruc|Nombre/Razon|A partir del|Resolucion|', ...listed.map((ruc) => `${ruc}|CONTRIBUYENTE|01/01/2020|R.S. 000-2020|`)];
  // SUNAT ends these lines with CR or CRLF.
  return `${lines.join('\r\n')}\r`;
}

const yes = (v: string | undefined) => v === 'SI';

/**
 * The register's second day (`POST /__sandbox/padron/siguiente-dia`): a supplier turns NO HABIDO
 * and stops being a retention agent, a company moves, one leaves the register and one joins it.
 */
export const NEXT_DAY_PATH = '/__sandbox/padron/siguiente-dia';
export const NEXT_DAY = {
  noHabido: '20100123453',
  moved: {
    ruc: '20611111119',
    line: '20611111119|CONSTRUCTORA EL "SOL" S.A.C.|ACTIVO|HABIDO|150122|AV.|PARDO|URB.|SAN ANTONIO|610|-|-|-|-|-|',
  },
  gone: '20633333336',
  joined: {
    ruc: '20699999998',
    line: '20699999998|NUEVA DISTRIBUIDORA DEL SUR S.A.C.|ACTIVO|HABIDO|150131|AV.|BRASIL|-|-|2020|-|-|-|-|-|',
  },
} as const;

/** The taxpayers of `day`: the second day's NO HABIDO supplier changed. */
const taxpayersOf = (day: 1 | 2) =>
  day === 1
    ? TAXPAYERS
    : TAXPAYERS.map((t) => (t.ruc === NEXT_DAY.noHabido ? { ...t, condicion: 'NO HABIDO', es_agente_de_retencion: 'NO' } : t));

/** The lines only the register has on `day`. */
function registerOnly(day: 1 | 2): string[] {
  const lines: string[] = Object.values(REGISTER_ONLY);
  if (day === 1) return lines;
  return [
    ...lines.filter((l) => !l.startsWith(NEXT_DAY.gone)).map((l) => (l.startsWith(NEXT_DAY.moved.ruc) ? NEXT_DAY.moved.line : l)),
    NEXT_DAY.joined.line,
  ];
}

/** The five zips of `day`, by SUNAT's file names, dated `at`. */
export async function sandboxRegisters(at: Date, day: 1 | 2 = 1): Promise<Map<string, Buffer>> {
  const taxpayers = taxpayersOf(day);
  const padron = [HEADER, ...taxpayers.map(line), ...registerOnly(day), ...QUIRKS].join('\n') + '\n';
  const listed = (pick: (t: SandboxTaxpayer) => boolean) => taxpayers.filter(pick).map((t) => t.ruc);
  const files: [string, string, string][] = [
    ['padron_reducido_ruc.zip', 'padron_reducido_ruc.txt', padron],
    ['AgenRet_TXT.zip', 'AgenRet_TXT.txt', flagText([...listed((t) => yes(t.es_agente_de_retencion)), FLAG_ONLY_RUC])],
    ['BueCont_TXT.zip', 'BueCont_TXT.txt', flagText(listed((t) => yes(t.es_buen_contribuyente)))],
    ['AgenPercVI_TXT.zip', 'AgenPercVI_TXT.txt', flagText(listed((t) => yes(t.es_agente_de_percepcion)))],
    ['AgenPerc_TXT.zip', 'AgenPerc_TXT.txt', flagText(listed((t) => yes(t.es_agente_de_percepcion_combustible)))],
  ];
  const zips = new Map<string, Buffer>();
  for (const [zipName, entry, text] of files) zips.set(zipName, await zipOf(entry, Buffer.from(text, 'latin1'), at));
  return zips;
}

/** One entry, deflated, as SUNAT's zips hold their text. */
function zipOf(entry: string, content: Buffer, at: Date): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  zip.addBuffer(content, entry, { mtime: at, compress: true });
  zip.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}

/** The registers the sandbox publishes: dated when it started, or when asked for its next day; built on first ask. */
/** Lima is UTC-5 all year. */
const LIMA_OFFSET_MS = 5 * 3_600_000;

export class PublishedRegister {
  /**
   * The first day dated at the start of today in Lima (UTC-5), not at the sandbox's start: a sandbox restarted after its
   * next day was asked publishes an older register, which a gateway never goes back to (its changes are not reversed).
   */
  at = new Date(Math.floor((Date.now() - LIMA_OFFSET_MS) / 86_400_000) * 86_400_000 + LIMA_OFFSET_MS);
  #day: 1 | 2 = 1;
  #zips: Promise<Map<string, Buffer>> | undefined;

  zips(): Promise<Map<string, Buffer>> {
    return (this.#zips ??= sandboxRegisters(this.at, this.#day));
  }

  /** Publishes the second day, dated now: a second after the first at least, as If-Modified-Since counts seconds. */
  nextDay(): Date {
    this.at = new Date(Math.max(Math.floor(Date.now() / 1000) * 1000, this.at.getTime() + 1000));
    this.#day = 2;
    this.#zips = undefined;
    return this.at;
  }
}
