import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ContribuyenteConDetalleDocument,
  ContribuyenteDetalleDocument,
  ContribuyentesDocument,
  EjemploDocument,
  LicenciaDocument,
  ValidarComprobantesDocument,
  ValidarComprobantesTextoDocument,
} from '../../operations/generated/graphql.js';
import { post, RECEIPT, startStack, type Stack } from '../helpers.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack.close());
beforeEach(() => stack.sandbox.reset());

describe('Contribuyente', () => {
  it('returns every field of the summary and its detalle', async () => {
    const { body } = await stack.gql(ContribuyenteConDetalleDocument, { ruc: '20100123453' });
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      contribuyente: {
        __typename: 'Contribuyente',
        ruc: '20100123453',
        nombreORazonSocial: 'COMERCIAL ANDINA S.A.C.',
        estado: 'ACTIVO',
        condicion: 'HABIDO',
        direccion: 'AV. JAVIER PRADO ESTE NRO. 1234',
        departamento: 'LIMA',
        esAgenteDeRetencion: true,
        esBuenContribuyente: false,
        detalle: {
          __typename: 'ContribuyenteDetalle',
          ruc: '20100123453',
          nombreORazonSocial: 'COMERCIAL ANDINA S.A.C.',
          estado: 'ACTIVO',
          condicion: 'HABIDO',
          direccionCompleta: 'AV. JAVIER PRADO ESTE NRO. 1234, LIMA - LIMA - SAN ISIDRO',
          tipoContribuyente: 'SOCIEDAD ANONIMA CERRADA',
          fechaInscripcion: '1995-03-14',
          actividadesEconomicas: [
            'Principal - 4690 - VENTA AL POR MAYOR NO ESPECIALIZADA',
            'Secundaria 1 - 4923 - TRANSPORTE DE CARGA POR CARRETERA',
          ],
        },
      },
    });
  });

  it('maps SI and NO flags to booleans and anything else, or nothing, to null', async () => {
    const flags = await stack.gql(`{
      si: contribuyente(ruc: "20484567892") { esAgenteDeRetencion esBuenContribuyente }
      raro: contribuyente(ruc: "20457890126") { esAgenteDeRetencion esBuenContribuyente }
      ausente: contribuyente(ruc: "20600000013") { esAgenteDeRetencion esBuenContribuyente }
    }`);
    expect(flags.body.data).toEqual({
      si: { esAgenteDeRetencion: true, esBuenContribuyente: true },
      raro: { esAgenteDeRetencion: null, esBuenContribuyente: null },
      ausente: { esAgenteDeRetencion: null, esBuenContribuyente: null },
    });
  });

  it('answers natural persons (RUC 10, 15 and 17) as well as companies', async () => {
    const { body } = await stack.gql(ContribuyentesDocument, { rucs: ['10467793549', '15432198763', '17123456785', '20501234568'] });
    expect(body.data?.contribuyentes.map((c) => c?.nombreORazonSocial)).toEqual([
      'QUISPE MAMANI ROSA ELENA',
      'RODRIGUEZ SMITH JOHN PAUL',
      'VARGAS LEON MARIA ISABEL',
      'INVERSIONES PACIFICO DEL SUR S.A.',
    ]);
  });

  it('answers an empty rucs list with an empty list and no call', async () => {
    const { body } = await stack.gql(ContribuyentesDocument, { rucs: [] });
    expect(body.data).toEqual({ contribuyentes: [] });
    expect(stack.sandbox.calls).toHaveLength(0);
  });

  it('keeps the order of the rucs argument in contribuyentes', async () => {
    const rucs = ['20602345671', '20100123453', '20602345671'];
    const { body } = await stack.gql(ContribuyentesDocument, { rucs });
    expect(body.data?.contribuyentes.map((c) => c?.ruc)).toEqual(rucs);
  });
});

describe('ContribuyenteDetalle', () => {
  it('returns an empty activity list when there is none', async () => {
    const { body } = await stack.gql(ContribuyenteDetalleDocument, { ruc: '20600000013' });
    expect(body.data?.contribuyenteDetalle).toMatchObject({ ruc: '20600000013', actividadesEconomicas: [] });
  });
});

describe('LicenciaConducir', () => {
  it('returns every field of the holder', async () => {
    const { body } = await stack.gql(LicenciaDocument, { numLicencia: ' Q001234567 ' });
    expect(body.data).toEqual({
      licencia: {
        __typename: 'LicenciaConducir',
        numLicencia: 'Q001234567',
        tipoDocumento: 'CE',
        numeroDocumento: '001234567',
        nombres: 'JOHN PAUL',
        apellidoPaterno: 'RODRIGUEZ',
        apellidoMaterno: 'SMITH',
      },
    });
  });
});

