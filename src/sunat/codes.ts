/**
 * SUNAT's codes in a `validarcomprobante` answer and their descriptions (docs/sunat.md, as public
 * clients show them). A code the tables lack keeps its text with no description.
 */

/** `estadoCp`, read as a number: `"0001"` is `1`. */
export const ESTADO_COMPROBANTE: Readonly<Record<string, string>> = {
  '0': 'NO EXISTE',
  '1': 'ACEPTADO',
  '2': 'ANULADO',
  '3': 'AUTORIZADO',
  '4': 'NO AUTORIZADO',
};

/** `estadoRuc`, kept as sent (`"00"`). */
export const ESTADO_RUC: Readonly<Record<string, string>> = {
  '00': 'ACTIVO',
  '01': 'BAJA PROVISIONAL',
  '02': 'BAJA PROV. POR OFICIO',
  '03': 'SUSPENSION TEMPORAL',
  '10': 'BAJA DEFINITIVA',
  '11': 'BAJA DE OFICIO',
  '12': 'BAJA MULT.INSCR. Y OTROS',
  '20': 'NUM. INTERNO IDENTIF.',
  '21': 'OTROS OBLIGADOS',
  '22': 'INHABILITADO-VENT.UNICA',
  '30': 'ANULACION - ERROR SUNAT',
};

/** `condDomiRuc`, kept as sent: `01` to `08` are each NO HALLADO and its reason. */
export const CONDICION_DOMICILIO: Readonly<Record<string, string>> = {
  '00': 'HABIDO',
  '01': 'NO HALLADO SE MUDO DE DOMICILIO',
  '02': 'NO HALLADO FALLECIO',
  '03': 'NO HALLADO NO EXISTE DOMICILIO',
  '04': 'NO HALLADO CERRADO',
  '05': 'NO HALLADO NRO.PUERTA NO EXISTE',
  '06': 'NO HALLADO DESTINATARIO DESCONOCIDO',
  '07': 'NO HALLADO RECHAZADO',
  '08': 'NO HALLADO OTROS MOTIVOS',
  '09': 'PENDIENTE',
  '10': 'NO APLICABLE',
  '11': 'POR VERIFICAR',
  '12': 'NO HABIDO',
  '20': 'NO HALLADO',
  '21': 'NO EXISTE LA DIRECCION DECLARADA',
  '22': 'DOMICILIO CERRADO',
  '23': 'NEGATIVA RECEPCION X PERSONA CAPAZ',
  '24': 'AUSENCIA DE PERSONA CAPAZ',
  '25': 'NO APLICABLE X TRAMITE DE REVERSION',
  '40': 'DEVUELTO',
};

/** `estadoCp` as the gateway keeps it: a number's text (`"0001"` -> `"1"`); anything else as sent. */
export function estadoCpOf(sent: string): string {
  return /^\d{1,6}$/.test(sent) ? String(Number(sent)) : sent;
}

/** A code's description, or null for one the table lacks. */
export const describe = (table: Readonly<Record<string, string>>, code: string | null): string | null =>
  code !== null && Object.hasOwn(table, code) ? table[code]! : null;
