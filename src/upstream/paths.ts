/**
 * The REST operations' paths (rest-api.md), named once: the client calls them, the price list is
 * keyed by them, and the schema's descriptions and errors name them.
 */
export const REST = {
  ruc: '/ruc',
  rucSunat: '/ruc-sunat',
  licencia: '/licencia-conducir',
  /** Beyond the spec (upstream-notes, "More operations of the same service"). */
  dni: '/dni',
  representantes: '/ruc-representantes',
  establecimientos: '/ruc-establecimientos-anexos',
  tipoDeCambio: '/tipo-de-cambio',
  validacion: '/validacion-multiple-cpe',
  validacionTexto: '/validacion-multiple-cpe-v2',
} as const;
