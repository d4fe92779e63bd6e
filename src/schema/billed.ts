import { GraphQLBoolean, GraphQLDirective, GraphQLInt, GraphQLList, GraphQLNonNull, GraphQLString, DirectiveLocation } from 'graphql';

/**
 * The cost directives of the GraphQL cost directive specification, in the form Apollo Router's
 * and Hive Gateway's demand control read them: `weight` an Int (the specification writes a
 * String; Apollo's Int is what the gateways in use parse).
 */
export const costDirectives = [
  new GraphQLDirective({
    name: 'cost',
    description: 'Consultas del plan que cuesta cada elemento que el campo consulta o envía al servicio.',
    locations: [
      DirectiveLocation.ARGUMENT_DEFINITION,
      DirectiveLocation.ENUM,
      DirectiveLocation.FIELD_DEFINITION,
      DirectiveLocation.INPUT_FIELD_DEFINITION,
      DirectiveLocation.OBJECT,
      DirectiveLocation.SCALAR,
    ],
    args: { weight: { type: new GraphQLNonNull(GraphQLInt) } },
  }),
  new GraphQLDirective({
    name: 'listSize',
    description: 'El argumento cuya lista dice cuántos elementos consulta o envía el campo.',
    locations: [DirectiveLocation.FIELD_DEFINITION],
    args: {
      assumedSize: { type: GraphQLInt },
      slicingArguments: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)) },
      sizedFields: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)) },
      requireOneSlicingArgument: { type: GraphQLBoolean, defaultValue: true },
    },
  }),
];

/** The directives' arguments, for the builder's `Directives` type. */
export type CostDirectives = {
  cost: { locations: 'FIELD_DEFINITION'; args: { weight: number } };
  listSize: {
    locations: 'FIELD_DEFINITION';
    args: { assumedSize?: number; slicingArguments?: string[]; sizedFields?: string[]; requireOneSlicingArgument: boolean };
  };
};

/** Limits that are settings, which a declaration's `max` may read. */
export interface RuntimeLimits {
  maxReceipts: number;
  maxRucsPerList: number;
  /** Whether the gateway answers this key of this type itself (SUNAT's register holds the RUC): it costs nothing. */
  held?: ((type: string, key: string) => boolean) | undefined;
  /** SUNAT's free receipt validation: whether the gateway has credentials of its own, and sends to the paid service what SUNAT could not answer. */
  sunat?: { readonly own: boolean; readonly fallback: boolean } | undefined;
}

/** How a field that reaches the upstream spends plan queries: what `billed` declares, and the cost limit reads. */
export interface Billing {
  /** Plan queries per item looked up or sent (from PLAN_COST). */
  weight: number;
  /**
   * The argument that holds the item or, with `list`, the items. Absent: the items of the field
   * it is selected under (the same document, looked up again elsewhere).
   */
  argument?: string;
  /**
   * The argument is a list. With a fixed `max`, the field returns one item per item given, and
   * says so to a router as `@listSize(assumedSize: max)`: the spec's `slicingArguments` name an
   * Int argument (a page size), which a list of keys is not, and composition refuses it.
   */
  list?: boolean;
  /** The item an omitted argument stands for (today's date): priced as if given. */
  absent?: () => string;
  /** A list longer than this is refused whole, before any call: a number, or read from the configured limits. */
  max?: number | ((limits: RuntimeLimits) => number);
  /**
   * Checks and normalizes one item: an invalid item fails locally and costs nothing, and a
   * normalized item is looked up once per operation for every field returning the same type.
   * Without it, every item sent counts.
   */
  key?: (value: string) => { ok: true; value: string } | { ok: false };
  /** At most this many distinct items the gateway does not hold itself (RUCs outside SUNAT's register): more is refused whole. */
  paidMax?: number;
  /** What one item is, in the description's cost sentence: `comprobante` gives "1 consulta por comprobante". */
  per?: string;
  /** Whether the field, with these arguments, spends nothing (receipts SUNAT validates for free). */
  freeWhen?: (args: Record<string, unknown>, limits: RuntimeLimits) => boolean;
  /**
   * The field returns a list for each item (a company's representatives): the fields below it
   * are priced as if it held this many, and a router is told so as `@listSize(assumedSize)`.
   */
  assumedSize?: number;
  /**
   * A connection whose page size is this Int argument (`first`): the fields below its nodes are
   * priced as if the page were full, and a router is told so as `@listSize(slicingArguments,
   * sizedFields: ["edges"])`.
   */
  sizedBy?: { argument: string; max: number };
  /**
   * Federation's `_entities`: each item is a representation, priced by its `__typename`'s
   * entity (absent: not one of ours, costs nothing) and looked up by its key field.
   */
  references?: Readonly<Record<string, EntityBilling>>;
}

/** How one representation of an entity spends: its type's price, and the key field it is looked up by. */
export interface EntityBilling {
  field: string;
  weight: number;
  key: NonNullable<Billing['key']>;
}

/**
 * Options for a Pothos field that reaches the upstream: its description ending in what it
 * costs, its `@cost` (and `@listSize`), and what the cost limit needs.
 */
export function billed(description: string, billing: Billing) {
  const queries = `${billing.weight} ${billing.weight === 1 ? 'consulta' : 'consultas'}`;
  // A router prices the items that may be paid: `paidMax` of a long list, else all of a list up to a fixed `max`.
  const paidAtMost = billing.paidMax ?? (typeof billing.max === 'number' ? billing.max : undefined);
  return {
    description: `${description} Costo: ${queries}${billing.per ? ` por ${billing.per}` : ''}.`,
    directives: {
      cost: { weight: billing.weight },
      ...(billing.list && paidAtMost !== undefined
        ? { listSize: { assumedSize: paidAtMost, requireOneSlicingArgument: false } }
        : billing.assumedSize
          ? { listSize: { assumedSize: billing.assumedSize, requireOneSlicingArgument: false } }
          : billing.sizedBy
            ? { listSize: { slicingArguments: [billing.sizedBy.argument], sizedFields: ['edges'], requireOneSlicingArgument: false } }
            : {}),
    },
    extensions: { billing },
  };
}

/** The declaration of a field, when it reaches the upstream. */
export function billingOf(field: { extensions?: Readonly<Record<string, unknown>> | null }): Billing | undefined {
  return field.extensions?.['billing'] as Billing | undefined;
}
