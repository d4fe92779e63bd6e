import { describe, expect, it } from 'vitest';
import { RucRecordSchema, ubigeoOf } from '../../src/upstream/schemas.js';

const parse = (extra: Record<string, unknown>) => RucRecordSchema.parse({ ruc: '20100123453', nombre_o_razon_social: 'X', ...extra });

describe('a record as received', () => {
  it('reads "no value" as null: empty, blank, a lone dash, absent or null', () => {
    for (const v of ['', '-', ' - ', '  ', '\t', null, undefined]) expect(parse({ distrito: v }).distrito, JSON.stringify(v)).toBeNull();
  });

  it('keeps every other text as sent, a numeric code as its text, and the key fields untouched', () => {
    for (const v of ['LIMA', '-A', 'A ', ' A', '150131']) expect(parse({ distrito: v }).distrito).toBe(v);
    expect(parse({ ubigeo_sunat: 150131 }).ubigeo_sunat).toBe('150131');
    expect(RucRecordSchema.parse({ ruc: '20100123453', nombre_o_razon_social: '' }).nombre_o_razon_social).toBe('');
  });

  it('takes the location code from ubigeo_sunat, else the last level of ubigeo with a value', () => {
    expect(ubigeoOf(parse({ ubigeo_sunat: '110505', ubigeo: ['11', '1105', '110506'] }))).toBe('110505');
    expect(ubigeoOf(parse({ ubigeo: ['11', '1105', null] }))).toBe('1105');
    expect(ubigeoOf(parse({ ubigeo: [null, null, null], ubigeo_sunat: '' }))).toBeNull();
    expect(ubigeoOf(parse({}))).toBeNull();
  });

  it('is stamped with the time it was read', () => {
    const before = Date.now();
    expect(parse({}).receivedAt).toBeGreaterThanOrEqual(before);
  });
});
