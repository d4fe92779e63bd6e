/**
 * A small typed client of the gateway: the TypedDocumentNode documents that `npm run codegen`
 * generates from operations/*.graphql (with their hashes, operations/generated/), plain `fetch`,
 * and errors narrowed by `extensions.code` (the schema's ErrorCode enum).
 *
 *   GATEWAY_URL=http://localhost:4000/graphql GATEWAY_TOKEN=sandbox-pro npx tsx examples/client.ts
 *   GATEWAY_DOCUMENT_IDS=1 ...   against a gateway with TRUSTED_DOCUMENTS: documentIds only
 */
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import type { ErrorCode } from '../operations/generated/enums.js';
import { EjemploDocument, ValidarComprobantesDocument } from '../operations/generated/graphql.js';

/** One error of the gateway, as the contract describes it. */
export interface GatewayError {
  message: string;
  path?: (string | number)[];
  extensions: {
    code: ErrorCode;
    retryable: boolean;
    upstreamCode?: string;
    retryAfterSeconds?: number;
    /** BUDGET_EXCEEDED (sign-in mode): the user's standing. */
    budget?: { limit: number; spent: number; resetAt: string };
  };
}

export interface Cost {
  estimated: number;
  limit: number;
  queries: number;
  upstreamCalls: number;
  cacheHits: number;
}

export interface Result<R> {
  data: R | null | undefined;
  errors: GatewayError[];
  cost: Cost | undefined;
}

/**
 * Sends one typed operation; the result's type follows the document. With `documentIds`, only
 * the document's hash goes (its `documentId`, from operations/generated/), as a gateway with
 * TRUSTED_DOCUMENTS requires; otherwise the document itself.
 */
export async function execute<R, V>(
  url: string,
  token: string,
  document: TypedDocumentNode<R, V>,
  variables: V,
  options: { documentIds?: boolean } = {},
): Promise<Result<R>> {
  const documentId = (document as { __meta__?: { hash?: string } }).__meta__?.hash;
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(options.documentIds && documentId ? { documentId, variables } : { query: print(document), variables }),
  });
  const body = (await response.json()) as { data?: R | null; errors?: GatewayError[]; extensions?: { cost?: Cost } };
  return { data: body.data, errors: body.errors ?? [], cost: body.extensions?.cost };
}

/** What a caller should do about an error: the `code` decides, and TypeScript checks every case. */
export function advice(error: GatewayError): string {
  const code = error.extensions.code;
  switch (code) {
    case 'INVALID_INPUT':
    case 'BAD_USER_INPUT':
      return `fix the input: ${error.message}`;
    case 'DOCUMENT_NOT_FOUND':
      return 'no such document: show "not found"';
    case 'UNAUTHENTICATED':
      return 'send a valid token';
    case 'FORBIDDEN':
      return 'the plan does not allow this';
    case 'QUOTA_EXCEEDED':
      return `out of plan queries: ${error.message}`;
    case 'UPSTREAM_UNAVAILABLE':
      return error.extensions.retryable ? 'try again in a few seconds' : 'the service refused; do not retry';
    case 'RATE_LIMITED':
      return `the service throttles this token: try again in ${error.extensions.retryAfterSeconds ?? 'a few'} seconds`;
    case 'OVERLOADED':
    case 'REQUEST_TIMEOUT':
      return 'try again in a second';
    case 'AUTH_UNAVAILABLE':
      return 'the sign-in provider is out of reach: try again in a few seconds';
    case 'BUDGET_UNAVAILABLE':
      return 'the budget count is out of reach: try again in a few seconds';
    case 'BUDGET_EXCEEDED':
      return `your budget is spent until ${error.extensions.budget?.resetAt ?? 'the window ends'}`;
    case 'NOT_FOUND':
      return 'send operations to /graphql';
    case 'OPERATION_NOT_SUPPORTED':
      return 'use a query or a mutation';
    case 'COST_LIMIT_EXCEEDED':
    case 'ALIAS_LIMIT_EXCEEDED':
    case 'DEPTH_LIMIT_EXCEEDED':
    case 'TOKEN_LIMIT_EXCEEDED':
    case 'DIRECTIVE_LIMIT_EXCEEDED':
    case 'REQUEST_ENTITY_TOO_LARGE':
      return 'split the operation';
    case 'UPSTREAM_ERROR':
    case 'INTERNAL_SERVER_ERROR':
    case 'GRAPHQL_PARSE_FAILED':
    case 'GRAPHQL_VALIDATION_FAILED':
    case 'BAD_REQUEST':
    case 'CSRF_HEADER_REQUIRED':
    case 'PERSISTED_QUERY_MISMATCH':
      return 'a bug to report';
    case 'PERSISTED_QUERY_NOT_FOUND':
      return 'send the document with its hash';
    case 'SECRET_IN_DOCUMENT':
      return 'send the SOL credentials in a variable, never written in the document';
    case 'DOCUMENT_NOT_TRUSTED':
      return 'this gateway runs only the documents it ships with: send their documentId';
    case 'REGISTER_UNAVAILABLE':
      return 'search needs the register the gateway keeps: retry once /health says ready (or turn PADRON on)';
    case 'SUNAT_CREDENTIALS_REJECTED':
      return "check the company's SUNAT API credentials (client id, secret, RUC) in SUNAT Operaciones en Línea";
    default: {
      // A code this client does not know yet (the enum may grow): fall back on `retryable`.
      const unknown: never = code;
      return `unknown code ${String(unknown)}`;
    }
  }
}

