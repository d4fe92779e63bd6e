import type { DocumentNode, GraphQLError, GraphQLSchema, ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';

export interface DocumentCacheOptions {
  /** Text of the documents kept parsed, in characters. @default 4194304 */
  maxChars?: number;
  /** Text of the documents kept as refused (syntax or validation errors), apart. @default 524288 */
  maxRefusedChars?: number;
}

/**
 * Yoga's parser and validation cache (`useParserAndValidationCache`), with the same keys and
 * results, minus its per-request cost: Yoga names every validation rule on every request and
 * looks that long string up in an LRU (docs/performance.md). Here the rule list is compared
 * with the one seen last, and its key is only built when it changed.
 *
 * Parsed documents are kept in an LRU by their text, bounded by the text's size (a parsed
 * document takes many times its text), so that anyone, token or not, can fill it with large
 * documents only up to that bound. A document that fails to parse or validate moves to an LRU
 * of its own, so refused documents never crowd out good ones.
 */
export function useDocumentCache(options: DocumentCacheOptions = {}): Plugin & { stats(): { chars: number; refusedChars: number } } {
  const bySize = (max: number) => ({ max: 4096, maxSize: max, sizeCalculation: (_value: unknown, key: string) => Math.max(1, key.length) });
  const documents = new LRUCache<string, DocumentNode>(bySize(options.maxChars ?? 4 * 1024 * 1024));
  const refused = new LRUCache<string, DocumentNode | Error>(bySize(options.maxRefusedChars ?? 512 * 1024));
  /** The text each kept document was parsed from, to move it when it fails validation. */
  const sources = new WeakMap<DocumentNode, string>();
  const byRules = new LRUCache<string, WeakMap<GraphQLSchema, WeakMap<DocumentNode, readonly (GraphQLError | Error)[]>>>({ max: 16 });
  // The rule list seen last, its rules' names, and its key. Most rules are the same functions
  // every time (graphql's specified rules); GraphQL Armor makes its rules anew for each
  // request, so those are compared by name, which is what the key is made of anyway.
  let lastRules: readonly ValidationRule[] = [];
  let lastNames: readonly string[] = [];
  let lastKey = '';

  const rulesKey = (rules: readonly ValidationRule[] | undefined): string => {
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

  return {
    onParse({ params, setParsedDocument }) {
      const source = params.source.toString();
      const document = documents.get(source);
      if (document) return void setParsedDocument(document);
      const earlier = refused.get(source);
      if (earlier instanceof Error) throw earlier;
      if (earlier) return void setParsedDocument(earlier);
      return ({ result }) => {
        if (result instanceof Error) refused.set(source, result);
        else if (result != null) {
          documents.set(source, result);
          sources.set(result, source);
        }
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
        byDocument.set(documentAST, result);
        const source = sources.get(documentAST);
        if (result.length > 0 && source !== undefined && documents.get(source) === documentAST) {
          documents.delete(source);
          refused.set(source, documentAST);
        }
      };
    },
    stats: () => ({ chars: documents.calculatedSize, refusedChars: refused.calculatedSize }),
  };
}
