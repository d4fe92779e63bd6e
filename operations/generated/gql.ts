/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "fragment ValidacionCampos on ValidacionComprobantes {\n  cantidadDeComprobantes\n  comprobantes {\n    serieDocumento\n    numeroDocumento\n    comprobanteEstadoDescripcion\n    observaciones\n  }\n}\n\nmutation ValidarComprobantes($comprobantes: [ComprobanteInput!]!) {\n  validarComprobantes(comprobantes: $comprobantes) {\n    ...ValidacionCampos\n  }\n}\n\nmutation ValidarComprobantesTexto($comprobantes: [String!]!, $credencialesSol: CredencialesSolInput) {\n  validarComprobantesTexto(\n    comprobantes: $comprobantes\n    credencialesSol: $credencialesSol\n  ) {\n    ...ValidacionCampos\n  }\n}": typeof types.ValidacionCamposFragmentDoc,
    "fragment ContribuyenteCampos on Contribuyente {\n  ruc\n  nombreORazonSocial\n  estado\n  condicion\n  direccion\n  departamento\n  esAgenteDeRetencion\n  esBuenContribuyente\n}\n\nfragment DetalleCampos on ContribuyenteDetalle {\n  ruc\n  nombreORazonSocial\n  estado\n  condicion\n  direccionCompleta\n  tipoContribuyente\n  fechaInscripcion\n  actividadesEconomicas\n}\n\nquery Contribuyente($ruc: String!) {\n  contribuyente(ruc: $ruc) {\n    ...ContribuyenteCampos\n  }\n}\n\nquery ContribuyenteConDetalle($ruc: String!) {\n  contribuyente(ruc: $ruc) {\n    ...ContribuyenteCampos\n    detalle {\n      ...DetalleCampos\n    }\n  }\n}\n\nquery Contribuyentes($rucs: [String!]!) {\n  contribuyentes(rucs: $rucs) {\n    ruc\n    nombreORazonSocial\n  }\n}\n\nquery ContribuyenteDetalle($ruc: String!) {\n  contribuyenteDetalle(ruc: $ruc) {\n    ...DetalleCampos\n  }\n}\n\nquery MismoRucDeVariasFormas($ruc: String!) {\n  primero: contribuyente(ruc: $ruc) {\n    ...ConDetalle\n  }\n  segundo: contribuyente(ruc: $ruc) {\n    ruc\n    detalle {\n      ruc\n    }\n  }\n  contribuyenteDetalle(ruc: $ruc) {\n    nombreORazonSocial\n  }\n  contribuyentes(rucs: [$ruc, $ruc, $ruc]) {\n    ...ConDetalle\n  }\n}\n\nfragment ConDetalle on Contribuyente {\n  nombreORazonSocial\n  detalle {\n    actividadesEconomicas\n  }\n}": typeof types.ContribuyenteCamposFragmentDoc,
    "query Ejemplo($ruc: String!, $numLicencia: String!) {\n  contribuyente(ruc: $ruc) {\n    ruc\n    nombreORazonSocial\n    estado\n    condicion\n    esAgenteDeRetencion\n    detalle {\n      tipoContribuyente\n      fechaInscripcion\n      actividadesEconomicas\n    }\n  }\n  licencia(numLicencia: $numLicencia) {\n    nombres\n    apellidoPaterno\n    apellidoMaterno\n  }\n}": typeof types.EjemploDocument,
    "query Licencia($numLicencia: String!) {\n  licencia(numLicencia: $numLicencia) {\n    numLicencia\n    tipoDocumento\n    numeroDocumento\n    nombres\n    apellidoPaterno\n    apellidoMaterno\n  }\n}": typeof types.LicenciaDocument,
};
const documents: Documents = {
    "fragment ValidacionCampos on ValidacionComprobantes {\n  cantidadDeComprobantes\n  comprobantes {\n    serieDocumento\n    numeroDocumento\n    comprobanteEstadoDescripcion\n    observaciones\n  }\n}\n\nmutation ValidarComprobantes($comprobantes: [ComprobanteInput!]!) {\n  validarComprobantes(comprobantes: $comprobantes) {\n    ...ValidacionCampos\n  }\n}\n\nmutation ValidarComprobantesTexto($comprobantes: [String!]!, $credencialesSol: CredencialesSolInput) {\n  validarComprobantesTexto(\n    comprobantes: $comprobantes\n    credencialesSol: $credencialesSol\n  ) {\n    ...ValidacionCampos\n  }\n}": types.ValidacionCamposFragmentDoc,
    "fragment ContribuyenteCampos on Contribuyente {\n  ruc\n  nombreORazonSocial\n  estado\n  condicion\n  direccion\n  departamento\n  esAgenteDeRetencion\n  esBuenContribuyente\n}\n\nfragment DetalleCampos on ContribuyenteDetalle {\n  ruc\n  nombreORazonSocial\n  estado\n  condicion\n  direccionCompleta\n  tipoContribuyente\n  fechaInscripcion\n  actividadesEconomicas\n}\n\nquery Contribuyente($ruc: String!) {\n  contribuyente(ruc: $ruc) {\n    ...ContribuyenteCampos\n  }\n}\n\nquery ContribuyenteConDetalle($ruc: String!) {\n  contribuyente(ruc: $ruc) {\n    ...ContribuyenteCampos\n    detalle {\n      ...DetalleCampos\n    }\n  }\n}\n\nquery Contribuyentes($rucs: [String!]!) {\n  contribuyentes(rucs: $rucs) {\n    ruc\n    nombreORazonSocial\n  }\n}\n\nquery ContribuyenteDetalle($ruc: String!) {\n  contribuyenteDetalle(ruc: $ruc) {\n    ...DetalleCampos\n  }\n}\n\nquery MismoRucDeVariasFormas($ruc: String!) {\n  primero: contribuyente(ruc: $ruc) {\n    ...ConDetalle\n  }\n  segundo: contribuyente(ruc: $ruc) {\n    ruc\n    detalle {\n      ruc\n    }\n  }\n  contribuyenteDetalle(ruc: $ruc) {\n    nombreORazonSocial\n  }\n  contribuyentes(rucs: [$ruc, $ruc, $ruc]) {\n    ...ConDetalle\n  }\n}\n\nfragment ConDetalle on Contribuyente {\n  nombreORazonSocial\n  detalle {\n    actividadesEconomicas\n  }\n}": types.ContribuyenteCamposFragmentDoc,
    "query Ejemplo($ruc: String!, $numLicencia: String!) {\n  contribuyente(ruc: $ruc) {\n    ruc\n    nombreORazonSocial\n    estado\n    condicion\n    esAgenteDeRetencion\n    detalle {\n      tipoContribuyente\n      fechaInscripcion\n      actividadesEconomicas\n    }\n  }\n  licencia(numLicencia: $numLicencia) {\n    nombres\n    apellidoPaterno\n    apellidoMaterno\n  }\n}": types.EjemploDocument,
    "query Licencia($numLicencia: String!) {\n  licencia(numLicencia: $numLicencia) {\n    numLicencia\n    tipoDocumento\n    numeroDocumento\n    nombres\n    apellidoPaterno\n    apellidoMaterno\n  }\n}": types.LicenciaDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "fragment ValidacionCampos on ValidacionComprobantes {\n  cantidadDeComprobantes\n  comprobantes {\n    serieDocumento\n    numeroDocumento\n    comprobanteEstadoDescripcion\n    observaciones\n  }\n}\n\nmutation ValidarComprobantes($comprobantes: [ComprobanteInput!]!) {\n  validarComprobantes(comprobantes: $comprobantes) {\n    ...ValidacionCampos\n  }\n}\n\nmutation ValidarComprobantesTexto($comprobantes: [String!]!, $credencialesSol: CredencialesSolInput) {\n  validarComprobantesTexto(\n    comprobantes: $comprobantes\n    credencialesSol: $credencialesSol\n  ) {\n    ...ValidacionCampos\n  }\n}"): (typeof documents)["fragment ValidacionCampos on ValidacionComprobantes {\n  cantidadDeComprobantes\n  comprobantes {\n    serieDocumento\n    numeroDocumento\n    comprobanteEstadoDescripcion\n    observaciones\n  }\n}\n\nmutation ValidarComprobantes($comprobantes: [ComprobanteInput!]!) {\n  validarComprobantes(comprobantes: $comprobantes) {\n    ...ValidacionCampos\n  }\n}\n\nmutation ValidarComprobantesTexto($comprobantes: [String!]!, $credencialesSol: CredencialesSolInput) {\n  validarComprobantesTexto(\n    comprobantes: $comprobantes\n    credencialesSol: $credencialesSol\n  ) {\n    ...ValidacionCampos\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "fragment ContribuyenteCampos on Contribuyente {\n  ruc\n  nombreORazonSocial\n  estado\n  condicion\n  direccion\n  departamento\n  esAgenteDeRetencion\n  esBuenContribuyente\n}\n\nfragment DetalleCampos on ContribuyenteDetalle {\n  ruc\n  nombreORazonSocial\n  estado\n  condicion\n  direccionCompleta\n  tipoContribuyente\n  fechaInscripcion\n  actividadesEconomicas\n}\n\nquery Contribuyente($ruc: String!) {\n  contribuyente(ruc: $ruc) {\n    ...ContribuyenteCampos\n  }\n}\n\nquery ContribuyenteConDetalle($ruc: String!) {\n  contribuyente(ruc: $ruc) {\n    ...ContribuyenteCampos\n    detalle {\n      ...DetalleCampos\n    }\n  }\n}\n\nquery Contribuyentes($rucs: [String!]!) {\n  contribuyentes(rucs: $rucs) {\n    ruc\n    nombreORazonSocial\n  }\n}\n\nquery ContribuyenteDetalle($ruc: String!) {\n  contribuyenteDetalle(ruc: $ruc) {\n    ...DetalleCampos\n  }\n}\n\nquery MismoRucDeVariasFormas($ruc: String!) {\n  primero: contribuyente(ruc: $ruc) {\n    ...ConDetalle\n  }\n  segundo: contribuyente(ruc: $ruc) {\n    ruc\n    detalle {\n      ruc\n    }\n  }\n  contribuyenteDetalle(ruc: $ruc) {\n    nombreORazonSocial\n  }\n  contribuyentes(rucs: [$ruc, $ruc, $ruc]) {\n    ...ConDetalle\n  }\n}\n\nfragment ConDetalle on Contribuyente {\n  nombreORazonSocial\n  detalle {\n    actividadesEconomicas\n  }\n}"): (typeof documents)["fragment ContribuyenteCampos on Contribuyente {\n  ruc\n  nombreORazonSocial\n  estado\n  condicion\n  direccion\n  departamento\n  esAgenteDeRetencion\n  esBuenContribuyente\n}\n\nfragment DetalleCampos on ContribuyenteDetalle {\n  ruc\n  nombreORazonSocial\n  estado\n  condicion\n  direccionCompleta\n  tipoContribuyente\n  fechaInscripcion\n  actividadesEconomicas\n}\n\nquery Contribuyente($ruc: String!) {\n  contribuyente(ruc: $ruc) {\n    ...ContribuyenteCampos\n  }\n}\n\nquery ContribuyenteConDetalle($ruc: String!) {\n  contribuyente(ruc: $ruc) {\n    ...ContribuyenteCampos\n    detalle {\n      ...DetalleCampos\n    }\n  }\n}\n\nquery Contribuyentes($rucs: [String!]!) {\n  contribuyentes(rucs: $rucs) {\n    ruc\n    nombreORazonSocial\n  }\n}\n\nquery ContribuyenteDetalle($ruc: String!) {\n  contribuyenteDetalle(ruc: $ruc) {\n    ...DetalleCampos\n  }\n}\n\nquery MismoRucDeVariasFormas($ruc: String!) {\n  primero: contribuyente(ruc: $ruc) {\n    ...ConDetalle\n  }\n  segundo: contribuyente(ruc: $ruc) {\n    ruc\n    detalle {\n      ruc\n    }\n  }\n  contribuyenteDetalle(ruc: $ruc) {\n    nombreORazonSocial\n  }\n  contribuyentes(rucs: [$ruc, $ruc, $ruc]) {\n    ...ConDetalle\n  }\n}\n\nfragment ConDetalle on Contribuyente {\n  nombreORazonSocial\n  detalle {\n    actividadesEconomicas\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query Ejemplo($ruc: String!, $numLicencia: String!) {\n  contribuyente(ruc: $ruc) {\n    ruc\n    nombreORazonSocial\n    estado\n    condicion\n    esAgenteDeRetencion\n    detalle {\n      tipoContribuyente\n      fechaInscripcion\n      actividadesEconomicas\n    }\n  }\n  licencia(numLicencia: $numLicencia) {\n    nombres\n    apellidoPaterno\n    apellidoMaterno\n  }\n}"): (typeof documents)["query Ejemplo($ruc: String!, $numLicencia: String!) {\n  contribuyente(ruc: $ruc) {\n    ruc\n    nombreORazonSocial\n    estado\n    condicion\n    esAgenteDeRetencion\n    detalle {\n      tipoContribuyente\n      fechaInscripcion\n      actividadesEconomicas\n    }\n  }\n  licencia(numLicencia: $numLicencia) {\n    nombres\n    apellidoPaterno\n    apellidoMaterno\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query Licencia($numLicencia: String!) {\n  licencia(numLicencia: $numLicencia) {\n    numLicencia\n    tipoDocumento\n    numeroDocumento\n    nombres\n    apellidoPaterno\n    apellidoMaterno\n  }\n}"): (typeof documents)["query Licencia($numLicencia: String!) {\n  licencia(numLicencia: $numLicencia) {\n    numLicencia\n    tipoDocumento\n    numeroDocumento\n    nombres\n    apellidoPaterno\n    apellidoMaterno\n  }\n}"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;