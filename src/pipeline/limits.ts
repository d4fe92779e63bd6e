import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { blockFieldSuggestionsPlugin } from '@escape.tech/graphql-armor-block-field-suggestions';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { GraphQLError, TokenKind, type DocumentNode, type Token, type ValidationContext, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Config } from '../config.js';
import type { RuntimeLimits } from '../schema/billed.js';
import { wantsNoCache } from '../schema/context.js';
import { estimateCost } from './cost.js';
import { refusal, refusalError, worded, type Worded } from '../errors.js';
import { requestState, spent, type RequestState } from '../schema/request-state.js';

/**
 * Depth of an introspection query, as GraphQL Armor counts it (fragments flattened). The standard
 * query (graphql-js's, GraphiQL's, GraphQL Code Generator's: a type reference nested 9 deep) is 15;
 * this leaves room for a client that asks for a few more levels, and none for a document nested
 * hundreds deep, which would cost memory and time for nothing.
 */
export const INTROSPECTION_MAX_DEPTH = 20;

/**
 * How deep braces may nest in a document, checked as it is parsed: well past any depth the
 * limits below allow (introspection's included, with fragments and input objects), so it only
 * turns away documents built to be deep, before validation spends time on every level.
 */
export const MAX_NESTING = 2 * INTROSPECTION_MAX_DEPTH;

/** Header a browser must add to a "simple" (non-preflighted) request; JSON POSTs need none. */
export const CSRF_HEADER = 'x-graphql-yoga-csrf';

/** Armor reports through these callbacks; a typed error replaces its generic one. */
function reject(refused: (found: string) => Worded) {
  return {
    propagateOnRejection: false,
    onReject: [
      (ctx: ValidationContext | null, error: { message: string }) => {
        // Armor hands a rejection only its English message (its onAccept alone gets `{ n }`), so the count is read from it.
        const found = /found (\d+)/.exec(error.message)?.[1] ?? '?';
        const typed = refusalError(refused(found));
        // Validation rules report into the context; the token limit runs while parsing, with no context.
        if (ctx) ctx.reportError(typed);
        else throw typed;
      },
    ],
  };
}

/**
 * Every limit checked before execution, as plugins, each rejection a typed error that
 * costs no upstream query. GraphQL Armor counts; we only choose codes and words.
 */
export function useOperationLimits(
  limits: Config['limits'],
  production: boolean,
  held?: RuntimeLimits['held'],
  sunat?: RuntimeLimits['sunat'],
): Plugin[] {
  return [
    useParseGuards(),
    maxTokensPlugin({
      n: limits.maxTokens,
      ...reject(() => worded('tokens', { max: limits.maxTokens })),
    }),
    maxDepthPlugin({
      n: limits.maxDepth,
      // Introspection (`__schema`) has a bound of its own, below: the standard query is deeper
      // than any of ours, which nest 3 deep at most.
      ignoreIntrospection: true,
      // Depth is fields within fields: a fragment or an inline fragment (where @defer goes) adds none.
      flattenFragments: true,
      ...reject((found) => worded('depth', { found, max: limits.maxDepth })),
    }),
    maxDepthPlugin({
      n: Math.max(INTROSPECTION_MAX_DEPTH, limits.maxDepth),
      ignoreIntrospection: false,
      flattenFragments: true,
      ...reject((found) => worded('introspectionDepth', { found, max: Math.max(INTROSPECTION_MAX_DEPTH, limits.maxDepth) })),
    }),
    maxAliasesPlugin({
      n: limits.maxAliases,
      // Armor lets `__typename` be aliased without count: a thousand of them cost milliseconds each.
      allowList: [],
      ...reject((found) => worded('aliases', { found, max: limits.maxAliases })),
    }),
    maxDirectivesPlugin({
      n: limits.maxDirectives,
      ...reject((found) => worded('directives', { found, max: limits.maxDirectives })),
    }),
    // "Did you mean ...?" maps the schema for an attacker; hidden in production only.
    // (typed for a bare envelop context; it reads none of it)
    ...(production ? [blockFieldSuggestionsPlugin({ mask: '' }) as Plugin] : []),
    useCostLimit(limits.maxOperationCost, { maxReceipts: limits.maxReceipts, maxRucsPerList: limits.maxRucsPerList, held, sunat }),
    useServedOperations(),
  ];
}

/**
 * Guards on a newly parsed document, each turning it into a parse error (so the document cache
 * keeps only the error, not the document):
 * - braces nested deeper than MAX_NESTING. One walk of the tokens, once per distinct document;
 *   GraphQL Armor's depth rule still judges every document that passes, but only after every
 *   other validation rule has walked it, which a deep one makes costly;
 * - a syntax error: graphql-js quotes what it found, which may be a credential written in the
 *   document. Said without it (`withoutQuote`).
 */
