import { describe, expect, it } from 'vitest';
import { readRucRecord, readTipoDeCambio, readValidacionRecord, ubigeoOf, type RucRecord } from '../../src/upstream/schemas.js';
import { Unreadable } from '../../src/upstream/reader.js';

function parse(extra: Record<string, unknown>): RucRecord {
  const record = readRucRecord({ ruc: '20100123453', nombre_o_razon_social: 'X', ...extra });
  if (record instanceof Unreadable) throw new Error(record.issues.join());
  return record;
}
const issues = (read: unknown) => (read instanceof Unreadable ? read.issues : []);

describe('a record as received', () => {
  it('reads "no value" as null: empty, blank, a lone dash, absent or null', () => {
    for (const v of ['', '-', ' - ', '  ', '\t', null, undefined]) expect(parse({ distrito: v }).distrito, JSON.stringify(v)).toBeNull();
  });

  it('keeps every other text as sent, a numeric code as its text, and the key fields untouched', () => {
    for (const v of ['LIMA', '-A', 'A ', ' A', '150131']) expect(parse({ distrito: v }).distrito).toBe(v);
    expect(parse({ ubigeo_sunat: 150131 }).ubigeo_sunat).toBe('150131');
    expect(parse({ nombre_o_razon_social: '' }).nombre_o_razon_social).toBe('');
  });

  it('keeps only the fields it knows', () => {
    expect(parse({ otro: 'x' })).not.toHaveProperty('otro');
  });

  it('takes the location code from ubigeo_sunat, else the last level of ubigeo with a value', () => {
    expect(ubigeoOf(parse({ ubigeo_sunat: '110505', ubigeo: ['11', '1105', '110506'] }))).toBe('110505');
    expect(ubigeoOf(parse({ ubigeo: ['11', 1105, null] }))).toBe('1105');
    expect(ubigeoOf(parse({ ubigeo: [null, null, null], ubigeo_sunat: '' }))).toBeNull();
    expect(ubigeoOf(parse({}))).toBeNull();
  });

  it('is stamped with the time it was read', () => {
    const before = Date.now();
    expect(parse({}).receivedAt).toBeGreaterThanOrEqual(before);
  });

  it('names what makes a record unreadable, and reads nothing of it', () => {
    expect(issues(readRucRecord({ nombre_o_razon_social: 'X' }))).toEqual(['ruc: required']);
    expect(issues(readRucRecord({ ruc: 20100123453, nombre_o_razon_social: 'X', distrito: 5, ubigeo: [true] }))).toEqual([
      'ruc: invalid_type',
      'distrito: invalid_type',
      'ubigeo: invalid_type',
    ]);
    for (const data of [null, 'x', [], undefined]) expect(issues(readRucRecord(data))).toEqual(['(root): invalid_type']);
  });

  it('reads text of any length in time proportional to it (blanks before a letter once took quadratic time)', () => {
    const started = performance.now();
    expect(parse({ distrito: `${' '.repeat(200_000)}x`, provincia: ' '.repeat(200_000) })).toMatchObject({ provincia: null });
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('a batch as received', () => {
  const receipt = { serie_documento: 'F001', numero_documento: 7, observaciones: ['a', { b: 1 }] };

  it('reads each receipt, its numbers as text, both spellings of the issuer state, and notes as text', () => {
    const read = readValidacionRecord({
      cantidad_de_comprobantes: 2,
      comprobantes: [
        { ...receipt, empresa_estado_description: 'ACTIVO', comprobante_estado_codigo: 1 },
        { ...receipt, empresa_estado_descripcion: '-', observaciones: null },
      ],
    });
    if (read instanceof Unreadable) throw new Error(read.issues.join());
    expect(read.comprobantes[0]).toMatchObject({
      numero_documento: '7',
      empresa_estado_descripcion: 'ACTIVO',
      comprobante_estado_codigo: '1',
    });
    expect(read.comprobantes[0]!.observaciones).toEqual(['a', '{"b":1}']);
    expect(read.comprobantes[0]).not.toHaveProperty('empresa_estado_description');
    expect(read.comprobantes[1]).toMatchObject({ empresa_estado_descripcion: null, observaciones: [], empresa_condicion_codigo: null });
  });

  it('types each remark: an object’s codigo and descripcion (a number as text, no value as null), a text as descripcion', () => {
    const observaciones = [{ codigo: '4287', descripcion: 'Nota vinculada' }, { codigo: 4288, descripcion: '-' }, 'Texto suelto', ['x'], 3];
    const read = readValidacionRecord({ cantidad_de_comprobantes: 1, comprobantes: [{ ...receipt, observaciones }] });
    if (read instanceof Unreadable) throw new Error(read.issues.join());
    expect(read.comprobantes[0]!.observaciones_detalle).toEqual([
      { codigo: '4287', descripcion: 'Nota vinculada' },
      { codigo: '4288', descripcion: null },
      { codigo: null, descripcion: 'Texto suelto' },
      { codigo: null, descripcion: '["x"]' },
      { codigo: null, descripcion: '3' },
    ]);
    // The remarks as texts are as they were.
    expect(read.comprobantes[0]!.observaciones).toEqual([
      '{"codigo":"4287","descripcion":"Nota vinculada"}',
      '{"codigo":4288,"descripcion":"-"}',
      'Texto suelto',
      '["x"]',
      '3',
    ]);
  });

  it('names the first receipt it cannot read, and a bad count', () => {
    expect(issues(readValidacionRecord({ cantidad_de_comprobantes: 1, comprobantes: [receipt, { serie_documento: 'F001' }] }))).toEqual([
      'comprobantes.1.numero_documento: required',
    ]);
    expect(issues(readValidacionRecord({ cantidad_de_comprobantes: -1, comprobantes: [] }))).toEqual([
      'cantidad_de_comprobantes: invalid_type',
    ]);
    expect(issues(readValidacionRecord({ cantidad_de_comprobantes: 1 }))).toEqual(['comprobantes: invalid_type']);
    expect(issues(readValidacionRecord({ cantidad_de_comprobantes: 2 ** 53, comprobantes: [] }))).toEqual([
      'cantidad_de_comprobantes: invalid_type',
    ]);
  });

  it('checks both spellings of the issuer state, though the first has a value', () => {
    const both = { ...receipt, empresa_estado_descripcion: 'ACTIVO', empresa_estado_description: 5 };
    expect(issues(readValidacionRecord({ cantidad_de_comprobantes: 1, comprobantes: [both] }))).toEqual([
      'comprobantes.0.empresa_estado_description: invalid_type',
    ]);
  });
});

describe('an exchange rate as received (POST /tipo-de-cambio)', () => {
  const read = readTipoDeCambio('2026-11-22');
  /** The body as the service sends it, read as the client reads it: its own text, then the record. */
  const rate = (data: string) => {
    const envelope = read.parse!(`{"success":true,"code":"found","data":${data},"time":0.01}`) as { data: unknown; time: unknown };
    expect(envelope.time).toBe(0.01);
    return read(envelope.data);
  };

  it('keeps compra and venta as the decimal text sent, with three decimals, never through a binary float', () => {
    const figures = {
      '3.75': '3.750',
      '"3.75"': '3.750',
      '3.758': '3.758',
      '"3.7580"': '3.758',
      '3.7505': '3.7505',
      '4': '4.000',
      '375e-2': '3.750',
      '0.0375E2': '3.750',
      // A float would give 3.141592653589793.
      '3.14159265358979323846264': '3.14159265358979323846264',
      // A float would give 3.75.
      '3.75000000000000000001': '3.75000000000000000001',
    };
    for (const [sent, text] of Object.entries(figures)) {
      expect(rate(`{"fecha_sunat":"2026-11-20","compra":${sent},"venta":${sent}}`), sent).toMatchObject({ compra: text, venta: text });
    }
  });

  it('reads the rate’s date by either spelling, and DD/MM/YYYY as YYYY-MM-DD; the currency asked when none is sent', () => {
    expect(rate('{"fecha_sunat":"2026-11-20","compra":3.75,"venta":3.758}')).toMatchObject({
      fecha: '2026-11-22',
      fecha_sunat: '2026-11-20',
      moneda: 'USD',
    });
    expect(rate('{"fecha_busqueda":"20/11/2026","compra":"3.750","venta":"3.758","moneda":"USD"}')).toMatchObject({
      fecha_sunat: '2026-11-20',
    });
    expect(rate('{"compra":"-","venta":null}')).toMatchObject({ fecha_sunat: null, compra: null, venta: null });
  });

  it('is unreadable without its figures, or with figures that are no decimal', () => {
    expect(issues(rate('{"ruc":12345}'))).toEqual(['compra: required', 'venta: required']);
    expect(issues(rate('{"compra":"3,75","venta":[3.75]}'))).toEqual(['compra: invalid_type', 'venta: invalid_type']);
    expect(issues(rate('{"compra":"1e999","venta":"NaN"}'))).toEqual(['compra: invalid_type', 'venta: invalid_type']);
  });
});
