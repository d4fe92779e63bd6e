import { Kind, getOperationAST, type DocumentNode, type FieldNode, type SelectionSetNode, type ValueNode } from 'graphql';
import { MAX_COMPROBANTES, MAX_RUCS, checkNumLicencia, checkRuc } from './validation.js';

/**
 * The most plan queries an operation could spend, from its document and variables, before
 * anything runs. It counts what the resolvers would call, with the same rules: distinct
 * trimmed keys (one call per key per operation), invalid keys and oversized lists cost
 * nothing (they fail locally), 1 per RUC for /ruc and /ruc-sunat, 2 per licence, 1 per receipt.
 * `@skip` and `@include` are ignored: the bound stays an upper bound.
 */
export function estimateCost(document: DocumentNode, operationName: string | null | undefined, variables: unknown): number {
  const operation = getOperationAST(document, operationName ?? undefined);
  if (!operation) return 0;
  const vars = typeof variables === 'object' && variables !== null ? (variables as Record<string, unknown>) : {};
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  const ruc = new Set<string>();
  const rucSunat = new Set<string>();
  const licencias = new Set<string>();
  let receipts = 0;

  const valueOf = (node: ValueNode): unknown => {
    switch (node.kind) {
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
  const arg = (field: FieldNode, name: string): unknown => {
    const node = field.arguments?.find((a) => a.name.value === name);
    return node ? valueOf(node.value) : undefined;
  };
  const rucsOf = (value: unknown, max: number): string[] => {
    const list = Array.isArray(value) ? value : [value];
    if (list.length > max) return [];
    return list.flatMap((v) => {
      if (typeof v !== 'string') return [];
      const checked = checkRuc(v);
      return checked.ok ? [checked.value] : [];
    });
  };

  /** Fields of a selection set, through fragments, each fragment once per path. */
  const fieldsOf = (set: SelectionSetNode | undefined, seen: Set<string> = new Set()): FieldNode[] =>
    (set?.selections ?? []).flatMap((s) => {
      if (s.kind === Kind.FIELD) return [s];
      if (s.kind === Kind.INLINE_FRAGMENT) return fieldsOf(s.selectionSet, seen);
      if (seen.has(s.name.value)) return [];
      const fragment = fragments.get(s.name.value);
      return fragment ? fieldsOf(fragment.selectionSet, new Set(seen).add(s.name.value)) : [];
    });

  /** Whether a Contribuyente selection asks for `detalle` anywhere in it. */
  const wantsDetalle = (field: FieldNode) => fieldsOf(field.selectionSet).some((f) => f.name.value === 'detalle');

  for (const field of fieldsOf(operation.selectionSet)) {
    switch (field.name.value) {
      case 'contribuyente':
      case 'contribuyentes': {
        const keys = field.name.value === 'contribuyente' ? rucsOf(arg(field, 'ruc'), 1) : rucsOf(arg(field, 'rucs'), MAX_RUCS);
        for (const k of keys) ruc.add(k);
        if (wantsDetalle(field)) for (const k of keys) rucSunat.add(k);
        break;
      }
      case 'contribuyenteDetalle':
        for (const k of rucsOf(arg(field, 'ruc'), 1)) rucSunat.add(k);
        break;
      case 'licencia': {
        const value = arg(field, 'numLicencia');
        const checked = typeof value === 'string' ? checkNumLicencia(value) : undefined;
        if (checked?.ok) licencias.add(checked.value);
        break;
      }
      case 'validarComprobantes':
      case 'validarComprobantesTexto': {
        const list = arg(field, 'comprobantes');
        if (Array.isArray(list) && list.length <= MAX_COMPROBANTES) receipts += list.length;
        break;
      }
    }
  }
  return ruc.size + rucSunat.size + 2 * licencias.size + receipts;
}
