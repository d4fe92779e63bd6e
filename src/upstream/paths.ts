/** The batch validations' paths (rest-api.md); each lookup's path is in its row (./lookups.ts). */
export const REST = {
  validacion: '/validacion-multiple-cpe',
  validacionTexto: '/validacion-multiple-cpe-v2',
} as const;
