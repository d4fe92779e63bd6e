import { REST } from '../upstream/paths.js';
import { GraphQLError } from 'graphql';
import type { Context } from './context.js';
import { inChunks } from '../upstream/chunks.js';
import { chunkError, isLocalRefusal, RETRYABLE_BY_DEFAULT, sunatWords, upstreamCodeOf, type ERROR_CODES } from '../errors.js';
import { UpstreamInvalidResponseError } from '../upstream/errors.js';
import type { ComprobanteBody, ValidacionRecord } from '../upstream/schemas.js';
import { SunatUnavailable } from '../sunat/errors.js';
import type { SunatCredentials } from '../sunat/tokens.js';
import type { SunatResult } from '../sunat/receipts.js';
import type { SunatValidation } from '../sunat/validation.js';
import { ErrorCodeRef } from './errors.js';
import { RECEIPT_PRICE, RECEIPTS_PER_CALL } from '../upstream/billing.js';
import { DEFAULT_MAX_RECEIPTS } from '../config.js';
import { checkComprobantes, checkCredencialesApi, checkCredencialesSol, checkLineas } from './validation.js';
import { billed } from './billed.js';
import { builder } from './builder.js';
import { valid } from './input.js';

type ComprobanteValidadoRecord = ValidacionRecord['comprobantes'][number];

/** One receipt's answer: the paid service's or SUNAT's record, who gave it, the receipt as asked, or why it has none. */
export type Validado = ComprobanteValidadoRecord & {
  fuente?: 'SUNAT' | 'SERVICIO';
  asked?: ComprobanteBody;
  error?: { code: string; message: string; retryable: boolean };
};

/** A batch's answer, put together from its calls: each receipt's result in input order, or its call's failure. */
interface Validacion {
  /** What the upstream counted, over the calls that answered. */
  cantidad: number;
  /** The first receipt of a failed call holds its error (one per call); the others of that call are null. */
  entries: (Validado | GraphQLError | null)[];
}

/** The paid service's answers, each with its receipt as asked and its source. */
function fromService(validacion: Validacion, asked: readonly ComprobanteBody[]): Validacion {
  const entries = validacion.entries.map((e, i) =>
    e && !(e instanceof GraphQLError) ? { ...e, fuente: 'SERVICIO' as const, asked: asked[i] } : e,
  );
  return { cantidad: validacion.cantidad, entries };
}

/**
 * The receipts through SUNAT's free API with `credentials`: each its own answer or error; refused credentials fail the
 * field. With SUNAT_API_FALLBACK=servicio, what SUNAT could not answer (down, after the retries) goes to the paid service.
 */
async function throughSunat(
  sunat: SunatValidation,
  credentials: SunatCredentials,
  bodies: ComprobanteBody[],
  ctx: Context,
): Promise<Validacion> {
  const results = await sunat.validate(credentials, bodies);
  const entries: Validacion['entries'] = results.map((r, i) => sunatValidado(r, bodies[i]!));
  const down = results.flatMap((r, i) => ('error' in r && r.error instanceof SunatUnavailable ? [i] : []));
  if (sunat.settings.fallback === 'servicio' && down.length > 0) {
    const part = down.map((i) => bodies[i]!);
    const paid = fromService(await validate(part, REST.validacion, ctx, (p, call) => ctx.upstream.validarComprobantes(p, call)), part);
    down.forEach((i, at) => (entries[i] = paid.entries[at] ?? null));
  }
  const cantidad = entries.filter((e) => e && !(e instanceof GraphQLError) && !e.error).length;
  return { cantidad, entries };
}

/** SUNAT's answer of one receipt as `ComprobanteValidado`: its states, or its error (SUNAT down: nobody answered it). */
export function sunatValidado(r: SunatResult, asked: ComprobanteBody): Validado {
  if ('receipt' in r) return { ...r.receipt, fuente: 'SUNAT', asked };
  const { code, message, retryable } = sunatWords(r.error);
  return {
    ...unanswered(asked),
    fuente: r.error instanceof SunatUnavailable ? undefined : 'SUNAT',
    error: { code, message, retryable: retryable ?? RETRYABLE_BY_DEFAULT.has(code) },
  };
}