describe('the example operation', () => {
  it('fetches a taxpayer, its detail, a licence and its holder in one request', async () => {
    const { body } = await stack.gql(EjemploDocument, { ruc: '20100123453', numLicencia: 'Q46779354' });
    expect(body.errors).toBeUndefined();
    expect(body.data?.contribuyente?.detalle?.tipoContribuyente).toBe('SOCIEDAD ANONIMA CERRADA');
    expect(body.data?.licencia).toEqual({
      __typename: 'LicenciaConducir',
      nombres: 'ROSA ELENA',
      apellidoPaterno: 'QUISPE',
      apellidoMaterno: 'MAMANI',
      titular: { __typename: 'Persona', dni: '46779354', nombreCompleto: 'QUISPE MAMANI ROSA ELENA' },
    });
    expect(stack.sandbox.calls.map((c) => c.path).sort()).toEqual(['/dni', '/licencia-conducir', '/ruc', '/ruc-sunat']);
  });
});

/** One receipt's result as the generated document asks for it. */
const validado = (serieDocumento: string, numeroDocumento: string, comprobanteEstadoDescripcion: string, observaciones: string[] = []) => ({
  __typename: 'ComprobanteValidado',
  serieDocumento,
  numeroDocumento,
  comprobanteEstadoDescripcion,
  observaciones,
});

describe('ValidacionComprobantes', () => {
  it('returns one result per receipt, with states that depend on the receipt', async () => {
    const { body } = await stack.gql(ValidarComprobantesDocument, {
      comprobantes: [
        RECEIPT,
        { ...RECEIPT, numeroDocumento: '1530' },
        { ...RECEIPT, rucEmisor: '20999999990' },
        { ...RECEIPT, codigoTipoDocumento: '07', serieDocumento: 'FC01', numeroDocumento: '7' },
        { ...RECEIPT, total: '0.00', numeroDocumento: '99' },
      ],
    });
    expect(body.errors).toBeUndefined();
    expect(body.data?.validarComprobantes).toEqual({
      __typename: 'ValidacionComprobantes',
      cantidadDeComprobantes: 5,
      comprobantes: [
        validado('F001', '1532', 'ACEPTADO'),
        validado('F001', '1530', 'ANULADO'),
        validado('F001', '1532', 'NO EXISTE', ['El emisor no figura en el padrón.']),
        // An object remark reaches the client as its JSON text.
        validado('FC01', '7', 'ACEPTADO', ['{"codigo":"4287","descripcion":"Nota vinculada a un comprobante de referencia"}']),
        validado('F001', '99', 'RECHAZADO', ['El importe total es cero.']),
      ],
    });
  });

  it('types each remark in observacionesDetalle: an object’s codigo and descripcion, a text as descripcion', async () => {
    const { body } = await stack.gql(
      'mutation($c: [ComprobanteInput!]!) { validarComprobantes(comprobantes: $c) { comprobantes { observacionesDetalle { codigo descripcion } } } }',
      {
        c: [
          RECEIPT,
          { ...RECEIPT, rucEmisor: '20999999990' },
          { ...RECEIPT, codigoTipoDocumento: '07', serieDocumento: 'FC01', numeroDocumento: '7' },
        ],
      },
    );
    expect(body.errors).toBeUndefined();
    const detalle = (
      body.data as { validarComprobantes: { comprobantes: { observacionesDetalle: unknown[] }[] } }
    ).validarComprobantes.comprobantes.map((c) => c.observacionesDetalle);
    expect(detalle).toEqual([
      [],
      [{ codigo: null, descripcion: 'El emisor no figura en el padrón.' }],
      [{ codigo: '4287', descripcion: 'Nota vinculada a un comprobante de referencia' }],
    ]);
    expect(stack.sandbox.callsTo('/validacion-multiple-cpe')).toHaveLength(1);
  });

  it('validates text lines through the -v2 operation', async () => {
    const { body } = await stack.gql(ValidarComprobantesTextoDocument, {
      comprobantes: ['20100123453|01|F001|1532|2026-10-01|1180.00', '20100123453|03|B001|20|2026-10-02|59.90'],
    });
    expect(body.data?.validarComprobantesTexto).toEqual({
      __typename: 'ValidacionComprobantes',
      cantidadDeComprobantes: 2,
      comprobantes: [validado('F001', '1532', 'ACEPTADO'), validado('B001', '20', 'ANULADO')],
    });
  });

  it('charges the plan one query per receipt', async () => {
    const before = stack.sandbox.quotaOf('sandbox-pro')!;
    await stack.gql(ValidarComprobantesDocument, { comprobantes: [RECEIPT, RECEIPT, RECEIPT] });
    expect(before - stack.sandbox.quotaOf('sandbox-pro')!).toBe(3);
  });
});

describe('response shape', () => {
  it('keeps response keys in selection order even when later fields resolve first', async () => {
    // The first field waits on the upstream; the second fails locally at once.
    const res = await post(`${stack.url}/graphql`, {
      query: '{ primero: contribuyente(ruc: "20100123453") { ruc } segundo: contribuyente(ruc: "1") { ruc } }',
    });
    const body = (await res.json()) as { data: Record<string, unknown> };
    expect(Object.keys(body.data)).toEqual(['primero', 'segundo']);
  });
});
