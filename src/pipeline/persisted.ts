import { useAPQ } from '@graphql-yoga/plugin-apq';
import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import type { ApqStore } from './apq-store.js';
import { refusal } from '../errors.js';

/** A document named by `documentId` (the trusted-documents convention: in the body, or in a GET's query string) or by its APQ hash. */
function documentIdOf(params: GraphQLParams, request: Request): string | null {
  const documentId =
    (params as GraphQLParams & { documentId?: unknown }).documentId ??
    (request.method === 'GET' ? new URL(request.url).searchParams.get('documentId') : undefined);
  if (typeof documentId === 'string') return documentId;
  const persisted = params.extensions?.['persistedQuery'] as { sha256Hash?: unknown } | undefined;
  return typeof persisted?.sha256Hash === 'string' ? persisted.sha256Hash : null;
}

/** The manifest's own entry: a name such as `__proto__` or `constructor` is no document. */
const manifestEntry = (manifest: Readonly<Record<string, string>>, id: string) => (Object.hasOwn(manifest, id) ? manifest[id] : undefined);

const notTrusted = (key: 'notTrusted' | 'trustedByIdOnly' | 'trustedNotDocument') => () => refusal(key);

/**
 * Persisted documents, one of two ways.
 *
 * With a manifest (TRUSTED_DOCUMENTS: hash -> document, as GraphQL Code Generator's client
 * preset writes it), only its documents run, named by `documentId` or by the APQ hash; any
 * other request is refused before parsing, so it costs no upstream call.
 *
 * Without one, automatic persisted queries: a hash the store has not seen answers
 * `PersistedQueryNotFound` (Apollo Client's and urql's cue to send the document), a hash sent
 * with its document is checked against it and kept once the document has parsed, validated and
 * passed every limit (the cost limit included), and from then on the hash alone will do.
 */
export function usePersistedDocuments(options: { manifest?: Readonly<Record<string, string>> | undefined; store: ApqStore }): Plugin {
  const { manifest } = options;
  if (!manifest) return useAutomaticPersistedQueries(options.store);
  return usePersistedOperations({
    allowArbitraryOperations: false,
    extractPersistedOperationId: documentIdOf,
    // The client preset's keys are `sha256:<hex>`; an APQ hash is the bare hex.
    getPersistedOperation: (id) => manifestEntry(manifest, id) ?? manifestEntry(manifest, `sha256:${id}`) ?? null,
    customErrors: {
      notFound: notTrusted('notTrusted'),
      keyNotFound: notTrusted('trustedByIdOnly'),
      persistedQueryOnly: notTrusted('trustedNotDocument'),
    },
  });
}

/** A document sent with its hash, checked against it: kept once it has validated. */
interface Registration {
  hash: string;
  query: string;
}

/**
 * @graphql-yoga/plugin-apq, with its store's `set` held back until execution starts: the plugin
 * stores a document as soon as its hash matches, before it is parsed, so any caller could
 * fill the store with documents that will never run (a secret written in one among them).
 */
function useAutomaticPersistedQueries(store: ApqStore): Plugin {
  const apq = useAPQ({ store: { get: (hash) => store.get(hash), set: () => undefined }, responseConfig: { forceStatusCodeOk: true } });
  const registrations = new WeakMap<Request, Registration>();
  return {
    onParams(payload) {
      const persisted = payload.params.extensions?.['persistedQuery'] as { version?: unknown; sha256Hash?: unknown } | null | undefined;
      // The plugin's hook is async for every request; nearly none carry a hash, and those skip a promise here.
      if (persisted == null) return undefined;
      const { query } = payload.params;
      const checked = apq.onParams?.(payload);
      if (query == null || persisted.version !== 1 || typeof persisted.sha256Hash !== 'string') return checked;
      const registration = { hash: persisted.sha256Hash, query };
      // Resolved only when the hash matched the document (a mismatch throws).
      return Promise.resolve(checked).then(() => void registrations.set(payload.request, registration));
    },
    // Execution starts only for a document that parsed and validated, once every limit passed
    // (the cost limit stops execution before this hook): only then is it kept.
    onExecute({ args }) {
      const request = (args.contextValue as { request?: Request }).request;
      const registration = request && registrations.get(request);
      if (!registration) return;
      registrations.delete(request);
      void store.set(registration.hash, registration.query);
    },
  };
}
