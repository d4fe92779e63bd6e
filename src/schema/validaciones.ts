import { refusal } from '../errors.js';
import { errorFrom, TooManyJobs, type JobRow, type ValidationJobs } from '../sunat/jobs.js';
import type { Job } from '../sunat/job-store.js';
import { builder } from './builder.js';
import {
  ComprobanteInput,
  CredencialesApiSunatInput,
  ComprobanteValidado,
  sunatValidado,
  unanswered,
  type Validado,
} from './comprobantes.js';
import { connectionOf, type StorePage } from './connection.js';
import type { Context } from './context.js';
import { valid } from './input.js';
import { checkCredencialesApi, checkJobList, checkTexto } from './validation.js';

/** The most receipts one page of a job answers. */
const MAX_PAGE = 1000;

const EstadoValidacionMasiva = builder.enumType('EstadoValidacionMasiva', {
  description: 'En qué va una validación masiva.',
  values: {
    EN_COLA: { description: 'Creada; espera su turno.' },
    EN_CURSO: { description: 'Sus comprobantes se consultan a SUNAT.' },
    TERMINADA: { description: 'Cada comprobante tiene su respuesta (o su error).' },
    CANCELADA: { description: 'Detenida por quien la creó; lo validado hasta entonces se conserva.' },
    FALLIDA: { description: 'No pudo seguir (SUNAT rechazó las credenciales, por ejemplo).' },
  } as const,
});

const ResumenValidacion = builder.objectRef<Job['resumen']>('ResumenValidacion').implement({
  description: 'Los comprobantes validados hasta ahora, por su estado (cada posición cuenta, repetidos incluidos).',
  fields: (t) => ({
    aceptados: t.exposeInt('aceptados'),
    anulados: t.exposeInt('anulados'),
    autorizados: t.exposeInt('autorizados'),
    noAutorizados: t.exposeInt('noAutorizados'),
    noExisten: t.exposeInt('noExisten', { description: 'NO EXISTE: a menudo un error en el importe o la fecha, o el retraso de SUNAT.' }),
    conError: t.exposeInt('conError', { description: 'Sin estado: SUNAT lo rechazó o no respondió, o un código desconocido.' }),
  }),
});

const ComprobanteValidadoConnection = connectionOf('ComprobanteValidado', ComprobanteValidado);

export const ValidacionMasiva = builder.objectRef<Job>('ValidacionMasiva').implement({
  description: 'Una validación de comprobantes en segundo plano, con la API gratuita de SUNAT.',
  fields: (t) => ({
    id: t.exposeID('id'),
    estado: t.field({ type: EstadoValidacionMasiva, resolve: (j) => j.estado }),
    total: t.exposeInt('total', { description: 'Comprobantes enviados, repetidos incluidos.' }),
    validados: t.exposeInt('validados', { description: 'Comprobantes respondidos hasta ahora, sea cual sea la respuesta.' }),
    resumen: t.field({ type: ResumenValidacion, resolve: (j) => j.resumen }),
    creadaEn: t.exposeString('creadaEn', { description: 'ISO 8601, UTC.' }),
    terminadaEn: t.exposeString('terminadaEn', { nullable: true, description: 'ISO 8601, UTC; null mientras no termina.' }),
    motivo: t.exposeString('motivo', { nullable: true, description: 'Por qué falló, si falló.' }),
    comprobantes: t.field({
      type: ComprobanteValidadoConnection,
      description: `Los comprobantes en el orden enviado, con su respuesta (o sin estados mientras no la tienen); first de 1 a ${MAX_PAGE}.`,
      args: {
        first: t.arg.int({ required: false, defaultValue: 100 }),
        after: t.arg.string({ required: false }),
      },
      resolve: async (job, { first, after }, ctx) => {
        const size = first ?? 100;
        if (size < 1 || size > MAX_PAGE) throw refusal('pageSize', { max: MAX_PAGE });
        const from = after == null ? 0 : positionOf(after, job.total) + 1;
        const rows = await jobsOf(ctx).rows(job, from, size);
        const nodes = rows.map(validadoOf);
        const cursors = rows.map((r) => cursorOf(r.position));
        const hasNextPage = from + rows.length < job.total;
        return { nodes, cursors, hasNextPage, endCursor: cursors.at(-1) ?? null } satisfies StorePage<Validado>;
      },
    }),
  }),
});

/** A position of the job as a cursor: opaque to the caller, checked when it comes back. */
const cursorOf = (position: number) => Buffer.from(`vm:${position}`).toString('base64url');

