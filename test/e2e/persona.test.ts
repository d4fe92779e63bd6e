import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { codes, readmeExample, startStack, TOKEN, type Stack } from '../helpers.js';

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

describe('a company’s representatives and branches (POST /ruc-representantes, /ruc-establecimientos-anexos)', () => {
  it('answers both lists and each DNI holder’s person in one request: one call each, /dni once per DNI', async () => {
    const before = stack.sandbox.quotaOf(TOKEN)!;
    const { body } = await stack.gql(`{
      contribuyente(ruc: "20100123453") {
        representantes { tipoDeDocumento numeroDeDocumento nombre cargo fechaDesde persona { dni nombres } }
        establecimientos { codigo tipoDeEstablecimiento actividadEconomica direccion departamento provincia distrito ubigeo }
      }
      comprador: persona(dni: "46779354") { nombreCompleto }
    }`);
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      contribuyente: {
        representantes: [
          {
            tipoDeDocumento: 'DNI',
            numeroDeDocumento: '46779354',
            nombre: 'QUISPE MAMANI ROSA ELENA',
            cargo: 'GERENTE GENERAL',
            fechaDesde: '01/03/2015',
            persona: { dni: '46779354', nombres: 'ROSA ELENA' },
          },
          {
            tipoDeDocumento: 'CE',
            numeroDeDocumento: '001234567',
            nombre: 'SMITH JOHN',
            cargo: 'APODERADO',
            fechaDesde: '15/06/2020',
            persona: null,
          },
        ],
        establecimientos: [
          {
            codigo: '0001',
            tipoDeEstablecimiento: 'SU. SUCURSAL',
            actividadEconomica: null,
            direccion: 'AV. ARGENTINA NRO. 1234',
            departamento: 'LIMA',
            provincia: 'LIMA',
            distrito: 'LIMA',
            ubigeo: '150101',
          },
          {
            codigo: '0002',
            tipoDeEstablecimiento: 'DE. DEPOSITO',
            actividadEconomica: null,
            direccion: 'CAL. LOS PINOS NRO. 45',
            departamento: 'CALLAO',
            provincia: 'CALLAO',
            distrito: 'CALLAO',
            ubigeo: '070101',
          },
        ],
      },
      comprador: { nombreCompleto: 'QUISPE MAMANI ROSA ELENA' },
    });
    for (const path of ['/ruc', '/ruc-representantes', '/ruc-establecimientos-anexos', '/dni'])
      expect(stack.sandbox.callsTo(path), path).toHaveLength(1);
    const billed = before - stack.sandbox.quotaOf(TOKEN)!;
    expect(billed).toBe(4);
    // Each representative's person is priced before the list is known: 10 assumed.
    expect(cost(body)).toMatchObject({ queries: billed, estimated: 1 + 1 + 1 + 10 + 1 });
  });

  it('asks a natural person (RUC 10) for no representatives: [] without a call', async () => {
    const { body } = await stack.gql('{ contribuyente(ruc: "10467793549") { representantes { nombre } } }');
    expect(body.data).toEqual({ contribuyente: { representantes: [] } });
    expect(stack.sandbox.callsTo('/ruc-representantes')).toHaveLength(0);
  });

  it('refuses an operation whose representatives could fan out past MAX_OPERATION_COST, before any call', async () => {
    // Ten companies' representatives' persons: 10 × 10 assumed, past the default 100.
    const rucs = [...['20100123453', '20501234568', '20602345671', '20603456786', '20484567892']].flatMap((ruc) => [ruc, ruc]);
    const query = `{ ${rucs.map((ruc, i) => `c${i}: contribuyente(ruc: "${ruc}") { representantes { persona { dni } } }`).join(' ')} }`;
    const { body } = await stack.gql(query);
    expect(body.errors?.[0]?.extensions?.['code']).toBe('COST_LIMIT_EXCEEDED');
    expect(stack.sandbox.calls).toHaveLength(0);
  });
});

describe("README's worked query 4", () => {
  it('is answered exactly as the README shows it', async () => {
    const { sent, shown } = readmeExample('4. A checkout in one request');
    expect((await stack.gql(sent.query, sent.variables)).body).toEqual(shown);
    expect(stack.sandbox.callsTo('/dni')).toHaveLength(1);
  });
});