/** A receipt with no answer: its states null, its series and number as asked. */
export const unanswered = (asked: ComprobanteBody): Validado => ({
  serie_documento: asked.serie_documento,
  numero_documento: asked.numero_documento,
  comprobante_estado_codigo: null,
  comprobante_estado_descripcion: null,
  empresa_estado_codigo: null,
  empresa_estado_descripcion: null,
  empresa_condicion_codigo: null,
  empresa_condicion_descripcion: null,
  observaciones: [],
  observaciones_detalle: [],
  asked,
});

/**
 * Sends a checked batch in calls of at most RECEIPTS_PER_CALL and puts the answers together.
 * One call that fails is the field's error, as it always was; with more, each failed call is
 * one error on its first receipt, naming the receipts it covered.
 */
async function validate<T>(
  items: readonly T[],
  path: string,
  ctx: Context,
  send: (part: T[], call: Context['call']) => Promise<ValidacionRecord>,
): Promise<Validacion> {
  const chunks = await inChunks(items, {
    size: RECEIPTS_PER_CALL,
    concurrency: ctx.limits.concurrency,
    call: async (part) => {
      // Paid from a signed-in caller's budget at the price list's cost, before it is sent.
      const { budget } = ctx.call;
      const cost = RECEIPT_PRICE * part.length;
      const record = await (budget ? budget.pay(cost, ctx.call, (call) => send(part, call)) : send(part, ctx.call));
      // Each call's answer is checked on its own, so that a bad one loses only its own receipts.
      const issue = answerIssue(record, part.length);
      if (issue) throw new UpstreamInvalidResponseError({ path, status: 200, reason: 'record', issues: [issue] });
      return record;
    },
    stopsAll: (error) => upstreamCodeOf(error) === 'QUOTA_EXCEEDED' || isLocalRefusal(error),
  });
  if (chunks.length === 1 && chunks[0]!.error !== undefined) throw chunks[0]!.error;
  const validacion: Validacion = { cantidad: 0, entries: [] };
  for (const chunk of chunks) {
    if (chunk.result) {
      validacion.cantidad += chunk.result.cantidad_de_comprobantes;
      validacion.entries.push(...chunk.result.comprobantes);
    } else {
      validacion.entries.push(chunkError(chunk.error, { from: chunk.from, to: chunk.to }, chunk.unsent === true));
      for (let i = chunk.from + 1; i <= chunk.to; i++) validacion.entries.push(null);
    }
  }
  return validacion;
}

/**
 * What is wrong with one call's answer, if anything: answers are matched to receipts by position,
 * so the list must be as long as what was sent, and its count must be that length.
 */
function answerIssue(record: ValidacionRecord, sent: number): string | undefined {
  if (record.comprobantes.length !== sent) return 'comprobantes: not one result per receipt sent';
  if (record.cantidad_de_comprobantes !== sent) return 'cantidad_de_comprobantes: not the number of results';
  return undefined;
}

