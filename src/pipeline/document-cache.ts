import { TokenKind, type DocumentNode, type GraphQLError, type GraphQLSchema, type Token, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { holdsSecret } from './secrets.js';

export interface DocumentCacheOptions {
  /** What the documents kept parsed hold in memory, in bytes (see `weightOf`). @default 33554432 (32 MiB) */
  maxBytes?: number;
  /** The same for documents kept as refused (syntax or validation errors), apart. @default 8388608 (8 MiB) */
  maxRefusedBytes?: number;
}

/**
 * What a parsed document keeps alive per token: the token itself (graphql-js links every token
 * of a document, and each node's location holds two of them), the nodes and their locations
 * (sizes measured: docs/performance.md).
 */
const BYTES_PER_TOKEN = 320;

/**
 * The memory a kept document holds: its tokens at BYTES_PER_TOKEN, and its text. Counting
 * characters instead, as before, let 11 KB documents of 3,000 tokens hold a megabyte each.
 */
function weightOf(source: string, document: DocumentNode): number {
  let tokens = 0;
  for (let token: Token | null | undefined = document.loc?.startToken; token; token = token.next) tokens++;
  return Math.max(1, source.length + tokens * BYTES_PER_TOKEN);
}

/** Whether a document has a value written in it: a string, a block string or a number. */
function holdsLiterals(document: DocumentNode): boolean {
  for (let token: Token | null | undefined = document.loc?.startToken; token; token = token.next) {
    if (
      token.kind === TokenKind.STRING ||
      token.kind === TokenKind.BLOCK_STRING ||
      token.kind === TokenKind.INT ||
      token.kind === TokenKind.FLOAT
    )
      return true;
  }
  return false;
}

/**
 * An error kept beyond its request, its stack formatted now. Until its stack is read, V8 keeps
 * it as frames that hold each caller's `this`: the parser with every token of the document,
 * the request and its response. Kept in a cache, an unread error kept all of those alive
 * (docs/performance.md).
 */
function detached<E extends Error>(error: E): E {
  void error.stack;
  return error;
}

/**
 * Yoga's parser and validation cache (`useParserAndValidationCache`), with the same keys and
 * results, minus its per-request cost: Yoga names every validation rule on every request and
 * looks that long string up in an LRU (docs/performance.md). Here the rule list is compared
 * with the one seen last, and its key is only built when it changed.
 *
 * Parsed documents are kept in an LRU by their text, once validation has judged them, bounded
 * by what they hold in memory (`weightOf`), so that anyone, token or not, can fill it with large
 * or deep documents only up to that bound. A document that fails validation goes to an LRU of
 * its own, so that refused documents never crowd out good ones, and only when it holds no value
 * (a credential under a misspelt name would otherwise be kept). A syntax error, or a document
 * with a secret written in it, is kept nowhere.
 */
/**
 * The key of a validation rule list, worked out again only when the list changes. Most rules are
 * the same functions every time (graphql's specified rules); GraphQL Armor makes its rules anew
 * for each request, so those are compared by name, which is what the key is made of anyway.
 */
function rulesKeyMemo(): (rules: readonly ValidationRule[] | undefined) => string {
  let lastRules: readonly ValidationRule[] = [];
  let lastNames: readonly string[] = [];
  let lastKey = '';
  return (rules) => {
    if (!rules) return '';
    if (rules.length === lastRules.length) {
      let same = true;
      for (let i = 0; same && i < rules.length; i++) same = rules[i] === lastRules[i] || rules[i]!.name === lastNames[i];
      if (same) return lastKey;
    }
    lastRules = [...rules];
    lastNames = rules.map((rule) => rule.name);
    lastKey = lastNames.join(',');
    return lastKey;
  };
}

export function useDocumentCache(
  options: DocumentCacheOptions = {},
): Plugin & { stats(): { bytes: number; refusedBytes: number }; knows(source: string): boolean } {
  const byWeight = (max: number) => ({
    max: 4096,
    maxSize: max,
    sizeCalculation: (document: DocumentNode, key: string) => weightOf(key, document),
  });
  const documents = new LRUCache<string, DocumentNode>(byWeight(options.maxBytes ?? 32 * 1024 * 1024));
  const refused = new LRUCache<string, DocumentNode>(byWeight(options.maxRefusedBytes ?? 8 * 1024 * 1024));
  /** The text each kept document was parsed from, to move it when it fails validation. */
  const sources = new WeakMap<DocumentNode, string>();
  const byRules = new LRUCache<string, WeakMap<GraphQLSchema, WeakMap<DocumentNode, readonly (GraphQLError | Error)[]>>>({ max: 16 });
  const rulesKey = rulesKeyMemo();

  return {
    onParse({ params, setParsedDocument }) {
      const source = params.source.toString();
      const document = documents.get(source);
      if (document) return void setParsedDocument(document);
      const earlier = refused.get(source);
      if (earlier) return void setParsedDocument(earlier);
      // Kept once validation has judged it (onValidate): a document stopped before (a syntax
      // error, a GET mutation, an operation not found) is kept nowhere.
      return ({ result }) => {
        if (result != null && !(result instanceof Error)) sources.set(result, source);
      };
    },
    onValidate({ params: { schema, documentAST, rules }, setResult }) {
      if (schema == null) return;
      const key = rulesKey(rules);
      let bySchema = byRules.get(key);
      if (!bySchema) byRules.set(key, (bySchema = new WeakMap()));
      let byDocument = bySchema.get(schema);
      if (!byDocument) bySchema.set(schema, (byDocument = new WeakMap()));
      const cached = byDocument.get(documentAST);
      if (cached) return void setResult(cached);
      return ({ result }) => {
        if (result == null) return;
        for (const error of result) detached(error);
        // A document with a secret written in it is kept nowhere.
        if (holdsSecret(documentAST)) return;
        byDocument.set(documentAST, result);
        const source = sources.get(documentAST);
        if (source === undefined) return;
        if (result.length === 0) documents.set(source, documentAST);
        // A refused one only when it holds no value: one written under a misspelt name is typed nowhere, secret or not.
        else if (!holdsLiterals(documentAST)) refused.set(source, documentAST);
      };
    },
    stats: () => ({ bytes: documents.calculatedSize, refusedBytes: refused.calculatedSize }),
    knows: (source) => documents.has(source) || refused.has(source),
  };
}
