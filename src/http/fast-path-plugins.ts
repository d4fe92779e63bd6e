import type { Plugin } from 'graphql-yoga';

/**
 * The plugins the fast path (./fast-path.ts) runs, and the Yoga hooks of theirs it does not: a
 * plugin with such a hook stops the start, unless the app marks it with the treatment below that
 * says the fast path does that work itself, and why. Every treatment is here, in one table; the
 * app marks its plugins with them where it lists them (src/app.ts).
 */

/** Yoga's hooks around an operation, beyond envelop's (which the fast path runs as Yoga does, through `getEnveloped`). */
export const YOGA_HOOKS = ['onRequest', 'onRequestParse', 'onParams', 'onExecutionResult', 'onResultProcess', 'onResponse'] as const;
export type YogaHook = (typeof YOGA_HOOKS)[number];
/** Those the fast path runs for any plugin, as Yoga does (the first two through Yoga's own getResultForParams). */
const HOOKS_RUN_AS_YOGA_DOES: ReadonlySet<string> = new Set(['onParams', 'onExecutionResult', 'onResultProcess']);
/** Instrumentation around envelop's own steps, which `getEnveloped` runs on both paths; Yoga's others (request, operation, ...) not. */
const ENVELOP_INSTRUMENTATION: ReadonlySet<string> = new Set(['init', 'parse', 'validate', 'context', 'execute', 'subscribe']);

/** How the fast path treats a plugin's Yoga hooks that it does not run. */
export interface FastPathTreatment {
  /** Hooks the fast path does not run because it does their work itself. */
  readonly doesItself: readonly YogaHook[];
  /** Why that is the same work, in a sentence. */
  readonly because: string;
}

/** Each plugin of the app's with Yoga hooks the fast path does not run, and why it need not. */
export const FAST_PATH_TREATMENTS = {
  graphiqlAssets: {
    doesItself: ['onRequest'],
    because: 'it answers GETs of its files only, never a JSON POST to the GraphQL path',
  },
  typedRefusals: {
    doesItself: ['onResponse'],
    because: 'Yoga sends these with no body for a 415 or a 404, which the fast path never answers',
  },
  operationReport: {
    doesItself: ['onRequest', 'onResponse'],
    because: 'the fast path calls the report at the start and the end of each request itself',
  },
  csrfPrevention: {
    doesItself: ['onRequestParse'],
    because: 'a JSON POST always has its CORS preflight, so the check lets every one through',
  },
  noNullOrigin: {
    doesItself: ['onResponse'],
    because: 'the fast path leaves the same header out',
  },
} as const satisfies Record<string, FastPathTreatment>;

/** Where the app's mark on a plugin is kept. */
const FAST_PATH = Symbol('gateway.fastPath');
export type DeclaredPlugin = Plugin & { readonly [FAST_PATH]?: FastPathTreatment };

/** The plugin, marked with how the fast path treats it. */
export function treatedByFastPath<P extends Plugin>(plugin: P, treatment: FastPathTreatment): P & DeclaredPlugin {
  return Object.assign(plugin, { [FAST_PATH]: treatment });
}

/** The Yoga hooks (and instrumentation steps) of a plugin that the fast path would not run. */
export function hooksTheFastPathSkips(plugin: DeclaredPlugin): string[] {
  const doesItself: readonly string[] = plugin[FAST_PATH]?.doesItself ?? [];
  const skipped: string[] = YOGA_HOOKS.filter(
    (hook) => plugin[hook] !== undefined && !HOOKS_RUN_AS_YOGA_DOES.has(hook) && !doesItself.includes(hook),
  );
  for (const step of Object.keys(plugin.instrumentation ?? {}))
    if (!ENVELOP_INSTRUMENTATION.has(step)) skipped.push(`instrumentation.${step}`);
  return skipped;
}

/**
 * The plugins between its two markers, once envelop has set them up (and so with those they
 * added through `addPlugin`): put `first` before the app's plugins and `last` after them.
 */
export function usePluginList(): { first: Plugin; last: Plugin; between(): readonly Plugin[] } {
  let all: readonly Plugin[] = [];
  const first: Plugin = {};
  const last: Plugin = {
    onPluginInit({ plugins }) {
      all = plugins;
    },
  };
  return {
    first,
    last,
    between: () => {
      const from = all.indexOf(first);
      const to = all.indexOf(last);
      if (from < 0 || to < from) throw new Error('usePluginList: its markers are not among the plugins, in order');
      return all.slice(from + 1, to);
    },
  };
}
