import {
  DirectiveLocation,
  GraphQLBoolean,
  GraphQLDirective,
  GraphQLEnumType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLScalarType,
  GraphQLString,
} from 'graphql';

/** The Federation version the subgraph links: 2.9 is the first with `@cost` and `@listSize`. */
export const FEDERATION_URL = 'https://specs.apollo.dev/federation/v2.9';

/**
 * The definitions of the federation directives the schema applies (`@link` on the schema,
 * `@key` on the entities), as the link and federation specifications write them, so that the
 * served schema and schema.graphql declare every directive they use: a client's codegen run
 * against the file accepts it. A router reads the subgraph's own SDL (`_service`), which leaves
 * them out.
 */
export const federationDirectives = [
  new GraphQLDirective({
    name: 'link',
    description: 'Enlaza una especificación (la de federación) e importa sus directivas.',
    isRepeatable: true,
    locations: [DirectiveLocation.SCHEMA],
    args: {
      url: { type: new GraphQLNonNull(GraphQLString) },
      as: { type: GraphQLString },
      import: { type: new GraphQLList(new GraphQLScalarType({ name: 'link__Import' })) },
      for: { type: new GraphQLEnumType({ name: 'link__Purpose', values: { SECURITY: {}, EXECUTION: {} } }) },
    },
  }),
  new GraphQLDirective({
    name: 'key',
    description: 'Los campos que identifican a una entidad de la federación.',
    isRepeatable: true,
    locations: [DirectiveLocation.OBJECT, DirectiveLocation.INTERFACE],
    args: {
      fields: { type: new GraphQLNonNull(new GraphQLScalarType({ name: 'federation__FieldSet' })) },
      resolvable: { type: GraphQLBoolean, defaultValue: true },
    },
  }),
];
