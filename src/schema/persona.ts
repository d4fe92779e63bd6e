import { LOOKUPS } from '../upstream/lookups.js';
import type { DniRecord } from '../upstream/schemas.js';
import type { Received } from '../data/lookups.js';
import type { GraphQLResolveInfo } from 'graphql';
import type { Context } from './context.js';
import { CONSULTADO_EN, consultadoEn, loadAnswered } from './received.js';
import { billed } from './billed.js';
import { checkDni, checkRuc, dniOfRuc, rucOfDni } from './validation.js';
import { builder } from './builder.js';
import { asksOnly } from './selection.js';
import { valid } from './input.js';
import { Contribuyente } from './contribuyente.js';
import { LicenciaConducir } from './licencia.js';

/** Where a record came from: the REST service (or the gateway's cache of it), or SUNAT's register kept by the gateway. */
export const Fuente = builder.enumType('Fuente', {
  description: 'De dónde vino el registro.',
  values: {
    SERVICIO: { description: 'El servicio REST (o la caché del gateway de sus respuestas).' },
    PADRON: { description: 'El padrón público de SUNAT que guarda el gateway.' },
  },
});

export const Persona = builder.objectRef<Received<DniRecord>>('Persona').implement({
  description: 'Persona por DNI (REST: POST /dni; del padrón reducido de SUNAT: sin menores, dirección ni fecha de nacimiento).',
  fields: (t) => ({
    dni: t.exposeString('numero', { description: 'DNI, 8 dígitos.' }),
    nombreCompleto: t.exposeString('nombre_completo', { nullable: true, description: 'Nombre completo.' }),
    nombres: t.exposeString('nombres', { nullable: true, description: 'Nombres.' }),
    apellidoPaterno: t.exposeString('apellido_paterno', { nullable: true, description: 'Apellido paterno.' }),
    apellidoMaterno: t.exposeString('apellido_materno', { nullable: true, description: 'Apellido materno.' }),
    codigoVerificacion: t.exposeString('codigo_verificacion', {
      nullable: true,
      description: 'Código de verificación del DNI: un carácter.',
    }),
    consultadoEn: t.string({ nullable: true, description: CONSULTADO_EN, resolve: consultadoEn }),
    fuente: t.field(fromService),
    contribuyente: t.field({
      type: Contribuyente,
      nullable: true,
      ...billed(
        'El RUC de la persona (10 + DNI + dígito verificador, calculado aquí) (REST: POST /ruc); null con DOCUMENT_NOT_FOUND cuando no tiene.',
        { weight: LOOKUPS.ruc.price, key: rucOfDni },
      ),
      resolve: (p, _args, ctx, info) => loadAnswered(ctx.loaders.of('ruc').load(valid(checkRuc(valid(rucOfDni(p.numero))))), ctx, info),
    }),
  }),
});

builder.queryFields((t) => ({
  persona: t.field({
    type: Persona,
    nullable: true,
    ...billed('Persona por DNI (8 dígitos). REST: POST /dni.', { weight: LOOKUPS.dni.price, argument: 'dni', key: checkDni }),
    args: { dni: t.arg.string({ required: true, description: 'DNI de 8 dígitos.' }) },
    resolve: (_root, { dni }, ctx, info) => personaBy(valid(checkDni(dni)), ctx, info),
  }),
}));

/** The person a record names by its document, when the document is a DNI (a licence's holder, a representative); null without a call otherwise. */
export function personaNamed(tipo: string | null, numero: string | null, ctx: Context, info: GraphQLResolveInfo) {
  const dni = tipo?.trim().toUpperCase() === 'DNI' && numero ? checkDni(numero) : undefined;
  return dni?.ok ? personaBy(dni.value, ctx, info) : null;
}

/** What SUNAT's register holds of a person (their RUC 10's name): an operation asking only these is answered from it. */
const REGISTER_FIELDS = new Set(['dni', 'nombreCompleto', 'fuente', 'consultadoEn', 'contribuyente']);

/** A person by DNI: from SUNAT's register when it holds their RUC and the operation asks only what it holds, else POST /dni. */
function personaBy(dni: string, ctx: Context, info: GraphQLResolveInfo): Received<DniRecord> | Promise<Received<DniRecord>> {
  const ruc = rucOfDni(dni);
  const local = ruc.ok && asksOnly(info, REGISTER_FIELDS) ? ctx.loaders.fromRegister(ruc.value, 'dni') : undefined;
  if (!local) return loadAnswered(ctx.loaders.of('dni').load(dni), ctx, info);
  const { nombre_o_razon_social, receivedAt, fuente } = local;
  const persona = { numero: dni, nombre_completo: nombre_o_razon_social, receivedAt, fuente };
  return { ...persona, nombres: null, apellido_paterno: null, apellido_materno: null, codigo_verificacion: null };
}

/** How a person named by a record's document is declared: priced one per record, as its DNI is known only once the record is. */
export const PERSONA_NAMED = (who: string) =>
  billed(`${who}, cuando su documento es un DNI (REST: POST /dni); null sin llamada en otro caso.`, { weight: LOOKUPS.dni.price });

/** Where a record came from, as every record type says it: the REST service unless the record says SUNAT's register. */
const fromService = {
  type: Fuente,
  description: 'De dónde vino este registro.',
  resolve: (r: Received) => r.fuente ?? ('SERVICIO' as const),
};

builder.objectFields(Contribuyente, (t) => ({
  fuente: t.field(fromService),
  persona: t.field({
    type: Persona,
    nullable: true,
    ...billed('La persona de un RUC 10 (su DNI son los dígitos 3 a 10) (REST: POST /dni); null sin llamada para cualquier otro RUC.', {
      weight: LOOKUPS.dni.price,
      key: dniOfRuc,
    }),
    resolve: (r, _args, ctx, info) => {
      const dni = dniOfRuc(r.ruc);
      return dni.ok ? personaBy(dni.value, ctx, info) : null;
    },
  }),
}));

builder.objectFields(LicenciaConducir, (t) => ({
  titular: t.field({
    type: Persona,
    nullable: true,
    ...PERSONA_NAMED('El titular'),
    resolve: (l, _args, ctx, info) => personaNamed(l.tipo_documento, l.numero_documento, ctx, info),
  }),
}));
