import { Kind, getOperationAST, type DocumentNode, type FieldNode, type SelectionSetNode, type ValueNode } from 'graphql';
import { MAX_COMPROBANTES, MAX_RUCS, checkNumLicencia, checkRuc } from './validation.js';

/** A root field that can spend plan queries, with the argument that says how many. */
interface Term {
  field: 'contribuyente' | 'contribuyentes' | 'contribuyenteDetalle' | 'licencia' | 'receipts';
  value: ValueNode | undefined;
  /** A Contribuyente selection that asks for `detalle` anywhere in it. */
  detalle: boolean;
}

/**
 * An operation's terms, and its estimate when no term reads a variable (then the estimate is
 * the same on every run, and is worked out once).
 */
interface Plan {
  terms: Term[];
  fixed: number | undefined;
}

/** Plans per document and operation name: parsed documents are cached, so each is walked once. */
const plans = new WeakMap<DocumentNode, Map<string, Plan>>();

/**
 * The most plan queries an operation could spend, from its document and variables, before
 * anything runs. It counts what the resolvers would call, with the same rules: distinct
 * trimmed keys (one call per key per operation), invalid keys and oversized lists cost
 * nothing (they fail locally), 1 per RUC for /ruc and /ruc-sunat, 2 per licence, 1 per receipt.
 * `@skip` and `@include` are ignored: the bound stays an upper bound.
 */
export function estimateCost(document: DocumentNode, operationName: string | null | undefined, variables: unknown): number {
  let byName = plans.get(document);
  if (!byName) plans.set(document, (byName = new Map()));
  const key = operationName ?? '';
  let plan = byName.get(key);
  if (!plan) {
    const terms = planOf(document, operationName);
    const fixed = terms.some((t) => readsVariable(t.value)) ? undefined : estimateTerms(terms, {});
    byName.set(key, (plan = { terms, fixed }));
  }
  return plan.fixed ?? estimateTerms(plan.terms, variables);
}

function readsVariable(node: ValueNode | undefined): boolean {
  if (node?.kind === Kind.VARIABLE) return true;
  if (node?.kind === Kind.LIST) return node.values.some(readsVariable);
  return false;
}

function estimateTerms(terms: Term[], variables: unknown): number {
  if (terms.length === 0) return 0;

  const vars = typeof variables === 'object' && variables !== null ? (variables as Record<string, unknown>) : {};
  const valueOf = (node: ValueNode | undefined): unknown => {
    switch (node?.kind) {
      case Kind.VARIABLE:
        return vars[node.name.value];
      case Kind.STRING:
        return node.value;
      case Kind.LIST:
        return node.values.map(valueOf);
      case Kind.OBJECT:
        return {};
      default:
        return undefined;
    }
  };
  const rucsOf = (value: unknown, max: number): string[] => {
    const list = Array.isArray(value) ? value : [value];
    const keys: string[] = [];
    if (list.length > max) return keys;
    for (const v of list) {
      if (typeof v !== 'string') continue;
      const checked = checkRuc(v);
      if (checked.ok) keys.push(checked.value);
    }
    return keys;
  };

  const ruc = new Set<string>();
  const rucSunat = new Set<string>();
  const licencias = new Set<string>();
  let receipts = 0;
  for (const term of terms) {
    const value = valueOf(term.value);
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
      case 'receipts':
        if (Array.isArray(value) && value.length <= MAX_COMPROBANTES) receipts += value.length;
        break;
    }
  }
  return ruc.size + rucSunat.size + 2 * licencias.size + receipts;
}

/** The operation's root fields that reach the upstream, through fragments, with their key argument. */
function planOf(document: DocumentNode, operationName: string | null | undefined): Term[] {
  const operation = getOperationAST(document, operationName ?? undefined);
  if (!operation) return [];
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  const arg = (field: FieldNode, name: string) => field.arguments?.find((a) => a.name.value === name)?.value;

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

  return fieldsOf(operation.selectionSet).flatMap((field): Term[] => {
    switch (field.name.value) {
      case 'contribuyente':
        return [{ field: 'contribuyente', value: arg(field, 'ruc'), detalle: wantsDetalle(field) }];
      case 'contribuyentes':
        return [{ field: 'contribuyentes', value: arg(field, 'rucs'), detalle: wantsDetalle(field) }];
      case 'contribuyenteDetalle':
        return [{ field: 'contribuyenteDetalle', value: arg(field, 'ruc'), detalle: false }];
      case 'licencia':
        return [{ field: 'licencia', value: arg(field, 'numLicencia'), detalle: false }];
      case 'validarComprobantes':
      case 'validarComprobantesTexto':
        return [{ field: 'receipts', value: arg(field, 'comprobantes'), detalle: false }];
      default:
        return [];
    }
  });
}
