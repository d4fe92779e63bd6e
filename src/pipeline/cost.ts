import {
  Kind,
  getArgumentValues,
  getNamedType,
  getOperationAST,
  getVariableValues,
  isObjectType,
  isUnionType,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLUnionType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { billingOf, type Billing, type RuntimeLimits } from '../schema/billed.js';

/** A field of the operation that reaches the upstream, as its schema declaration (`billed`) says. */
interface Term {
  /** The field as written, and its definition: its arguments are read as the resolver gets them. */
  node: FieldNode;
  def: GraphQLField<unknown, unknown>;
  billing: Billing;
  /** The type it returns: fields that return the same type look each key up once between them. */
  shares: string;
  /** The billed field it is selected under, whose items it looks up again when it has no argument of its own. */
  parent: Term | undefined;
  /** The object type it is selected on: under federation's `_entities`, it takes only the representations of that type. */
  on: string;
}

/**
 * An operation's terms, and its estimate when it declares no variable (then the estimate is
 * the same on every run, and is worked out once).
 */
interface Plan {
  operation: OperationDefinitionNode | undefined;
  terms: Term[];
  fixed: number | undefined;
  /** Some variable has a default value: variables are coerced (defaults filled in) before estimating. */
  defaults: boolean;
}

/** Plans per document and operation name: parsed documents are cached, so each is walked once. */
const plans = new WeakMap<DocumentNode, Map<string, Plan>>();

/**
 * The most plan queries an operation could spend, from its document and variables, before
 * anything runs: the sum, over the fields the schema declares with `@cost` (src/schema/billed.ts),
 * of the weight times the items each looks up or sends. Each argument is read as the resolver
 * will get it (graphql-js's own coercion: variables, their default values, inline literals,
 * lists mixing both), with the resolvers' rules: keys that fail their check cost nothing (they
 * fail locally), a list over its `max` costs nothing (refused whole), and a key is counted once
 * for all the fields that return the same type (one call per key per operation). `@skip` and
 * `@include` are ignored: the bound stays an upper bound.
 */
export function estimateCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: unknown,
  limits: RuntimeLimits,
): number {
  let byName = plans.get(document);
  if (!byName) plans.set(document, (byName = new Map()));
  const key = operationName ?? '';
  let plan = byName.get(key);
  if (!plan) {
    const operation = getOperationAST(document, operationName ?? undefined) ?? undefined;
    const terms = operation ? planOf(schema, document, operation) : [];
    const defaults = operation?.variableDefinitions?.some((v) => v.defaultValue !== undefined) ?? false;
    plan = { operation, terms, fixed: undefined, defaults };
    if (!operation?.variableDefinitions?.length) plan.fixed = estimateTerms(terms, {}, limits);
    byName.set(key, plan);
  }
  if (plan.fixed !== undefined) return plan.fixed;
  const raw = typeof variables === 'object' && variables !== null ? (variables as Record<string, unknown>) : {};
  // Without default values, the variables sent are what execution will see (a value of the
  // wrong type fails execution before any resolver): coercing them here would only cost time.
  if (!plan.defaults) return estimateTerms(plan.terms, raw, limits);
  // The variables as execution will see them, defaults filled in; when they fail to coerce, nothing runs.
  const coerced = getVariableValues(schema, plan.operation!.variableDefinitions!, raw, { maxErrors: 1 });
  return coerced.errors ? 0 : estimateTerms(plan.terms, coerced.coerced, limits);
}

/**
 * An item whose key is known only once the field above it has answered (a licence's holder's
 * DNI): it counts as one item, never shared with another field's keys.
 */
const UNKNOWN = Symbol('unknown key');

/** The terms' cost; parents come before the fields selected under them. */
function estimateTerms(terms: Term[], variables: Record<string, unknown>, limits: RuntimeLimits): number {
  const shared = new Map<string, { weight: number; keys: Set<string> }>();
  const itemsOf = new Map<Term, readonly unknown[]>();
  /** A referencing field's keys by the type each representation names. */
  const referencedOf = new Map<Term, Map<string, string[]>>();
  let total = 0;
  for (const term of terms) {
    const { billing } = term;
    let items: readonly unknown[];
    if (billing.sizedBy) {
      const page = pageOf(term, billing.sizedBy, variables);
      itemsOf.set(term, page);
      total += billing.weight * page.length;
      continue;
    }
    if (billing.argument === undefined) {
      const byType = term.parent && referencedOf.get(term.parent);
      items = !term.parent ? [undefined] : byType ? (byType.get(term.on) ?? []) : (itemsOf.get(term.parent) ?? []);
    } else {
      let value: unknown;
      try {
        const args = getArgumentValues(term.def, term.node, variables);
        if (billing.freeWhen?.(args, limits)) {
          itemsOf.set(term, []);
          continue;
        }
        value = args[billing.argument];
      } catch {
        itemsOf.set(term, []);
        continue; // the field fails before its resolver runs
      }
      // One item given where a list is expected is a list of one, as graphql-js coerces it.
      items = !billing.list ? [value ?? billing.absent?.()] : Array.isArray(value) ? value : value == null ? [] : [value];
      const max = typeof billing.max === 'function' ? billing.max(limits) : billing.max;
      if (max !== undefined && items.length > max) items = [];
    }
    if (billing.references) {
      const byType = new Map<string, string[]>();
      referencedOf.set(term, byType);
      itemsOf.set(term, referencedKeys(items, billing.references, shared, byType));
      continue;
    }
    if (!billing.key) {
      // A link with no key of its own looks up what the records above it name: unknown until then.
      itemsOf.set(term, billing.argument === undefined && term.parent ? items.map(() => UNKNOWN) : items);
      total += billing.weight * items.length;
      continue;
    }
    const { keys, paid, unknown } = keysOf(items, term, billing.key, limits);
    total += billing.weight * unknown;
    // More items than the gateway may pay for are refused whole, before the cost limit.
    if (billing.paidMax !== undefined && paid.size > billing.paidMax) {
      itemsOf.set(term, []);
      continue;
    }
    // Each key's answer is a list of up to `assumedSize` records, each unknown until it comes.
    itemsOf.set(term, billing.assumedSize ? keys.flatMap(() => Array<typeof UNKNOWN>(billing.assumedSize!).fill(UNKNOWN)) : keys);
    let group = shared.get(term.shares);
    if (!group) shared.set(term.shares, (group = { weight: billing.weight, keys: new Set() }));
    group.weight = Math.max(group.weight, billing.weight);
    for (const key of paid) group.keys.add(key);
  }
  for (const group of shared.values()) total += group.weight * group.keys.size;
  return total;
}