export const ComprobanteInput = builder.inputType('ComprobanteInput', {
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

export const CredencialesApiSunatInput = builder.inputType('CredencialesApiSunatInput', {
  description:
    'Credenciales de la API de SUNAT de la empresa (SUNAT Operaciones en Línea, ' +
    'Consulta de Validez). Son secretas: el gateway nunca las registra ni las devuelve.',
  // Read by src/pipeline/secrets.ts: written in a document it is refused, and a malformed variable is refused without being printed.
  extensions: { secret: true },
  fields: (t) => ({
    rucEmpresa: t.string({ required: true, description: 'RUC de la empresa que consulta, dueña de las credenciales.' }),
    clientId: t.string({ required: true, description: 'client_id de la aplicación registrada en SUNAT.' }),
    clientSecret: t.string({ required: true, description: 'client_secret de la aplicación.' }),
  }),
});

const FuenteValidacion = builder.enumType('FuenteValidacion', {
  description: 'Quién respondió por un comprobante.',
  values: {
    SUNAT: { description: 'La API gratuita de SUNAT (0 consultas del plan).' },
    SERVICIO: { description: 'El servicio de consulta (1 consulta del plan).' },
  } as const,
});

const ErrorDeComprobante = builder.objectRef<{ code: string; message: string; retryable: boolean }>('ErrorDeComprobante').implement({
  description: 'Por qué un comprobante no se pudo validar; los demás de la lista se validan igual.',
  fields: (t) => ({
    code: t.field({ type: ErrorCodeRef, resolve: (e) => e.code as keyof typeof ERROR_CODES }),
    message: t.exposeString('message'),
    retryable: t.exposeBoolean('retryable'),
  }),
});

const CredencialesSolInput = builder.inputType('CredencialesSolInput', {
  description: 'Credenciales SOL de la empresa. Son secretas: el gateway nunca las registra ni las devuelve.',
  // Read by src/pipeline/secrets.ts: written in a document it is refused, and a malformed variable is refused without being printed.
  extensions: { secret: true },
  fields: (t) => ({
    rucEmpresa: t.string({ required: true, description: 'RUC de la empresa.' }),
    usuario: t.string({ required: true, description: 'Usuario SOL.' }),
    clave: t.string({ required: true, description: 'Clave SOL.' }),
  }),
});

/** The receipt states by the code the service sends (upstream-notes); any other code has no typed form. */
const ESTADOS: Record<string, 'NO_EXISTE' | 'ACEPTADO' | 'ANULADO' | 'AUTORIZADO' | 'NO_AUTORIZADO'> = {
  '0': 'NO_EXISTE',
  '1': 'ACEPTADO',
  '2': 'ANULADO',
  '3': 'AUTORIZADO',
  '4': 'NO_AUTORIZADO',
};

const EstadoComprobante = builder.enumType('EstadoComprobante', {
  description: 'Estado del comprobante según SUNAT, la forma tipada de comprobanteEstadoCodigo.',
  values: {
    NO_EXISTE: { description: 'Código "0": el comprobante no existe.' },
    ACEPTADO: { description: 'Código "1": aceptado.' },
    ANULADO: { description: 'Código "2": anulado.' },
    AUTORIZADO: { description: 'Código "3": autorizado.' },
    NO_AUTORIZADO: { description: 'Código "4": no autorizado.' },
  } as const,
});

const Observacion = builder.objectRef<ComprobanteValidadoRecord['observaciones_detalle'][number]>('Observacion').implement({
  description: 'Una observación del servicio sobre un comprobante.',
  fields: (t) => ({
    codigo: t.exposeString('codigo', {
      nullable: true,
      description: 'Código de la observación, p. ej. 4287 (null cuando llegó solo un texto).',
    }),
    descripcion: t.exposeString('descripcion', { nullable: true, description: 'Texto de la observación.' }),
  }),
});

export const ComprobanteValidado = builder.objectRef<Validado>('ComprobanteValidado').implement({
  description: 'Resultado de la validación de un comprobante.',
  fields: (t) => ({
    rucEmisor: t.string({ nullable: true, description: 'RUC del emisor, tal como se pidió.', resolve: (r) => r.asked?.ruc_emisor ?? null }),
    codigoTipoDocumento: t.string({
      nullable: true,
      description: 'Tipo de comprobante, tal como se pidió.',
      resolve: (r) => r.asked?.codigo_tipo_documento ?? null,
    }),
    fechaDeEmision: t.string({
      nullable: true,
      description: 'Fecha de emisión, AAAA-MM-DD.',
      resolve: (r) => r.asked?.fecha_de_emision ?? null,
    }),
    total: t.string({ nullable: true, description: 'Importe total, tal como se pidió.', resolve: (r) => r.asked?.total ?? null }),
    fuente: t.field({ type: FuenteValidacion, nullable: true, description: 'Quién respondió.', resolve: (r) => r.fuente ?? null }),
    error: t.field({
      type: ErrorDeComprobante,
      nullable: true,
      description: 'Este comprobante no se pudo validar (sus estados son entonces null).',
      resolve: (r) => r.error ?? null,
    }),
    serieDocumento: t.exposeString('serie_documento', { description: 'Serie del comprobante.' }),
    numeroDocumento: t.exposeString('numero_documento', { description: 'Número del comprobante.' }),
    comprobanteEstadoCodigo: t.exposeString('comprobante_estado_codigo', {
      nullable: true,
      description: 'Código del estado según SUNAT: "0" no existe, "1" aceptado, "2" anulado, "3" autorizado, "4" no autorizado.',
    }),
    comprobanteEstado: t.field({
      type: EstadoComprobante,
      nullable: true,
      description: 'El mismo estado como enumeración; null cuando el código falta o no es uno de los conocidos.',
      resolve: (r) =>
        r.comprobante_estado_codigo !== null && Object.hasOwn(ESTADOS, r.comprobante_estado_codigo)
          ? ESTADOS[r.comprobante_estado_codigo]!
          : null,
    }),
    comprobanteEstadoDescripcion: t.exposeString('comprobante_estado_descripcion', {
      nullable: true,
      description: 'Estado según SUNAT: ACEPTADO, ANULADO, NO EXISTE, ...',
    }),
    empresaEstadoCodigo: t.exposeString('empresa_estado_codigo', {
      nullable: true,
      description: 'Código del estado del emisor en el padrón.',
    }),
    empresaEstadoDescripcion: t.exposeString('empresa_estado_descripcion', {
      nullable: true,
      description: 'Estado del emisor, p. ej. ACTIVO (el servicio lo escribe empresa_estado_descripcion o empresa_estado_description).',
    }),
    empresaCondicionCodigo: t.exposeString('empresa_condicion_codigo', {
      nullable: true,
      description: 'Código de la condición de domicilio del emisor.',
    }),
    empresaCondicionDescripcion: t.exposeString('empresa_condicion_descripcion', {
      nullable: true,
      description: 'Condición de domicilio del emisor, p. ej. HABIDO.',
    }),
    observaciones: t.exposeStringList('observaciones', {
      description: 'Observaciones: los textos tal como llegan; cualquier otro elemento como su texto JSON.',
    }),
    observacionesDetalle: t.field({
      type: [Observacion],
      description: 'Las mismas observaciones, tipadas: de un objeto, su codigo y descripcion; un texto, como descripcion.',
      resolve: (r) => r.observaciones_detalle,
    }),
  }),
});

const ValidacionComprobantes = builder.objectRef<Validacion>('ValidacionComprobantes').implement({
  description: 'Resultado de una validación múltiple de comprobantes.',
  fields: (t) => ({
    cantidadDeComprobantes: t.int({
      description: 'Cantidad de comprobantes validados, según el servicio (los de las llamadas que respondieron).',
      // Each call's count was checked to be its own list's length: the sum is at most MAX_RECEIPTS.
      resolve: (r) => r.cantidad,
    }),
    comprobantes: t.field({
      type: [ComprobanteValidado],
      nullable: { list: false, items: true },
      description:
        'Un resultado por comprobante, en el orden enviado; null donde falló la llamada de ese ' +
        'comprobante (su error, en el primero de esa llamada, dice cuáles cubría en extensions.receipts).',
      // A failed call's error, on its first receipt, rejects that position alone.
      resolve: (r) => r.entries.map((e) => (e instanceof GraphQLError ? Promise.reject(e) : e)),
    }),
  }),
});

/** Both batches: every receipt sent is billed, up to the configured most (more is refused whole, for free). */
const RECEIPT_BATCH_BILLING = {
  weight: RECEIPT_PRICE,
  argument: 'comprobantes',
  list: true,
  max: (limits: { maxReceipts: number }) => limits.maxReceipts,
  per: 'comprobante',
};

builder.mutationFields((t) => ({
  validarComprobantes: t.field({
    type: ValidacionComprobantes,
    nullable: true,
    ...billed(
      `Valida comprobantes (hasta MAX_RECEIPTS, ${DEFAULT_MAX_RECEIPTS} por defecto), ` +
        `en llamadas de hasta ${RECEIPTS_PER_CALL}. REST: POST /validacion-multiple-cpe. ` +
        'Con credencialesApi (o las del gateway, SUNAT_API_*), cada uno se consulta gratis a la API de SUNAT (fuente SUNAT, 0 consultas).',
      {
        ...RECEIPT_BATCH_BILLING,
        // Through SUNAT's free API nothing is paid, unless what SUNAT cannot answer may go to the service (SUNAT_API_FALLBACK).
        freeWhen: (args, limits) =>
          limits.sunat !== undefined && !limits.sunat.fallback && (args['credencialesApi'] != null || limits.sunat.own),
      },
    ),
    args: {
      comprobantes: t.arg({ type: [ComprobanteInput], required: true, description: 'De 1 a MAX_RECEIPTS comprobantes.' }),
      credencialesApi: t.arg({
        type: CredencialesApiSunatInput,
        required: false,
        description:
          'Con ellas (o con las del gateway, SUNAT_API_*), cada comprobante se consulta a la API gratuita de SUNAT: 0 consultas.',
      }),
    },
    resolve: async (_root, { comprobantes, credencialesApi }, ctx) => {
      const bodies = valid(checkComprobantes(comprobantes, ctx.limits.maxReceipts));
      const given = credencialesApi ? valid(checkCredencialesApi(credencialesApi)) : undefined;
      const credentials = ctx.sunat?.credentialsFor(given);
      if (ctx.sunat && credentials) return throughSunat(ctx.sunat, credentials, bodies, ctx);
      return fromService(
        await validate(bodies, REST.validacion, ctx, (part, call) => ctx.upstream.validarComprobantes(part, call)),
        bodies,
      );
    },
  }),
  validarComprobantesTexto: t.field({
    type: ValidacionComprobantes,
    nullable: true,
    ...billed(
      "Igual, con cada comprobante como texto 'ruc|tipo|serie|numero|fecha|total'. REST: POST /validacion-multiple-cpe-v2.",
      RECEIPT_BATCH_BILLING,
    ),
    args: {
      comprobantes: t.arg.stringList({ required: true, description: "De 1 a MAX_RECEIPTS líneas 'ruc|tipo|serie|numero|fecha|total'." }),
      credencialesSol: t.arg({ type: CredencialesSolInput, required: false, description: 'Credenciales SOL de la empresa (opcional).' }),
    },
    resolve: async (_root, { comprobantes, credencialesSol }, ctx) => {
      const lineas = valid(checkLineas(comprobantes, ctx.limits.maxReceipts));
      const credenciales = credencialesSol ? valid(checkCredencialesSol(credencialesSol)) : undefined;
      const asked = lineas.map((line) => {
        const [ruc_emisor, codigo_tipo_documento, serie_documento, numero_documento, fecha_de_emision, total] = line.split('|') as [
          string,
          ...string[],
        ];
        return { ruc_emisor, codigo_tipo_documento, serie_documento, numero_documento, fecha_de_emision, total } as ComprobanteBody;
      });
      const answered = await validate(lineas, REST.validacionTexto, ctx, (part, call) =>
        ctx.upstream.validarComprobantesTexto(part, credenciales, call),
      );
      return fromService(answered, asked);
    },
  }),
}));
