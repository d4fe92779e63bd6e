import { UpstreamInvalidResponseError } from '../upstream/errors.js';
import type { ValidacionRecord } from '../upstream/schemas.js';
import { PLAN_COST } from '../upstream/billing.js';
import { MAX_COMPROBANTES, checkComprobantes, checkCredencialesSol, checkLineas } from './validation.js';
import { billed } from '../pipeline/billed.js';
import { builder } from './builder.js';
import { valid } from './input.js';

type ComprobanteValidadoRecord = ValidacionRecord['comprobantes'][number];

/** The largest value of GraphQL's Int (32-bit signed). */
const MAX_INT = 2 ** 31 - 1;

const ComprobanteInput = builder.inputType('ComprobanteInput', {
  description: 'Un comprobante a validar (los campos de la operación /cpe del servicio).',
  fields: (t) => ({
    rucEmisor: t.string({ required: true, description: 'RUC del emisor, 11 dígitos.' }),
    codigoTipoDocumento: t.string({
      required: true,
      description:
        'Tipo de comprobante SUNAT, 2 caracteres: 01 factura, 03 boleta, 07 nota de crédito, 08 nota de débito, R1 recibo por honorarios, ...',
    }),
    serieDocumento: t.string({ required: true, description: 'Serie, 4 caracteres: F001, B001, E001, 0001.' }),
    numeroDocumento: t.string({ required: true, description: 'Número, de 1 a 8 dígitos.' }),
    fechaDeEmision: t.string({ required: true, description: 'Fecha de emisión, AAAA-MM-DD.' }),
    total: t.string({ required: true, description: 'Importe total como texto decimal, p. ej. "1180.00".' }),
  }),
});

const CredencialesSolInput = builder.inputType('CredencialesSolInput', {
  description: 'Credenciales SOL de la empresa. Son secretas: el gateway nunca las registra ni las devuelve.',
  // Read by src/secret-variables.ts: a malformed value is refused without being printed.
  extensions: { secret: true },
  fields: (t) => ({
    rucEmpresa: t.string({ required: true, description: 'RUC de la empresa.' }),
    usuario: t.string({ required: true, description: 'Usuario SOL.' }),
    clave: t.string({ required: true, description: 'Clave SOL.' }),
  }),
});

const ComprobanteValidado = builder.objectRef<ComprobanteValidadoRecord>('ComprobanteValidado').implement({
  description: 'Resultado de la validación de un comprobante.',
  fields: (t) => ({
    serieDocumento: t.exposeString('serie_documento', { description: 'Serie del comprobante.' }),
    numeroDocumento: t.exposeString('numero_documento', { description: 'Número del comprobante.' }),
    comprobanteEstadoDescripcion: t.exposeString('comprobante_estado_descripcion', {
      nullable: true,
      description: 'Estado según SUNAT: ACEPTADO, ANULADO, NO EXISTE, ...',
    }),
    observaciones: t.exposeStringList('observaciones', {
      description: 'Observaciones: los textos tal como llegan; cualquier otro elemento como su texto JSON.',
    }),
  }),
});

const ValidacionComprobantes = builder.objectRef<ValidacionRecord>('ValidacionComprobantes').implement({
  description: 'Resultado de una validación múltiple de comprobantes.',
  fields: (t) => ({
    cantidadDeComprobantes: t.int({
      description: 'Cantidad de comprobantes en el resultado.',
      // A count GraphQL's Int cannot hold is the upstream's error on this field, not a fault of ours.
      resolve: (r) => {
        if (r.cantidad_de_comprobantes <= MAX_INT) return r.cantidad_de_comprobantes;
        throw new UpstreamInvalidResponseError({
          path: '/validacion-multiple-cpe',
          status: 200,
          reason: 'record',
          issues: ['cantidad_de_comprobantes: too_big'],
        });
      },
    }),
    comprobantes: t.field({ type: [ComprobanteValidado], description: 'Un resultado por comprobante.', resolve: (r) => r.comprobantes }),
  }),
});

/** Both batches: every receipt sent is billed, up to the most one call takes. */
const RECEIPTS = { weight: PLAN_COST.receipt, argument: 'comprobantes', list: true, max: MAX_COMPROBANTES, per: 'comprobante' };

builder.mutationFields((t) => ({
  validarComprobantes: t.field({
    type: ValidacionComprobantes,
    nullable: true,
    ...billed(`Valida hasta ${MAX_COMPROBANTES} comprobantes. REST: POST /validacion-multiple-cpe.`, RECEIPTS),
    args: { comprobantes: t.arg({ type: [ComprobanteInput], required: true, description: 'De 1 a 100 comprobantes.' }) },
    resolve: (_root, { comprobantes }, ctx) => ctx.upstream.validarComprobantes(valid(checkComprobantes(comprobantes)), ctx.call),
  }),
  validarComprobantesTexto: t.field({
    type: ValidacionComprobantes,
    nullable: true,
    ...billed(
      "Igual, con cada comprobante como texto 'ruc|tipo|serie|numero|fecha|total'. REST: POST /validacion-multiple-cpe-v2.",
      RECEIPTS,
    ),
    args: {
      comprobantes: t.arg.stringList({ required: true, description: "De 1 a 100 líneas 'ruc|tipo|serie|numero|fecha|total'." }),
      credencialesSol: t.arg({ type: CredencialesSolInput, required: false, description: 'Credenciales SOL de la empresa (opcional).' }),
    },
    resolve: (_root, { comprobantes, credencialesSol }, ctx) => {
      const lineas = valid(checkLineas(comprobantes));
      const credenciales = credencialesSol ? valid(checkCredencialesSol(credencialesSol)) : undefined;
      return ctx.upstream.validarComprobantesTexto(lineas, credenciales, ctx.call);
    },
  }),
}));
