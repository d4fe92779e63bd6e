import {
  Kind,
  getArgumentValues,
  getOperationAST,
  getVariableValues,
  type DocumentNode,
  type FieldNode,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { MAX_COMPROBANTES, MAX_RUCS, checkNumLicencia, checkRuc } from '../schema/validation.js';

/** A root field that can spend plan queries, with the argument that says how many. */
interface Term {
  field: 'contribuyente' | 'contribuyentes' | 'contribuyenteDetalle' | 'licencia' | 'receipts';
  /** The field as written, and its definition: its arguments are read as the resolver gets them. */
  node: FieldNode;
  def: GraphQLField<unknown, unknown>;
  /** The argument that names what is looked up or sent. */
  arg: string;
  /** A Contribuyente selection that asks for `detalle` anywhere in it. */
  detalle: boolean;
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
 * anything runs. It reads each argument as the resolver will get it (graphql-js's own
 * coercion: variables, their default values, inline literals, lists mixing both), and counts
 * what the resolvers would call, with the same rules: distinct trimmed keys (one call per key
 * per operation), invalid keys and oversized lists cost nothing (they fail locally), 1 per RUC
 * for /ruc and /ruc-sunat, 2 per licence, 1 per receipt. `@skip` and `@include` are ignored:
 * the bound stays an upper bound.
 */
export function estimateCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: unknown,
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
    if (!operation?.variableDefinitions?.length) plan.fixed = estimateTerms(terms, {});
    byName.set(key, plan);
  }
  if (plan.fixed !== undefined) return plan.fixed;
  const raw = typeof variables === 'object' && variables !== null ? (variables as Record<string, unknown>) : {};
  // Without default values, the variables sent are what execution will see (a value of the
  // wrong type fails execution before any resolver): coercing them here would only cost time.
  if (!plan.defaults) return estimateTerms(plan.terms, raw);
  // The variables as execution will see them, defaults filled in; when they fail to coerce, nothing runs.
  const coerced = getVariableValues(schema, plan.operation!.variableDefinitions!, raw, { maxErrors: 1 });
  return coerced.errors ? 0 : estimateTerms(plan.terms, coerced.coerced);
}

function estimateTerms(terms: Term[], variables: Record<string, unknown>): number {
  const ruc = new Set<string>();
  const rucSunat = new Set<string>();
  const licencias = new Set<string>();
  let receipts = 0;
  for (const term of terms) {
    let value: unknown;
    try {
      value = getArgumentValues(term.def, term.node, variables)[term.arg];
    } catch {
      continue; // the field fails before its resolver runs
    }
    switch (term.field) {
      case 'contribuyente':
      case 'contribuyentes': {
        const keys = term.field === 'contribuyente' ? rucsOf(value, 1) : rucsOf(value, MAX_RUCS);
        for (const k of keys) ruc.add(k);
        if (term.detalle) for (const k of keys) rucSunat.add(k);
        break;
      }
      case 'contribuyenteDetalle':
        for (const k of rucsOf(value, 1)) rucSunat.add(k);
        break;
      case 'licencia': {
        const checked = typeof value === 'string' ? checkNumLicencia(value) : undefined;
        if (checked?.ok) licencias.add(checked.value);
        break;
      }
      case 'receipts': {
        // One receipt given where a list is expected is a list of one, as graphql-js coerces it.
        const list = Array.isArray(value) ? value : value == null ? [] : [value];
        if (list.length <= MAX_COMPROBANTES) receipts += list.length;
        break;
      }
    }
  }
  return ruc.size + rucSunat.size + 2 * licencias.size + receipts;
}

/** The valid RUCs of one value or list, or none when the list is over `max` (refused whole). */
function rucsOf(value: unknown, max: number): string[] {
  const list = Array.isArray(value) ? value : [value];
  const keys: string[] = [];
  if (list.length > max) return keys;
  for (const v of list) {
    if (typeof v !== 'string') continue;
    const checked = checkRuc(v);
    if (checked.ok) keys.push(checked.value);
  }
  return keys;
}

/** The argument of each root field that reaches the upstream. */
const ROOT_TERMS: Record<string, { field: Term['field']; arg: string }> = {
  contribuyente: { field: 'contribuyente', arg: 'ruc' },
  contribuyentes: { field: 'contribuyentes', arg: 'rucs' },
  contribuyenteDetalle: { field: 'contribuyenteDetalle', arg: 'ruc' },
  licencia: { field: 'licencia', arg: 'numLicencia' },
  validarComprobantes: { field: 'receipts', arg: 'comprobantes' },
  validarComprobantesTexto: { field: 'receipts', arg: 'comprobantes' },
};

/** The operation's root fields that reach the upstream, through fragments, with their definitions. */
function planOf(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): Term[] {
  const root = schema.getRootType(operation.operation);
  if (!root) return [];
  const rootFields = root.getFields();
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));

  /** Fields of a selection set, through fragments, each fragment once per path. */
  const fieldsOf = (set: SelectionSetNode | undefined, seen: Set<string> = new Set()): FieldNode[] =>
    (set?.selections ?? []).flatMap((s) => {
      if (s.kind === Kind.FIELD) return [s];
      if (s.kind === Kind.INLINE_FRAGMENT) return fieldsOf(s.selectionSet, seen);
      if (seen.has(s.name.value)) return [];
      const fragment = fragments.get(s.name.value);
      return fragment ? fieldsOf(fragment.selectionSet, new Set(seen).add(s.name.value)) : [];
    });
  const wantsDetalle = (field: FieldNode) => fieldsOf(field.selectionSet).some((f) => f.name.value === 'detalle');

  return fieldsOf(operation.selectionSet).flatMap((node): Term[] => {
    const known = ROOT_TERMS[node.name.value];
    const def = rootFields[node.name.value];
    if (!known || !def) return [];
    return [{ ...known, node, def, detalle: wantsDetalle(node) }];
  });
}
