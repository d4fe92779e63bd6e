import type { DocumentNode, GraphQLError, GraphQLSchema, ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';

/**
 * Yoga's parser and validation cache (`useParserAndValidationCache`), with the same keys and
 * results, minus its per-request cost: Yoga names the validation rules on every request
 * (`rules.map((r) => r.name).join(",")`: 30 rules, graphql's 27 and Armor's 3, handed over
 * by envelop one by one) and looks that 700-character string up in an LRU. Here the rule
 * list is compared with the one seen last, and its key is only built when it changed.
 * Parsed documents stay in an LRU by their text, as in Yoga, but without Yoga's one-hour TTL
 * (a parsed document never goes stale; only the least used are dropped).
 */
export function useDocumentCache(max = 1024): Plugin {
  const documents = new LRUCache<string, DocumentNode>({ max });
  const syntaxErrors = new LRUCache<string, Error>({ max });
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
