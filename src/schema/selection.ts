import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/** Whether every field the operation asks of this field's value is one of `fields` (through fragments, `__typename` always allowed). */
export function asksOnly(info: GraphQLResolveInfo, fields: ReadonlySet<string>): boolean {
  const seen = new Set<string>();
  const within = (set: SelectionSetNode | undefined): boolean =>
    !set ||
    set.selections.every((s) => {
      if (s.kind === Kind.FIELD) return s.name.value === '__typename' || fields.has(s.name.value);
      if (s.kind === Kind.INLINE_FRAGMENT) return within(s.selectionSet);
      if (seen.has(s.name.value)) return true;
      seen.add(s.name.value);
      return within(info.fragments[s.name.value]?.selectionSet);
    });
  return info.fieldNodes.every((node) => within(node.selectionSet));
}
