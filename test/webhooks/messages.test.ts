import { describe, expect, it } from 'vitest';
import type { Cambio } from '../../src/padron/change-store.js';
import { MAX_PER_MESSAGE, messagesOf, seqOf, watched } from '../../src/webhooks/messages.js';

const cambio = (ruc: string, tipo: Cambio['tipo'] = 'CONDICION'): Cambio => ({
  ruc,
  fecha: '2026-11-28',
  tipo,
  antes: 'HABIDO',
  despues: 'NO HABIDO',
});

describe('messagesOf', () => {
  it('splits a date’s changes by 1,000, each message with an id every instance makes alike', () => {
    const changes = Array.from({ length: 2_500 }, (_, i) => cambio(String(20_000_000_000 + i)));
    const messages = messagesOf('sus_A', '2026-11-28', changes);
    expect(messages.map((m) => (JSON.parse(m.body) as { data: { cambios: unknown[] } }).data.cambios.length)).toEqual([
      MAX_PER_MESSAGE,
      MAX_PER_MESSAGE,
      500,
    ]);
    expect(messagesOf('sus_A', '2026-11-28', changes, new Date(0)).map((m) => m.id)).toEqual(messages.map((m) => m.id));
    expect(new Set(messages.map((m) => m.id)).size).toBe(3);
    expect(messagesOf('sus_B', '2026-11-28', changes)[0]!.id).not.toBe(messages[0]!.id);
    expect(messages.map((m) => m.seq)).toEqual([seqOf('2026-11-28', 0), seqOf('2026-11-28', 1), seqOf('2026-11-28', 2)]);
    expect(seqOf('2026-11-29', 0)).toBeGreaterThan(seqOf('2026-11-28', 9_999));
  });
});

describe('watched', () => {
  it('picks the changes of the subscription’s RUCs and types, in RUC order, whichever side is smaller', () => {
    const byRuc = new Map([
      ['20100000001', [cambio('20100000001'), cambio('20100000001', 'ESTADO')]],
      ['20100000002', [cambio('20100000002')]],
    ]);
    expect(watched({ rucs: ['20100000001', '20100000002'], tipos: null }, byRuc).map((c) => [c.ruc, c.tipo])).toEqual([
      ['20100000001', 'CONDICION'],
      ['20100000001', 'ESTADO'],
      ['20100000002', 'CONDICION'],
    ]);
    const many = [...Array.from({ length: 10 }, (_, i) => String(20_300_000_000 + i)), '20100000002'];
    expect(watched({ rucs: many, tipos: ['CONDICION'] }, byRuc).map((c) => c.ruc)).toEqual(['20100000002']);
    expect(watched({ rucs: ['20100000001'], tipos: ['ALTA'] }, byRuc)).toEqual([]);
  });
});
