import { BREAK, execute, visit, type DocumentNode, type ExecutionArgs } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/** Whether a document asks for incremental delivery, worked out once per parsed document. */
const incremental = new WeakMap<DocumentNode, boolean>();
function isIncremental(document: DocumentNode): boolean {
  let found = incremental.get(document);
  if (found === undefined) {
    found = false;
    visit(document, {
      Directive(node) {
        if (node.name.value === 'defer' || node.name.value === 'stream') {
          found = true;
          return BREAK;
        }
        return undefined;
      },
    });
    incremental.set(document, found);
  }
  return found;
}

/**
 * The executor: graphql-js's own `execute`, which keeps response keys in selection order (the
 * spec's serialized map ordering); Yoga's default executor orders them by resolution time.
 * graphql-js 16 cannot run `@defer` or `@stream`: a document that uses them runs on Yoga's
 * default executor (@graphql-tools/executor), which delivers them incrementally.
 *
 * graphql-jit ran here before, compiling a document on its third run. It was cheaper
 * (docs/performance.md), but its answers differed from graphql-js's from the
 * compile on: errors without `locations`, `data` before `errors`, fragment fields after the
 * others, and variable errors in its own words (naming the wrong variable). The same document
 * must get the same answer every run (test/e2e/executors.test.ts), so graphql-js runs everything.
 */
export function useExecutor(): Plugin {
  const graphqlJs = execute as (args: ExecutionArgs) => unknown;
  return {
    onExecute: ({ args, setExecuteFn }) => {
      if (!isIncremental(args.document)) setExecuteFn(graphqlJs as never);
    },
  };
}
