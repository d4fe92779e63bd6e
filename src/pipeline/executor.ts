import { execute, type ExecutionArgs } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * The executor: graphql-js's own `execute`, which keeps response keys in selection order (the
 * spec's serialized map ordering); Yoga's default executor orders them by resolution time.
 *
 * graphql-jit ran here before, compiling a document on its third run. It was cheaper
 * (docs/performance.md), but its answers differed from graphql-js's from the
 * compile on: errors without `locations`, `data` before `errors`, fragment fields after the
 * others, and variable errors in its own words (naming the wrong variable). The same document
 * must get the same answer every run (test/e2e/executors.test.ts), so graphql-js runs everything.
 */
export function useExecutor(): Plugin {
  const graphqlJs = execute as (args: ExecutionArgs) => unknown;
  return { onExecute: ({ setExecuteFn }) => setExecuteFn(graphqlJs as never) };
}