function useParseGuards(): Plugin {
  const guard = ({ result, replaceParseResult }: { result: unknown; replaceParseResult: (result: DocumentNode | Error) => void }) => {
    // graphql-js's syntax errors carry the document (a lexer's or parser's, with its source).
    if (result instanceof GraphQLError && result.source !== undefined) return replaceParseResult(withoutQuote(result));
    if (!result || result instanceof Error) return;
    let depth = 0;
    let deepest = 0;
    for (let token: Token | null | undefined = (result as DocumentNode).loc?.startToken; token; token = token.next) {
      if (token.kind === TokenKind.BRACE_L) deepest = Math.max(deepest, ++depth);
      else if (token.kind === TokenKind.BRACE_R) depth--;
    }
    if (deepest > MAX_NESTING) {
      replaceParseResult(refusal('nesting', { found: deepest, max: MAX_NESTING }));
    }
  };
  return { onParse: () => guard };
}

/**
 * A syntax error that quotes none of the document: graphql-js quotes the token or the characters
 * it found, which may be a credential written where it should not be. Where it is and what kind of
 * thing it found are enough to mend it.
 */
function withoutQuote(error: GraphQLError): GraphQLError {
  const at = error.positions?.[0] ?? 0;
  const where = error.locations?.[0];
  const char = error.source?.body[at];
  const found =
    char === undefined
      ? 'el documento termina antes de tiempo'
      : char === '"'
        ? 'una cadena de texto inesperada o mal formada'
        : /[-0-9]/.test(char)
          ? 'un número inesperado o mal formado'
          : /[A-Za-z_]/.test(char)
            ? 'un nombre inesperado'
            : /[!$&().:=@[\]{|}]/.test(char)
              ? `"${char}" inesperado`
              : 'un carácter no válido';
  const place = where ? ` en la línea ${where.line}, columna ${where.column}` : '';
  const { message, code } = worded('syntax', { place, found });
  return new GraphQLError(message, { source: error.source, positions: error.positions, extensions: { code, retryable: false } });
}

/** An operation kind the schema has no root for (a subscription) is a validation error of its own. */
function useServedOperations(): Plugin {
  const rule: ValidationRule = (context) => ({
    OperationDefinition(node) {
      if (context.getSchema().getRootType(node.operation)) return;
      context.reportError(refusal('operationKind', { kind: node.operation }));
    },
  });
  return { onValidate: ({ addValidationRule }) => addValidationRule(rule) };
}

/** Refuses, before any resolver runs, an operation that could spend more than `max` plan queries. */
function useCostLimit(max: number, settings: RuntimeLimits): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const request = (args.contextValue as { request?: Request }).request;
      const state = request ? requestState(request) : undefined;
      // Asked fresh, nothing is answered by the gateway itself: every key is priced as the service call it will be.
      const applied = request && wantsNoCache(request.headers) ? { ...settings, held: undefined } : settings;
      const estimated = estimateCost(args.schema, args.document, args.operationName, args.variableValues, applied);
      if (state) state.estimatedCost = estimated;
      if (estimated > max) {
        setResultAndStopExecution({
          errors: [refusalError(worded('operationCost', { estimated, max }), { cost: estimated, limit: max })],
          extensions: { cost: withStanding({ estimated, limit: max, queries: 0, upstreamCalls: 0, cacheHits: 0, staleHits: 0 }, state) },
        });
        return;
      }
      // The bound the operation was checked against, and what it really spent: on the answer,
      // or on the last part of an incremental one.
      const withCost = <R extends { extensions?: Record<string, unknown> }>(result: R): R => {
        const cost = withStanding(state ? { estimated, limit: max, ...spent(state) } : { estimated, limit: max }, state);
        // The fields answered with the last good record while the upstream is down, when any.
        const added = state?.stale.length ? { cost, stale: state.stale } : { cost };
        // Object.assign, not `{ ...result, extensions }`: on Node 20's V8 a spread followed by
        // more properties takes a slow path (docs/performance.md).
        return Object.assign({}, result, { extensions: Object.assign({}, result.extensions, added) });
      };
      return {
        onExecuteDone({ result, setResult }) {
          if (!(Symbol.asyncIterator in result)) return setResult(withCost(result));
          return {
            onNext: ({ result: part, setResult: setPart }) => {
              if ((part as { hasNext?: boolean }).hasNext === false) setPart(withCost(part));
            },
          };
        },
      };
    },
  };
}

/** `cost`, with the signed-in subject's budget as it stands (sign-in mode). */
function withStanding<C extends object>(cost: C, state: RequestState | undefined): C {
  const budget = state?.signedIn?.budget;
  return budget ? Object.assign(cost, { budget: budget.standing() }) : cost;
}

/**
 * Yoga's CSRF prevention, with its refusal as a typed error in Spanish. A request that carries
 * `Authorization` passes: a browser cannot send that header cross-site without a CORS
 * preflight, and the gateway reads no cookie, so such a request cannot be forged. That lets
 * urql's default GET queries through; a request with neither still needs the CSRF header.
 */
export function useCsrfPrevention(): Plugin {
  const csrf = useCSRFPrevention({ requestHeaders: [CSRF_HEADER] });
  return {
    onRequestParse(payload) {
      if (payload.request.headers.has('authorization')) return;
      try {
        return csrf.onRequestParse?.(payload);
      } catch {
        throw refusal('csrf', { header: CSRF_HEADER });
      }
    },
  };
}
