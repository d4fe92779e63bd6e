import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Kind, print, visit } from 'graphql';
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';
import { AutocompletarDocument, EjemploDocument } from '../../operations/generated/graphql.js';
import { GRAPHQL_PATH } from '../config.js';
import { errorAnswer, worded } from '../errors.js';
import { SANDBOX_TOKEN } from '../sandbox/data.js';

/**
 * GraphiQL served from our own origin. Yoga's default page loads its bundle from a
 * public CDN; a gateway behind a firewall (or this sandbox, with no internet) would
 * show an empty page, so the same bundle is served from the installed npm package.
 */
export const ASSETS_PATH = '/graphiql-assets/';
const DIST = join(dirname(createRequire(import.meta.url).resolve('@graphql-yoga/graphiql/package.json')), 'dist');
/** The files served, with their types: a Map, so that a name every object inherits (`constructor`) is no file. */
const FILES = new Map<string, string>([
  ['graphiql.css', 'text/css; charset=utf-8'],
  ['yoga-graphiql.umd.js', 'text/javascript; charset=utf-8'],
  ['monacoeditorwork/editor.worker.bundle.js', 'text/javascript; charset=utf-8'],
  ['monacoeditorwork/json.worker.bundle.js', 'text/javascript; charset=utf-8'],
  ['monacoeditorwork/graphql.worker..bundle.js', 'text/javascript; charset=utf-8'],
]);

const HOW_TO = `# GraphQL sobre las consultas de RUC, DNI, comprobantes,
# licencias de conducir y tipo de cambio.
#
# Token: pestaña "Headers" (abajo):
#   { "Authorization": "Bearer <su token>" }
# Con el sandbox (sin UPSTREAM_URL) ya está puesto el
# token "${SANDBOX_TOKEN}", o, con AUTH_JWKS_URL=sandbox,
# un token de inicio de sesión (JWT) del usuario "demo".
#
# Cada llamada al servicio consume consultas del plan;
# lo repetido en una operación se consulta una sola vez.
#
# Un contribuyente, su ficha detallada y una licencia
# con su titular (el DNI de la licencia lleva a la
# persona), en una sola consulta. La ficha (lenta) llega
# después del resumen gracias a @defer. Pulse ▶.
`;

const EXAMPLE_VARIABLES: Record<string, string> = { ruc: '20100123453', numLicencia: 'Q46779354' };

/**
 * The operation GraphiQL opens on: operations/ejemplo.graphql, the document the README and
 * the tests send, with its variables written in place so that it runs as it stands, and its
 * slow detailed record deferred, so that the summary shows first.
 */
export const EXAMPLE_OPERATION =
  HOW_TO +
  print(
    visit(EjemploDocument, {
      OperationDefinition: (node) => ({ ...node, variableDefinitions: [] }),
      Variable: (node) => ({ kind: Kind.STRING, value: EXAMPLE_VARIABLES[node.name.value] ?? '' }),
      Field: {
        // The generated document asks for `__typename` everywhere, for the clients' caches; a person reading it needs none.
        enter: (node) => (node.name.value === '__typename' ? null : undefined),
        // On leave: a node put in place is not visited again.
        leave: (node) =>
          node.name.value === 'detalle'
            ? {
                kind: Kind.INLINE_FRAGMENT,
                directives: [{ kind: Kind.DIRECTIVE, name: { kind: Kind.NAME, value: 'defer' }, arguments: [] }],
                selectionSet: { kind: Kind.SELECTION_SET, selections: [node] },
              }
            : undefined,
      },
    }),
  );

/**
 * GraphiQL's second tab: the autocomplete a checkout form sends (operations/autocompletar.graphql),
 * its variables in a pane of their own, as a form sends them.
 */
export const SEARCH_EXAMPLE = `# Buscar por nombre (o RUC, o DNI) en el padrón que guarda el
# gateway: 0 consultas. Con PADRON=sandbox npm start encuentra
# a los contribuyentes del sandbox. Pulse ▶; para la página
# siguiente, copie endCursor en after.
${print(visit(AutocompletarDocument, { Field: { enter: (node) => (node.name.value === '__typename' ? null : undefined) } }))}`;
const SEARCH_VARIABLES = JSON.stringify({ texto: 'comercial andina', first: 5 }, null, 2);

