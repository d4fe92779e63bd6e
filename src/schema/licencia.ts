import { LOOKUPS } from '../upstream/lookups.js';
import type { LicenciaRecord } from '../upstream/schemas.js';
import type { Received } from '../data/lookups.js';
import { CONSULTADO_EN, consultadoEn, loadAnswered } from './received.js';
import { billed } from './billed.js';
import { checkNumLicencia } from './validation.js';
import { builder } from './builder.js';
import { valid } from './input.js';

export const LicenciaConducir = builder.objectRef<Received<LicenciaRecord>>('LicenciaConducir').implement({
  description: 'Titular de una licencia de conducir (REST: POST /licencia-conducir; fuentes: MTC y SUNAT).',
  fields: (t) => ({
    numLicencia: t.exposeString('num_licencia', { description: 'Número de licencia, tal como lo devuelve el servicio.' }),
    tipoDocumento: t.exposeString('tipo_documento', { nullable: true, description: 'Tipo de documento del titular, p. ej. DNI.' }),
    numeroDocumento: t.exposeString('numero_documento', { nullable: true, description: 'Número de documento del titular.' }),
    nombres: t.exposeString('nombres', { nullable: true, description: 'Nombres.' }),
    apellidoPaterno: t.exposeString('apellido_paterno', { nullable: true, description: 'Apellido paterno.' }),
    apellidoMaterno: t.exposeString('apellido_materno', { nullable: true, description: 'Apellido materno.' }),
    consultadoEn: t.string({ description: CONSULTADO_EN, resolve: consultadoEn }),
  }),
});

builder.queryFields((t) => ({
  licencia: t.field({
    type: LicenciaConducir,
    nullable: true,
    ...billed('Titular de una licencia de conducir (no disponible en el plan gratuito). REST: POST /licencia-conducir.', {
      weight: LOOKUPS.licencia.price,
      argument: 'numLicencia',
      key: checkNumLicencia,
    }),
    args: { numLicencia: t.arg.string({ required: true, description: 'Número de licencia, p. ej. Q12345678.' }) },
    resolve: (_root, { numLicencia }, ctx, info) =>
      loadAnswered(ctx.loaders.of('licencia').load(valid(checkNumLicencia(numLicencia))), ctx, info),
  }),
}));
