import { describe, expect, it } from 'vitest';
import { keptName, padronRecord, readKept } from '../../src/padron/record.js';

/** What the index keeps of a RUC: its columns as the register writes them, then its flags as `S`/`N`. */
const KEPT = 'COMERCIAL ANDINA S.A.C.|ACTIVO|NO HABIDO|150131|AV.|LOS PINOS|URB.|SANTA ROSA|123|-|-|-|-|-|SNNS';

describe('a kept row', () => {
  it('is read by name: an empty or "-" column is null, the address composed as the service writes it, each flag SI or NO', () => {
    expect(readKept(KEPT)).toEqual({
      nombre: 'COMERCIAL ANDINA S.A.C.',
      estado: 'ACTIVO',
      condicion: 'NO HABIDO',
      ubigeo: '150131',
      direccion: 'AV. LOS PINOS NRO. 123 URB. SANTA ROSA',
      flags: ['SI', 'NO', 'NO', 'SI'],
    });
    expect(readKept('PEREZ LUIS|-||-|-|-|-|-|-|-|-|-|-|-|NNNN')).toMatchObject({
      estado: null,
      condicion: null,
      ubigeo: null,
      direccion: null,
    });
  });

  it('gives its name from its bytes alone, as LMDB hands them (a buffer longer than the value)', () => {
    const bytes = Buffer.from(`${KEPT}\0\0\0`);
    expect(keptName(bytes.subarray(0, KEPT.length))).toBe('COMERCIAL ANDINA S.A.C.');
    expect(keptName(Buffer.from('SOLO NOMBRE'))).toBe('SOLO NOMBRE');
  });

  it('makes the record the service would answer, said to come from the register', () => {
    const record = padronRecord('20100123453', KEPT, 0);
    expect(record).toMatchObject({
      nombre_o_razon_social: 'COMERCIAL ANDINA S.A.C.',
      condicion: 'NO HABIDO',
      es_agente_de_retencion: 'SI',
      fuente: 'PADRON',
    });
    expect(record.direccion_completa).toMatch(/^AV\. LOS PINOS NRO\. 123 URB\. SANTA ROSA, LIMA - LIMA - /);
  });
});