async function demo() {
  const url = process.env['GATEWAY_URL'] ?? 'http://localhost:4000/graphql';
  const token = process.env['GATEWAY_TOKEN'] ?? 'sandbox-pro';
  // For a gateway started with TRUSTED_DOCUMENTS=operations/generated/persisted-documents.json.
  const documentIds = process.env['GATEWAY_DOCUMENT_IDS'] === '1';

  const ejemplo = await execute(url, token, EjemploDocument, { ruc: '20100123453', numLicencia: 'Q46779354' }, { documentIds });
  // Typed: `contribuyente` may be null, `detalle` too; `nombres` is string | null.
  console.log(`contribuyente: ${ejemplo.data?.contribuyente?.nombreORazonSocial ?? '(none)'}`);
  console.log(`actividades: ${ejemplo.data?.contribuyente?.detalle?.actividadesEconomicas.join('; ') ?? '(none)'}`);
  console.log(`licencia: ${ejemplo.data?.licencia?.nombres ?? '(none)'} ${ejemplo.data?.licencia?.apellidoPaterno ?? ''}`);
  console.log(`titular: DNI ${ejemplo.data?.licencia?.titular?.dni ?? '(none)'}`);
  console.log(`cost: ${JSON.stringify(ejemplo.cost)}`);

  const malo = await execute(url, token, EjemploDocument, { ruc: '20100123454', numLicencia: 'Q46779354' }, { documentIds });
  for (const error of malo.errors) console.log(`error ${error.extensions.code} at ${error.path?.join('.')}: ${advice(error)}`);

  const validacion = await execute(
    url,
    token,
    ValidarComprobantesDocument,
    {
      comprobantes: [
        {
          rucEmisor: '20100123453',
          codigoTipoDocumento: '01',
          serieDocumento: 'F001',
          numeroDocumento: '1532',
          fechaDeEmision: '2026-10-01',
          total: '1180.00',
        },
      ],
    },
    { documentIds },
  );
  // In input order; null where the receipt's upstream call failed (its error says which receipts).
  for (const c of validacion.data?.validarComprobantes?.comprobantes ?? []) {
    console.log(
      c ? `comprobante ${c.serieDocumento}-${c.numeroDocumento}: ${c.comprobanteEstadoDescripcion ?? '?'}` : 'comprobante sin resultado',
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  demo().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
