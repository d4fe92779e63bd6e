import { refusal } from '../errors.js';
import { MAX_TEXT } from '../padron/search.js';
import { billed } from './billed.js';
import { builder } from './builder.js';
import { connectionOf } from './connection.js';
import { Contribuyente } from './contribuyente.js';

/** A page holds at most this many taxpayers: the fields below them are priced as if it were full. */
export const MAX_PAGE = 50;
/** Values a filter list may hold, and their length: SUNAT's estados and condiciones are a dozen short texts. */
const MAX_VALUES = 20;
const MAX_VALUE_LENGTH = 60;

const TipoContribuyente = builder.enumType('TipoContribuyente', {
  description: 'PERSONA_NATURAL: RUC 10, 15, 16 y 17. EMPRESA: RUC 20.',
  values: ['PERSONA_NATURAL', 'EMPRESA'] as const,
});

const FiltroBusqueda = builder.inputType('FiltroBusqueda', {
  description: 'Filtros de una búsqueda en el padrón; cada uno que se da debe cumplirse.',
  fields: (t) => ({
    estados: t.stringList({
      required: false,
      description: 'Estados del padrón, enteros (p. ej. ACTIVO), comparados sin mayúsculas ni tildes.',
    }),
    condiciones: t.stringList({ required: false, description: 'Condiciones de domicilio (p. ej. HABIDO; no incluye NO HABIDO), igual.' }),
    ubigeo: t.string({ required: false, description: 'Ubigeo de 2, 4 o 6 dígitos: un departamento, una provincia o un distrito.' }),
    tipo: t.field({ type: TipoContribuyente, required: false }),
  }),
});

const ContribuyenteConnection = connectionOf('Contribuyente', Contribuyente);

/** The filter's values, refused when they could only be a mistake or an attack (each costs a comparison per candidate). */
function checkedFilter(
  filtro:
    | { estados?: string[] | null; condiciones?: string[] | null; ubigeo?: string | null; tipo?: 'PERSONA_NATURAL' | 'EMPRESA' | null }
    | null
    | undefined,
) {
  if (!filtro) return {};
  for (const list of [filtro.estados, filtro.condiciones]) {
    if (list && (list.length > MAX_VALUES || list.some((v) => v.length > MAX_VALUE_LENGTH)))
      throw refusal('filterValues', { values: MAX_VALUES, length: MAX_VALUE_LENGTH });
  }
  if (filtro.ubigeo != null && !/^(\d{2}|\d{4}|\d{6})$/.test(filtro.ubigeo)) throw refusal('filterUbigeo');
  return filtro;
}

builder.queryFields((t) => ({
  buscarContribuyentes: t.field({
    type: ContribuyenteConnection,
    ...billed('Busca en el padrón que guarda el gateway por nombre o razón social, o por RUC o DNI.', {
      weight: 0,
      sizedBy: { argument: 'first', max: MAX_PAGE },
    }),
    args: {
      texto: t.arg.string({
        required: true,
        description:
          `Palabras del nombre, en cualquier orden, cada una el comienzo de una palabra distinta (com andi: COMERCIAL ANDINA ` +
          `S.A.C.); 11 dígitos: ese RUC; 8 dígitos: el RUC 10 de ese DNI. De 3 letras o dígitos a ${MAX_TEXT} caracteres.`,
      }),
      filtro: t.arg({ type: FiltroBusqueda, required: false }),
      first: t.arg.int({ required: false, defaultValue: 10, description: `Cuántos por página: 1 a ${MAX_PAGE}.` }),
      after: t.arg.string({ required: false, description: 'El endCursor de la página anterior.' }),
    },
    resolve: async (_root, { texto, filtro, first, after }, ctx) => {
      const size = first ?? 10;
      if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE) throw refusal('pageSize', { max: MAX_PAGE });
      const filter = checkedFilter(filtro);
      if (!ctx.padron) throw refusal('padronOffSearch');
      const page = await ctx.padron.search(texto, filter, size, after ?? undefined);
      return { nodes: page.records, cursors: page.cursors, hasNextPage: page.hasNextPage, endCursor: page.endCursor };
    },
  }),
}));