/**
 * The keys of a field's items that pass their check (an unknown one, counted, for each item known
 * only once the field above has answered), and of them those the gateway does not answer itself.
 */
function keysOf(items: readonly unknown[], term: Term, key: NonNullable<Billing['key']>, limits: RuntimeLimits) {
  const keys: (string | typeof UNKNOWN)[] = [];
  const paid = new Set<string>();
  let unknown = 0;
  for (const item of items) {
    if (item === UNKNOWN) {
      keys.push(UNKNOWN);
      unknown++;
      continue;
    }
    const checked = typeof item === 'string' ? key(item) : undefined;
    if (!checked?.ok) continue;
    keys.push(checked.value);
    // A key the gateway answers itself costs nothing; the fields below it are still priced.
    if (!limits.held?.(term.shares, checked.value)) paid.add(checked.value);
  }
  return { keys, paid, unknown };
}

/** A page of nodes unknown until it is read: `first` of them (its default filled in), none past the page's bound (refused). */
function pageOf(term: Term, { argument, max }: NonNullable<Billing['sizedBy']>, variables: Record<string, unknown>): (typeof UNKNOWN)[] {
  let size = 0;
  try {
    size = Number(getArgumentValues(term.def, term.node, variables)[argument] ?? 0);
  } catch {
    // the field fails before its resolver runs
  }
  return Array<typeof UNKNOWN>(Number.isInteger(size) && size > 0 && size <= max ? size : 0).fill(UNKNOWN);
}

/** The keys of the representations that are ours and pass their check, each added to its type's group and to `byType`. */
function referencedKeys(
  items: readonly unknown[],
  references: NonNullable<Billing['references']>,
  shared: Map<string, { weight: number; keys: Set<string> }>,
  byType: Map<string, string[]>,
): string[] {
  const keys: string[] = [];
  for (const item of items) {
    if (typeof item !== 'object' || item === null) continue;
    const { __typename: typename } = item as { __typename?: unknown };
    const entity = typeof typename === 'string' && Object.hasOwn(references, typename) ? references[typename] : undefined;
    const value = entity && (item as Record<string, unknown>)[entity.field];
    const checked = entity && typeof value === 'string' ? entity.key(value) : undefined;
    if (!entity || !checked?.ok) continue;
    keys.push(checked.value);
    const ofType = byType.get(typename as string);
    if (ofType) ofType.push(checked.value);
    else byType.set(typename as string, [checked.value]);
    let group = shared.get(typename as string);
    if (!group) shared.set(typename as string, (group = { weight: entity.weight, keys: new Set() }));
    group.weight = Math.max(group.weight, entity.weight);
    group.keys.add(checked.value);
  }
  return keys;
}

/** The operation's billed fields, at any depth and through fragments, each under the billed field it is selected in. */
function planOf(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): Term[] {
  const root = schema.getRootType(operation.operation);
  if (!root) return [];
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const terms: Term[] = [];

  /** Each fragment once per path, so that a cycle (refused by validation anyway) cannot loop. */
  // A union (federation's `_Entity`) has no fields of its own: only its fragments are walked.
  const visit = (
    set: SelectionSetNode,
    type: GraphQLObjectType | GraphQLUnionType,
    parent: Term | undefined,
    seen: ReadonlySet<string>,
  ): void => {
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        const def = isObjectType(type) ? type.getFields()[s.name.value] : undefined;
        if (!def) continue;
        const billing = billingOf(def);
        const named = getNamedType(def.type);
        const term = billing ? { node: s, def, billing, shares: named.name, parent, on: type.name } : undefined;
        if (term) terms.push(term);
        if (s.selectionSet && (isObjectType(named) || isUnionType(named))) visit(s.selectionSet, named, term ?? parent, seen);
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        const on = s.typeCondition ? schema.getType(s.typeCondition.name.value) : type;
        if (isObjectType(on) || isUnionType(on)) visit(s.selectionSet, on, parent, seen);
      } else if (!seen.has(s.name.value)) {
        const fragment = fragments.get(s.name.value);
        const on = fragment && schema.getType(fragment.typeCondition.name.value);
        if (fragment && (isObjectType(on) || isUnionType(on))) visit(fragment.selectionSet, on, parent, new Set(seen).add(s.name.value));
      }
    }
  };
  visit(operation.selectionSet, root, undefined, new Set());
  return terms;
}
