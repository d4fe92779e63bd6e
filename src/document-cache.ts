import type { DocumentNode, GraphQLError, GraphQLSchema, ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';

/**
 * Yoga's parser and validation cache (`useParserAndValidationCache`), with the same keys and
 * results, minus its per-request cost: Yoga names the validation rules on every request
 * (`rules.map((r) => r.name).join(',')`: about 35 rules, since envelop hands them over one
 * by one) and looks that 700-character string up in an LRU. Here the rule list is compared,
 * function by function, with the one seen last, and its key is only built when it changed.
 * Parsed documents stay in an LRU by their text, as in Yoga, but without Yoga's one-hour TTL
 * (a parsed document never goes stale; only the least used are dropped).
 */
export function useDocumentCache(max = 1024): Plugin {
  const documents = new LRUCache<string, DocumentNode>({ max });
  const syntaxErrors = new LRUCache<string, Error>({ max });
  const byRules = new LRUCache<string, WeakMap<GraphQLSchema, WeakMap<DocumentNode, readonly (GraphQLError | Error)[]>>>({ max: 16 });
  let lastRules: readonly ValidationRule[] = [];
  let lastKey = '';

  const rulesKey = (rules: readonly ValidationRule[] | undefined): string => {
    if (!rules) return '';
    if (rules.length === lastRules.length && rules.every((rule, i) => rule === lastRules[i])) return lastKey;
    lastRules = [...rules];
    lastKey = rules.map((rule) => rule.name).join(',');
    return lastKey;
  };

  return {
    onParse({ params, setParsedDocument }) {
      const source = params.source.toString();
      const document = documents.get(source);
      if (document) return void setParsedDocument(document);
      const error = syntaxErrors.get(source);
      if (error) throw error;
      return ({ result }) => {
        if (result instanceof Error) syntaxErrors.set(source, result);
        else if (result != null) documents.set(source, result);
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
        if (result != null) byDocument.set(documentAST, result);
      };
    },
  };
}
