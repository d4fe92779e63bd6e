import { GraphQLDeferDirective, GraphQLStreamDirective, MapperKind, mapSchema } from '@graphql-tools/utils';
import { specifiedDirectives } from 'graphql';
import { costDirectives } from './billed.js';
import { builder } from './builder.js';
import { billedEntities } from './entities.js';
import { FEDERATION_URL, federationDirectives } from './federation.js';
import './errors.js';
import './contribuyente.js';
import './licencia.js';
import './persona.js';
import './empresa.js';
import './tipo-de-cambio.js';
import './buscar.js';
import './cambios.js';
import './suscripciones.js';
import './comprobantes.js';
import './validaciones.js';

/**
 * The schema as served: a Federation v2 subgraph (`_service`, `_entities`) that works on its own
 * too. It declares every directive the server serves, @defer and @stream (which Yoga's plugin
 * would otherwise add unseen) and federation's among them. The given directives replace
 * graphql-js's own (@skip, @include, ...) unless they are named too.
 */
const subgraph = builder.toSubGraphSchema({
  linkUrl: FEDERATION_URL,
  // @cost and @listSize imported from Federation 2.9 are what composition keeps, and a router's demand control reads.
  federationDirectives: ['@key', '@cost', '@listSize'],
  directives: [...specifiedDirectives, GraphQLDeferDirective, GraphQLStreamDirective, ...costDirectives, ...federationDirectives],
});

export const schema = mapSchema(subgraph, {
  [MapperKind.QUERY_ROOT_FIELD]: (field, name) => (name === '_entities' ? billedEntities(field) : field),
});
