import { describe, expect, it } from 'vitest';
import {
  checkComprobantes,
  checkCredencialesSol,
  checkLineas,
  checkNumLicencia,
  checkRuc,
  isValidRuc,
} from '../../src/schema/validation.js';
import { TAXPAYERS, TRIGGERS } from '../../src/sandbox/data.js';
import { RECEIPT, RECEIPT_BODY } from '../helpers.js';

describe('RUC rule', () => {
  it('accepts published RUCs whose check digit is known to be right', () => {
    // SUNAT itself, and two large companies: public, well-known registry numbers.
    for (const ruc of ['20131312955', '20100070970', '20100047218']) expect(isValidRuc(ruc)).toBe(true);
  });

  it('rejects a wrong check digit, a wrong prefix, a wrong length and non-digits', () => {
    expect(isValidRuc('20131312956')).toBe(false);
    expect(isValidRuc('30131312955')).toBe(false);
    expect(isValidRuc('2013131295')).toBe(false);
    expect(isValidRuc('201313129555')).toBe(false);
    expect(isValidRuc('2013131295a')).toBe(false);
    expect(isValidRuc('')).toBe(false);
  });

  it('trims surrounding spaces and names the contract message', () => {
    expect(checkRuc('  20131312955 ')).toEqual({ ok: true, value: '20131312955' });
    expect(checkRuc('123')).toEqual({ ok: false, message: 'El RUC es incorrecto' });
  });

  it('holds for every RUC of the sandbox data and its triggers', () => {
    for (const t of TAXPAYERS) expect(isValidRuc(t.ruc), t.ruc).toBe(true);
    for (const t of Object.values(TRIGGERS)) expect(isValidRuc(t.ruc), t.ruc).toBe(true);
  });
});

describe('licence number', () => {
  it('rejects blank and oversized numbers, trims the rest', () => {
    expect(checkNumLicencia('   ').ok).toBe(false);
    expect(checkNumLicencia('Q'.repeat(21)).ok).toBe(false);
    expect(checkNumLicencia('Q1 2').ok).toBe(false);
    // Dashes alone name no licence: refused for free rather than billed for a 404.
    expect(checkNumLicencia('---').ok).toBe(false);
    expect(checkNumLicencia(' Q46779354 ')).toEqual({ ok: true, value: 'Q46779354' });
  });
});

describe('receipts', () => {
  it('maps a valid receipt to the upstream snake_case fields, trimmed', () => {
    const result = checkComprobantes([{ ...RECEIPT, serieDocumento: ' F001 ' }], 100);
    expect(result).toEqual({
      ok: true,
      value: [RECEIPT_BODY],
    });
  });

  it('names each bad receipt by position and field', () => {
    const result = checkComprobantes([RECEIPT, { ...RECEIPT, serieDocumento: 'F01', numeroDocumento: '123456789' }], 100);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.message).toContain('comprobantes[1].serieDocumento');
    expect(result.message).toContain('comprobantes[1].numeroDocumento');
    expect(result.message).not.toContain('comprobantes[0]');
  });

  it('rejects dates that do not exist and accepts leap days', () => {
    expect(checkComprobantes([{ ...RECEIPT, fechaDeEmision: '2026-02-29' }], 100).ok).toBe(false);
    expect(checkComprobantes([{ ...RECEIPT, fechaDeEmision: '2026-13-01' }], 100).ok).toBe(false);
    expect(checkComprobantes([{ ...RECEIPT, fechaDeEmision: '01/10/2026' }], 100).ok).toBe(false);
    expect(checkComprobantes([{ ...RECEIPT, fechaDeEmision: '2024-02-29' }], 100).ok).toBe(true);
  });

  it('checks the type code, the total and the issuer RUC', () => {
    expect(checkComprobantes([{ ...RECEIPT, codigoTipoDocumento: '1' }], 100).ok).toBe(false);
    expect(checkComprobantes([{ ...RECEIPT, codigoTipoDocumento: 'R1' }], 100).ok).toBe(true);
    expect(checkComprobantes([{ ...RECEIPT, total: '1,180.00' }], 100).ok).toBe(false);
    expect(checkComprobantes([{ ...RECEIPT, total: '-5' }], 100).ok).toBe(false);
    expect(checkComprobantes([{ ...RECEIPT, total: '1180' }], 100).ok).toBe(true);
    expect(checkComprobantes([{ ...RECEIPT, rucEmisor: '20100123454' }], 100).ok).toBe(false);
  });

  it('refuses an empty list and more than 100 receipts with the contract message', () => {
    expect(checkComprobantes([], 100).ok).toBe(false);
    expect(
      checkComprobantes(
        Array.from({ length: 101 }, () => RECEIPT),
        100,
      ),
    ).toEqual({ ok: false, message: 'Enviar máximo 100 comprobantes por consulta (MAX_RECEIPTS).' });
    expect(
      checkComprobantes(
        Array.from({ length: 100 }, () => RECEIPT),
        100,
      ).ok,
    ).toBe(true);
  });
});

describe('receipt lines', () => {
  const line = '20100123453|01|F001|1532|2026-10-01|1180.00';

  it('passes valid lines exactly as given', () => {
    expect(checkLineas([line], 100)).toEqual({ ok: true, value: [line] });
  });

  it('names a line with the wrong number of parts, and a bad part by field', () => {
    const result = checkLineas([line, '20100123453|01|F001|1532|2026-10-01', '20100123453|01|F001|1532|2026-10-32|1180.00'], 100);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.message).toContain('comprobantes[1]: debe tener 6 partes');
    expect(result.message).toContain('comprobantes[2].fechaDeEmision');
  });

  it('refuses more than 100 lines', () => {
    expect(
      checkLineas(
        Array.from({ length: 101 }, () => line),
        100,
      ),
    ).toEqual({ ok: false, message: 'Enviar máximo 100 comprobantes por consulta (MAX_RECEIPTS).' });
  });
});

describe('SOL credentials', () => {
  it('never puts the key in a message', () => {
    const result = checkCredencialesSol({ rucEmpresa: 'x', usuario: '', clave: 'SECRETO123' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.message).not.toContain('SECRETO123');
  });
});