function positionOf(cursor: string, total: number): number {
  const match = /^vm:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString());
  const position = match ? Number(match[1]) : NaN;
  if (!(position >= 0 && position < total)) throw refusal('jobCursor');
  return position;
}

/** A position's receipt as `ComprobanteValidado`: SUNAT's answer, its error, or, not yet asked, the receipt alone. */
function validadoOf({ receipt }: JobRow): Validado {
  const { asked, answer } = receipt;
  if (!answer) return unanswered(asked);
  return sunatValidado('receipt' in answer ? answer : { error: errorFrom(answer.error) }, asked);
}

function jobsOf(ctx: Context): ValidationJobs {
  if (!ctx.jobs) throw refusal('jobsOff');
  return ctx.jobs;
}

/** The caller, as the owner of its jobs: the signed-in subject, else its token. */
async function ownerOf(ctx: Context): Promise<string> {
  const subject = ctx.state.signedIn?.caller;
  if (!subject && !ctx.token) throw refusal('jobsNeedToken');
  return jobsOf(ctx).ownerOf({ subject, token: ctx.token });
}

async function jobOf(ctx: Context, id: string): Promise<Job> {
  const job = await jobsOf(ctx).get(await ownerOf(ctx), id);
  if (!job) throw refusal('jobNotFound');
  return job;
}

builder.queryFields((t) => ({
  validacionMasiva: t.field({
    type: ValidacionMasiva,
    nullable: true,
    description: 'Una validación masiva de quien llama; null (NOT_FOUND) si no existe o es de otro. Costo: 0.',
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, { id }, ctx) => jobOf(ctx, String(id)),
  }),
  validacionesMasivas: t.field({
    type: [ValidacionMasiva],
    description: 'Las validaciones masivas de quien llama, la más reciente primero. Costo: 0.',
    resolve: async (_root, _args, ctx) => jobsOf(ctx).list(await ownerOf(ctx)),
  }),
}));

builder.mutationFields((t) => ({
  crearValidacionMasiva: t.field({
    type: ValidacionMasiva,
    description:
      'Valida en segundo plano hasta VALIDACION_MASIVA_MAX comprobantes con la API gratuita de SUNAT; responde al instante ' +
      '(EN_COLA). Con las credencialesApi de la llamada o las del gateway (SUNAT_API_*). Costo: 0 consultas.',
    args: {
      comprobantes: t.arg({ type: [ComprobanteInput], required: false, description: 'Los comprobantes; o texto.' }),
      texto: t.arg.string({
        required: false,
        description:
          "Una línea 'ruc|tipo|serie|numero|fecha|total' por comprobante (fecha AAAA-MM-DD o dd/mm/aaaa); las vacías se ignoran.",
      }),
      credencialesApi: t.arg({ type: CredencialesApiSunatInput, required: false }),
    },
    resolve: async (_root, { comprobantes, texto, credencialesApi }, ctx) => {
      const jobs = jobsOf(ctx);
      if ((comprobantes == null) === (texto == null)) throw refusal('jobOneInput');
      const { max } = jobs.settings;
      const receipts = valid(comprobantes ? checkJobList(comprobantes, max) : await checkTexto(texto!, max));
      const given = credencialesApi ? valid(checkCredencialesApi(credencialesApi)) : undefined;
      const credentials = ctx.sunat?.credentialsFor(given);
      if (!credentials) throw refusal('jobNeedsCredentials');
      const owner = await ownerOf(ctx);
      try {
        return await jobs.create(owner, receipts, credentials, given === undefined);
      } catch (error) {
        // SUNAT refusing the credentials is worded where every failure is (src/errors.ts).
        if (error instanceof TooManyJobs) throw refusal('tooManyJobs', { max: error.max });
        throw error;
      }
    },
  }),
  cancelarValidacionMasiva: t.field({
    type: ValidacionMasiva,
    description: 'Detiene una validación masiva de quien llama; lo validado se conserva. Costo: 0.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, { id }, ctx) => {
      const job = await jobsOf(ctx).cancel(await ownerOf(ctx), String(id));
      if (!job) throw refusal('jobNotFound');
      return job;
    },
  }),
}));

builder.subscriptionFields((t) => ({
  validacionMasiva: t.field({
    type: ValidacionMasiva,
    description:
      'El avance de una validación masiva (SSE): su estado al suscribirse, después a lo más uno por segundo, y el final. Costo: 0.',
    args: { id: t.arg.id({ required: true }) },
    subscribe: async (_root, { id }, ctx) => {
      const feed = await jobsOf(ctx).watch(await ownerOf(ctx), String(id));
      if (!feed) throw refusal('jobNotFound');
      return feed;
    },
    resolve: (job) => job,
  }),
}));
