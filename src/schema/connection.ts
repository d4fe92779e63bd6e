import type { ObjectRef } from '@pothos/core';
import { builder } from './builder.js';

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/**
 * A page of a list read forward by cursor, as its store gives it: the nodes, each one's cursor
 * (opaque: the store makes it and reads it back), whether more follow, and where to go on. The
 * search, the changes and any later list of the register answer this, and the types below.
 */
export interface StorePage<T> {
  nodes: readonly T[];
  cursors: readonly string[];
  hasNextPage: boolean;
  endCursor: string | null;
}

const PageInfo = builder.objectRef<StorePage<unknown>>('PageInfo').implement({
  description: 'Dónde está la página: siga endCursor (como after) mientras hasNextPage sea true.',
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage'),
    // Read forward only: a page never has one before it that the caller could ask for.
    hasPreviousPage: t.boolean({ resolve: () => false }),
    startCursor: t.string({ nullable: true, resolve: (p) => p.cursors[0] ?? null }),
    endCursor: t.exposeString('endCursor', { nullable: true }),
  }),
});

/** The `<name>Connection` type over `node`, and its `<name>Edge`. */
export function connectionOf<T>(name: string, node: ObjectRef<Types, T>): ObjectRef<Types, StorePage<T>> {
  const Edge = builder.objectRef<{ cursor: string; node: T }>(`${name}Edge`).implement({
    fields: (t) => ({
      cursor: t.exposeString('cursor'),
      node: t.expose('node', { type: node }),
    }),
  });
  return builder.objectRef<StorePage<T>>(`${name}Connection`).implement({
    fields: (t) => ({
      edges: t.field({ type: [Edge], resolve: (p) => p.nodes.map((n, i) => ({ cursor: p.cursors[i]!, node: n })) }),
      pageInfo: t.field({ type: PageInfo, resolve: (p) => p }),
    }),
  });
}
