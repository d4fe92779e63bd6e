import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { sunatWords } from '../errors.js';
import { errorFrom, type JobRow } from '../sunat/jobs.js';

/** The CSV's columns, as an accountant's spreadsheet shows them. */
const HEADER = [
  'RUC emisor',
  'Tipo',
  'Serie',
  'Número',
  'Fecha de emisión',
  'Total',
  'Estado del comprobante',
  'Estado del emisor',
  'Condición del emisor',
  'Observaciones',
  'Error',
];
/** Text gathered before a write: one write per many rows, not per row. */
const WRITE_AT = 64 * 1024;
export const CSV_PATH = /^\/validaciones\/([0-9a-z]{1,40})\.csv$/;

/** A job's results as the CSV a spreadsheet opens as it is: UTF-8 with BOM, `;`-separated, CRLF, one row per position. */
export async function* csvOf(rows: AsyncIterable<JobRow>): AsyncGenerator<string> {
  let text = `\uFEFF${line(HEADER)}`;
  for await (const row of rows) {
    text += line(cellsOf(row));
    if (text.length < WRITE_AT) continue;
    yield text;
    text = '';
  }
  if (text) yield text;
}

function cellsOf({ receipt: { asked, answer } }: JobRow): string[] {
  const sent = [
    asked.ruc_emisor,
    asked.codigo_tipo_documento,
    asked.serie_documento,
    asked.numero_documento,
    asked.fecha_de_emision,
    asked.total,
  ];
  if (!answer) return [...sent, '', '', '', '', ''];
  if ('error' in answer) return [...sent, '', '', '', '', sunatWords(errorFrom(answer.error)).message];
  const r = answer.receipt;
  return [
    ...sent,
    r.comprobante_estado_descripcion ?? r.comprobante_estado_codigo ?? '',
    r.empresa_estado_descripcion ?? r.empresa_estado_codigo ?? '',
    r.empresa_condicion_descripcion ?? r.empresa_condicion_codigo ?? '',
    r.observaciones.join(' | '),
    '',
  ];
}

const line = (cells: readonly string[]) => `${cells.map(cell).join(';')}\r\n`;

/** One field: a leading `=`, `+`, `-`, `@` (or tab, CR) gets a `'` so no formula runs; quoted when it holds `;`, `"` or a line break. */
function cell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[;"\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/**
 * GET /validaciones/{id}.csv: the job's results for its owner, streamed; no Authorization is 401, another's or an
 * unknown id 404 alike.
 */
export async function serveValidationCsv(
  req: IncomingMessage,
  res: ServerResponse,
  id: string,
  find: (authorization: string | undefined, id: string) => Promise<AsyncIterable<string> | undefined>,
  corsOrigins: '*' | readonly string[],
): Promise<void> {
  // A browser app of CORS_ORIGINS downloads it with its token, as it calls /graphql.
  const origin = req.headers.origin;
  const allowed = origin && (corsOrigins === '*' ? '*' : corsOrigins.includes(origin) ? origin : undefined);
  const cors: Record<string, string> = allowed
    ? { 'access-control-allow-origin': allowed, vary: 'Origin', 'access-control-expose-headers': 'content-disposition' }
    : {};
  if (req.method === 'OPTIONS') {
    const preflight = allowed
      ? { 'access-control-allow-methods': 'GET, HEAD', 'access-control-allow-headers': 'authorization', 'access-control-max-age': '600' }
      : {};
    return void res.writeHead(204, { ...cors, ...preflight }).end();
  }
  const plain = (status: number, text: string, headers: Record<string, string> = {}) =>
    void res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...cors, ...headers }).end(text);
  if (!req.headers.authorization) return plain(401, 'Envíe su token (Authorization: Bearer).', { 'www-authenticate': 'Bearer' });
  let body: AsyncIterable<string> | undefined;
  try {
    body = await find(req.headers.authorization, id);
  } catch {
    return plain(503, 'Las validaciones masivas no están disponibles; reintente.', { 'retry-after': '5' });
  }
  if (!body) return plain(404, 'No existe una validación masiva con ese id (o no es de quien llama).');
  res.writeHead(200, {
    ...cors,
    'content-type': 'text/csv; charset=utf-8',
    'content-disposition': `attachment; filename="validacion-${id}.csv"`,
    'cache-control': 'no-store',
  });
  if (req.method === 'HEAD') return void res.end();
  await pipeline(Readable.from(body), res).catch(() => res.destroy());
}
