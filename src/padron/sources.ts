/**
 * SUNAT's five public registers (upstream-notes, "SUNAT's public registers"): the reduced RUC
 * register and the four whose listing sets a flag, each where SUNAT publishes it.
 */
export const PADRON_ZIP = 'padron_reducido_ruc.zip';

/** The flag registers: a RUC listed is `SI` for its flag, absent `NO`. */
export const FLAG_REGISTERS = [
  { flag: 'es_agente_de_retencion', zip: 'AgenRet_TXT.zip', url: 'https://ww1.sunat.gob.pe/descarga/AgentRet/AgenRet_TXT.zip' },
  { flag: 'es_buen_contribuyente', zip: 'BueCont_TXT.zip', url: 'https://ww3.sunat.gob.pe/descarga/BueCont/BueCont_TXT.zip' },
  { flag: 'es_agente_de_percepcion', zip: 'AgenPercVI_TXT.zip', url: 'https://ww1.sunat.gob.pe/descarga/AgentRet/AgenPercVI_TXT.zip' },
  {
    flag: 'es_agente_de_percepcion_combustible',
    zip: 'AgenPerc_TXT.zip',
    url: 'https://ww1.sunat.gob.pe/descarga/AgentRet/AgenPerc_TXT.zip',
  },
] as const;

export type FlagName = (typeof FLAG_REGISTERS)[number]['flag'];

const SUNAT_PADRON_URL = `https://www2.sunat.gob.pe/${PADRON_ZIP}`;

/** Where each zip is fetched from: SUNAT's own addresses, or a mirror holding them under SUNAT's file names. */
export function sourceUrls(base: 'sunat' | URL): { padron: string; flags: string[] } {
  if (base === 'sunat') return { padron: SUNAT_PADRON_URL, flags: FLAG_REGISTERS.map((r) => r.url) };
  const at = (name: string) => new URL(name, base.href.endsWith('/') ? base : new URL(`${base.href}/`)).href;
  return { padron: at(PADRON_ZIP), flags: FLAG_REGISTERS.map((r) => at(r.zip)) };
}
