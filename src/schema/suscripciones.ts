import { refusal } from '../errors.js';
import { UpstreamHttpError } from '../upstream/errors.js';
import { LOOKUPS } from '../upstream/lookups.js';
import type { Entrega, Suscripcion as Kept } from '../webhooks/types.js';
import { shownUrl, type Webhooks } from '../webhooks/webhooks.js';
import { billed } from './billed.js';
import { builder } from './builder.js';
import { CambioPadron, TipoCambio } from './cambios.js';
import type { Context } from './context.js';

const EstadoEntrega = builder.enumType('EstadoEntrega', {
  description:
    'ENTREGADA: el receptor respondió 2xx. REINTENTANDO: falló y se reintentará. FALLIDA: se reintentó hasta WEBHOOK_RETRY_FOR_MS.',
  values: ['ENTREGADA', 'REINTENTANDO', 'FALLIDA'] as const,
});

const EntregaRef = builder.objectRef<Entrega>('Entrega').implement({
  description: 'El último intento de entrega de una suscripción.',
  fields: (t) => ({
    webhookId: t.exposeString('webhookId', { description: 'La cabecera webhook-id: la misma en cada reintento del mensaje.' }),
    fecha: t.exposeString('fecha', { description: 'AAAA-MM-DD: la fecha del padrón del mensaje.' }),
    estado: t.field({ type: EstadoEntrega, resolve: (e) => e.estado }),
    intentos: t.exposeInt('intentos'),
    codigoHttp: t.exposeInt('codigoHttp', {
      nullable: true,
      description: 'El estado HTTP que respondió el receptor; null si no respondió.',
    }),
    en: t.exposeString('en', { description: 'ISO 8601: cuándo fue el intento.' }),
  }),
});

const SuscripcionRef = builder.objectRef<Kept>('Suscripcion').implement({
  description: 'RUC vigilados: cada cambio del padrón que los toque se envía a la URL, firmado (Standard Webhooks).',
  fields: (t) => ({
    id: t.exposeID('id'),
    url: t.string({
      description: 'La URL del receptor (sus credenciales, si las tiene, se muestran como ***).',
      resolve: (s) => shownUrl(s.url),
    }),
    tipos: t.field({ type: [TipoCambio], nullable: true, description: 'null: todos los tipos.', resolve: (s) => s.tipos }),
    rucs: t.stringList({ resolve: (s, _args, ctx) => webhooksOf(ctx).rucsOf(s.id) }),
    creadaEn: t.exposeString('creadaEn', { description: 'ISO 8601.' }),
    ultimaEntrega: t.field({ type: EntregaRef, nullable: true, resolve: (s) => s.ultimaEntrega ?? null }),
  }),
});

const SuscripcionCreada = builder.objectRef<{ sub: Kept; secreto: string }>('SuscripcionCreada').implement({
  fields: (t) => ({
    suscripcion: t.field({ type: SuscripcionRef, resolve: (c) => c.sub }),
    secreto: t.exposeString('secreto', {
      description: 'whsec_ y la clave en base64: verifica la firma de cada entrega. Se muestra solo aquí.',
    }),
  }),
});

function webhooksOf(ctx: Context): Webhooks {
  if (!ctx.webhooks) throw refusal('noSubscriptions');
  return ctx.webhooks;
}

/** Whose subscriptions these are: the signed-in subject, or the token's keyed hash; never the token. */
function ownerOf(ctx: Context): Promise<string> {
  const subject = ctx.state.signedIn ? ctx.state.signedIn.caller : undefined;
  return webhooksOf(ctx).ownerOf({ subject, token: subject ? undefined : ctx.token || undefined });
}

/**
 * A token is a caller only if the service takes it: anyone may send a made-up one, and each could
 * hold subscriptions. One lookup proves it, paid as any (a record, or none found: the plan answered).
 */
async function vouchFor(ctx: Context, ruc: string): Promise<void> {
  try {
    // Through the lookups (a token the service lately rejected is refused again without a call), asked fresh: the
    // register or the cache would prove nothing.
    await ctx.lookupFresh('ruc', ruc);
  } catch (error) {
    if (!(error instanceof UpstreamHttpError && (error.reason === 'document_not_found' || error.reason === 'quota_exceeded'))) throw error;
  }
}

builder.queryFields((t) => ({
  suscripciones: t.field({
    type: [SuscripcionRef],
    description: 'Las suscripciones de quien llama. Costo: 0.',
    resolve: async (_root, _args, ctx) => webhooksOf(ctx).list(await ownerOf(ctx)),
  }),
}));

builder.mutationFields((t) => ({
  crearSuscripcion: t.field({
    type: SuscripcionCreada,
    ...billed(
      'Vigila RUC: cada cambio del padrón que los toque se envía a la URL, firmado (Standard Webhooks). El secreto se muestra solo aquí. ' +
        'REST: POST /ruc del primer RUC, solo si el token no tiene otra suscripción ' +
        '(prueba ante el servicio que es de un plan; nunca con inicio de sesión); si no, 0.',
      { weight: LOOKUPS.ruc.price },
    ),
    args: {
      url: t.arg.string({ required: true, description: 'https:// a una dirección pública.' }),
      rucs: t.arg.stringList({ required: true }),
      tipos: t.arg({ type: [TipoCambio], required: false, description: 'Ausente o vacío: todos.' }),
    },
    resolve: async (_root, args, ctx) =>
      webhooksOf(ctx).create(await ownerOf(ctx), args, ctx.state.signedIn ? undefined : (ruc) => vouchFor(ctx, ruc)),
  }),
  cambiarSuscripcion: t.field({
    type: SuscripcionRef,
    description: 'Agrega o quita RUC de una suscripción, o cambia su URL. Costo: 0.',
    args: {
      id: t.arg.id({ required: true }),
      agregar: t.arg.stringList({ required: false }),
      quitar: t.arg.stringList({ required: false }),
      url: t.arg.string({ required: false }),
    },
    resolve: async (_root, args, ctx) => webhooksOf(ctx).change(await ownerOf(ctx), String(args.id), args),
  }),
  eliminarSuscripcion: t.boolean({
    description: 'Elimina una suscripción y sus entregas pendientes. Costo: 0.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => webhooksOf(ctx).remove(await ownerOf(ctx), String(args.id)),
  }),
}));

builder.subscriptionType({ description: 'Cambios del padrón en vivo (SSE: Accept: text/event-stream).' });

builder.subscriptionFields((t) => ({
  cambiosPadron: t.field({
    type: CambioPadron,
    description:
      'Cambios de esos RUC en cuanto este gateway los encuentra al importar un padrón nuevo (SSE). Costo: 0; 1 consulta ' +
      '(REST: POST /ruc del primer RUC) si el token no tiene suscripción ni fue probado en la última hora: prueba que es de un plan.',
    args: { rucs: t.arg.stringList({ required: true }), tipos: t.arg({ type: [TipoCambio], required: false }) },
    subscribe: async (_root, args, ctx) => {
      if (!ctx.padron) throw refusal('padronOffChanges');
      const vouch = ctx.state.signedIn ? undefined : (ruc: string) => vouchFor(ctx, ruc);
      return webhooksOf(ctx).watch(await ownerOf(ctx), args.rucs, args.tipos ?? undefined, vouch);
    },
    resolve: (cambio) => cambio,
  }),
}));
