import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { codes, startStack, TOKEN, type Stack } from '../helpers.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());
afterEach(() => stack.sandbox.reset());

const cost = (body: { extensions?: Record<string, unknown> }) => body.extensions?.['cost'] as Record<string, number>;

describe('persona(dni) and the links to a person (POST /dni)', () => {
  it('answers a person by DNI, from the service, for one query', async () => {
    const { body } = await stack.gql(
      '{ persona(dni: "46779354") { dni nombreCompleto nombres apellidoPaterno apellidoMaterno codigoVerificacion fuente consultadoEn } }',
    );
    expect(body.errors).toBeUndefined();
    expect(body.data).toMatchObject({
      persona: {
        dni: '46779354',
        nombreCompleto: 'QUISPE MAMANI ROSA ELENA',
        nombres: 'ROSA ELENA',
        apellidoPaterno: 'QUISPE',
        apellidoMaterno: 'MAMANI',
        codigoVerificacion: expect.stringMatching(/^\d$/),
        fuente: 'SERVICIO',
      },
    });
    expect(stack.sandbox.callsTo('/dni').map((c) => c.body)).toEqual([{ dni: '46779354' }]);
    expect(cost(body)).toMatchObject({ estimated: 1, queries: 1, upstreamCalls: 1 });
  });

  it('refuses a DNI that is not 8 digits locally, for free', async () => {
    const { body } = await stack.gql('{ a: persona(dni: "4677935") { dni } b: persona(dni: "4677935X") { dni } }');
    expect(codes(body)).toEqual(['INVALID_INPUT', 'INVALID_INPUT']);
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('reaches one person three ways (by DNI, as a licence holder, as a RUC 10) with one /dni call, and reports what the sandbox billed', async () => {
    const before = stack.sandbox.quotaOf(TOKEN)!;
    const { body } = await stack.gql(`{
      persona(dni: "46779354") { nombres }
      licencia(numLicencia: "Q46779354") { titular { dni nombres } }
      contribuyente(ruc: "10467793549") { persona { dni apellidoPaterno } }
    }`);
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      persona: { nombres: 'ROSA ELENA' },
      licencia: { titular: { dni: '46779354', nombres: 'ROSA ELENA' } },
      contribuyente: { persona: { dni: '46779354', apellidoPaterno: 'QUISPE' } },
    });
    expect(stack.sandbox.callsTo('/dni')).toHaveLength(1);
    const billed = before - stack.sandbox.quotaOf(TOKEN)!;
    expect(billed).toBe(4); // /dni 1, /licencia-conducir 2, /ruc 1
    expect(cost(body)).toMatchObject({ queries: billed, upstreamCalls: 3 });
    expect(cost(body)['estimated']).toBeGreaterThanOrEqual(billed);
  });

  it('gives a company no person, without a call', async () => {
    const { body } = await stack.gql('{ contribuyente(ruc: "20100123453") { ruc persona { dni } } }');
    expect(body.data).toEqual({ contribuyente: { ruc: '20100123453', persona: null } });
    expect(body.errors).toBeUndefined();
    expect(stack.sandbox.callsTo('/dni')).toHaveLength(0);
    expect(cost(body)).toMatchObject({ estimated: 1, queries: 1 });
  });

  it('works out a person’s RUC locally: found for a taxpayer, DOCUMENT_NOT_FOUND for one with none, the rest intact', async () => {
    const { body } = await stack.gql(`{
      con: persona(dni: "46779354") { dni contribuyente { ruc estado } }
      sin: persona(dni: "70123456") { dni nombres contribuyente { ruc } }
    }`);
    expect(body.data).toEqual({
      con: { dni: '46779354', contribuyente: { ruc: '10467793549', estado: 'ACTIVO' } },
      sin: { dni: '70123456', nombres: 'ANA MARIA', contribuyente: null },
    });
    expect(body.errors?.map((e) => [e.path, e.extensions?.['code']])).toEqual([[['sin', 'contribuyente'], 'DOCUMENT_NOT_FOUND']]);
    expect(stack.sandbox.callsTo('/ruc').map((c) => c.body)).toEqual([{ ruc: '10467793549' }, { ruc: '10701234567' }]);
  });

  it('prices a licence’s holder and what hangs under it before knowing its DNI: the limit counts it', async () => {
    const { body } = await stack.gql('{ licencia(numLicencia: "Q46779354") { titular { contribuyente { ruc detalle { ruc } } } } }');
    expect(body.errors).toBeUndefined();
    // licencia 2, its holder 1, the holder's RUC 1, its detail 1: known only as the answers come.
    expect(cost(body)).toMatchObject({ estimated: 5, queries: 5 });
  });
});