/** GraphiQL's settings: its title, the example, and the sandbox's token in its headers pane (never a real one). */
export function graphiqlOptions(sandboxToken: string | undefined, signIn = false): GraphiQLOptions {
  // In sign-in mode the pane says what to paste when no sandbox sign-in token is at hand.
  const token = sandboxToken ?? (signIn ? SIGN_IN_PLACEHOLDER : undefined);
  const headers = JSON.stringify(token ? { Authorization: `Bearer ${token}` } : {});
  return {
    title: 'Consultas RUC, comprobantes y licencias: GraphQL',
    defaultQuery: EXAMPLE_OPERATION,
    headers,
    // Two tabs: the example of links and @defer, and a search as a form sends it.
    defaultTabs: [
      { query: EXAMPLE_OPERATION, headers },
      { query: SEARCH_EXAMPLE, variables: SEARCH_VARIABLES, headers },
    ],
  };
}

/** What GraphiQL's Headers pane holds in sign-in mode: where the caller's own JWT goes. */
export const SIGN_IN_PLACEHOLDER = '<pegue aquí el JWT de inicio de sesión de su proveedor de identidad>';

function escapeJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Yoga's GraphiQL page, with the bundle and workers taken from ASSETS_PATH. The bundle
 * reads its opening document from `query` (not `defaultQuery`, which it ignores).
 */
export function renderGraphiQL(options: GraphiQLOptions): string {
  const opts = { ...options, query: options.defaultQuery };
  const title = escapeHtml(opts.title ?? 'GraphiQL');
  const workers = {
    editorWorkerService: `${ASSETS_PATH}monacoeditorwork/editor.worker.bundle.js`,
    json: `${ASSETS_PATH}monacoeditorwork/json.worker.bundle.js`,
    graphql: `${ASSETS_PATH}monacoeditorwork/graphql.worker..bundle.js`,
  };
  return `<!doctype html><html lang="es"><head><meta charset="utf-8"><title>${title}</title>
<link rel="icon" href="data:,"><link rel="stylesheet" href="${ASSETS_PATH}graphiql.css"></head>
<body id="body" class="no-focus-outline"><noscript>GraphiQL necesita JavaScript.</noscript><div id="root">Cargando ${title}...</div>
<script>
const workers = {};
const workerUrls = ${escapeJson(workers)};
function prepareWorkers() {
  return Promise.all(Object.entries(workerUrls).map(async ([name, url]) => {
    const text = await (await fetch(url)).text();
    workers[name] = URL.createObjectURL(new Blob([text], { type: 'application/javascript' }));
  }));
}
self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (_id, label) => workers[label] };
</script>
<script src="${ASSETS_PATH}yoga-graphiql.umd.js"></script>
<script>prepareWorkers().finally(() => YogaGraphiQL.renderYogaGraphiQL(root, ${escapeJson(opts)}));</script>
</body></html>`;
}

/** Serves the GraphiQL bundle files, read once and kept in memory (only once asked for). */
export function useGraphiQLAssets(): Plugin {
  const cache = new Map<string, Promise<Buffer>>();
  const plugin: Plugin = {
    async onRequest({ url, request, endResponse, fetchAPI }) {
      if (!url.pathname.startsWith(ASSETS_PATH)) return;
      const name = url.pathname.slice(ASSETS_PATH.length);
      const type = FILES.get(name);
      if (!type || (request.method !== 'GET' && request.method !== 'HEAD')) {
        const refusal = errorAnswer(worded('graphiqlFileNotFound', { path: GRAPHQL_PATH }));
        endResponse(new fetchAPI.Response(refusal.body, { status: 404, headers: refusal.headers }));
        return;
      }
      let file = cache.get(name);
      if (!file) {
        file = readFile(join(DIST, name));
        cache.set(name, file);
      }
      const body = await file;
      endResponse(
        new fetchAPI.Response(request.method === 'HEAD' ? null : new Uint8Array(body), {
          status: 200,
          headers: { 'content-type': type, 'content-length': String(body.length), 'cache-control': 'public, max-age=86400' },
        }),
      );
    },
  };
  return plugin;
}
