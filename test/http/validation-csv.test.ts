import { describe, expect, it } from 'vitest';
import { csvOf } from '../../src/http/validation-csv.js';
import type { JobRow } from '../../src/sunat/jobs.js';
import { RECEIPT_BODY } from '../helpers.js';

const row = (observaciones: string[], over: Partial<typeof RECEIPT_BODY> = {}): JobRow => ({
  position: 0,
  receipt: {
    asked: { ...RECEIPT_BODY, ...over },
    weight: 1,
    answer: {
      receipt: {
        serie_documento: 'F001',
        numero_documento: '1',
        comprobante_estado_codigo: '9',
        comprobante_estado_descripcion: null,
        empresa_estado_codigo: '00',
        empresa_estado_descripcion: 'ACTIVO',
        empresa_condicion_codigo: '00',
        empresa_condicion_descripcion: 'HABIDO',
        observaciones,
        observaciones_detalle: [],
      },
    },
  },
});

async function text(rows: JobRow[]): Promise<string> {
  let out = '';
  for await (const part of csvOf(
    (async function* () {
      yield* rows;
    })(),
  ))
    out += part;
  return out;
}

describe('the CSV of a background validation', () => {
  it('never lets a spreadsheet run a formula, and quotes what would split a cell or a row', async () => {
    const csv = await text([
      row(['=HYPERLINK("http://x";"y")', '+1', '-2', '@SUM(A1)']),
      row(['dos; partes', 'con "comillas"', 'en\ndos líneas']),
    ]);
    const [, first, second] = csv.slice(1).split('\r\n');
    // An unknown state keeps its code; remarks joined by " | ": the first starts with "=", so it gets a "'".
    expect(first).toBe(
      `20100123453;01;F001;1532;2026-10-01;1180.00;9;ACTIVO;HABIDO;"'=HYPERLINK(""http://x"";""y"") | +1 | -2 | @SUM(A1)";`,
    );
    expect(second).toBe('20100123453;01;F001;1532;2026-10-01;1180.00;9;ACTIVO;HABIDO;"dos; partes | con ""comillas"" | en\ndos líneas";');
  });

  it('gives a cell that starts a formula its quote whichever column it is in', async () => {
    const csv = await text([row([], { total: '-5.00', serie_documento: '@F01' })]);
    expect(csv.slice(1).split('\r\n')[1]).toBe("20100123453;01;'@F01;1532;2026-10-01;'-5.00;9;ACTIVO;HABIDO;;");
  });
});
