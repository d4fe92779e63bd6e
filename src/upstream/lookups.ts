import type { Config } from '../config.js';
import { isPastInLima } from './dates.js';
import { checkDni, checkFecha, checkNumLicencia, checkRuc, companyRuc, type Checked } from './keys.js';
import type { Reader } from './reader.js';
import {
  MONEDA,
  readDniRecord,
  readEstablecimientos,
  readLicenciaRecord,
  readRepresentantes,
  readRucRecord,
  readRucSunatRecord,
  readTipoDeCambio,
  type DniRecord,
  type EstablecimientosRecord,
  type LicenciaRecord,
  type RepresentantesRecord,
  type RucRecord,
  type RucSunatRecord,
  type TipoDeCambioRecord,
} from './schemas.js';

/** The configured times to live (config.cache.ttlMs) a row picks its record's from. */
export type Ttls = Config['cache']['ttlMs'];

/** Everything about one lookup, stated once. */
export interface Lookup<T> {
  /** Its REST path (rest-api.md, or upstream-notes for those beyond the spec). */
  path: string;
  /** The JSON body the service takes for a key. */
  body: (key: string) => unknown;
  /** How the answer is read into a record, for that key. */
  read: (key: string) => Reader<T>;
  /** Plan queries one call costs: the price list's entry. */
  price: number;
  /** How long a found record is kept, for that key. */
  ttl: (key: string, ttls: Ttls) => number;
  /** The check of a key before any call: an invalid key costs nothing, and a normalized key is looked up once. */
  key: (input: string) => Checked<string>;
  /** SUNAT's register kept by the gateway answers it (by RUC) before the cache and the service. */
  register?: boolean;
  /** The record answers another document than the key (billed, and never shown). */
  isOther?: (record: T, key: string) => boolean;
}

const row = <T>(lookup: Lookup<T>): Lookup<T> => lookup;
const always =
  <T>(reader: Reader<T>) =>
  () =>
    reader;

/**
 * The lookups: one row each, from which the client's call, the loaders, the cache's keys and
 * times to live, the price list, the cost declarations and the metric labels are derived. A new
 * lookup is a row here, its reader (./schemas.ts) and its schema file (docs/architecture.md).
 */
const TABLE = {
  ruc: row<RucRecord>({
    path: '/ruc',
    body: (ruc) => ({ ruc }),
    read: always(readRucRecord),
    price: 1,
    ttl: (_, t) => t.ruc,
    key: checkRuc,
    register: true,
    isOther: (r, ruc) => r.ruc.trim() !== ruc,
  }),
  rucSunat: row<RucSunatRecord>({
    path: '/ruc-sunat',
    body: (ruc) => ({ ruc }),
    read: always(readRucSunatRecord),
    price: 1,
    ttl: (_, t) => t.rucSunat,
    key: checkRuc,
    isOther: (r, ruc) => r.ruc.trim() !== ruc,
  }),
  // The service may spell a licence number in another case; any other difference is another licence.
  licencia: row<LicenciaRecord>({
    path: '/licencia-conducir',
    body: (numLicencia) => ({ num_licencia: numLicencia }),
    read: always(readLicenciaRecord),
    price: 2,
    ttl: (_, t) => t.licencia,
    key: checkNumLicencia,
    isOther: (r, numLicencia) => r.num_licencia.trim().toUpperCase() !== numLicencia.toUpperCase(),
  }),
  // Not published per operation: public clients count 1 query per call (upstream-notes, "More operations").
  dni: row<DniRecord>({
    path: '/dni',
    body: (dni) => ({ dni }),
    read: always(readDniRecord),
    price: 1,
    ttl: (_, t) => t.dni,
    key: checkDni,
    isOther: (r, dni) => r.numero.trim() !== dni,
  }),
  representantes: row<RepresentantesRecord>({
    path: '/ruc-representantes',
    body: (ruc) => ({ ruc }),
    read: always(readRepresentantes),
    price: 1,
    ttl: (_, t) => t.rucSunat,
    key: companyRuc,
  }),
  // One client notes that it "consumes one more query": one per call, as the others.
  establecimientos: row<EstablecimientosRecord>({
    path: '/ruc-establecimientos-anexos',
    body: (ruc) => ({ ruc }),
    read: always(readEstablecimientos),
    price: 1,
    ttl: (_, t) => t.rucSunat,
    key: companyRuc,
  }),
  // A past date's rate never changes; a rate published after the date asked is another date's.
  tipoDeCambio: row<TipoDeCambioRecord>({
    path: '/tipo-de-cambio',
    body: (fecha) => ({ fecha, moneda: MONEDA }),
    read: readTipoDeCambio,
    price: 1,
    ttl: (fecha, t) => (isPastInLima(fecha) ? t.pastRate : t.rate),
    key: checkFecha,
    isOther: (r, fecha) => r.fecha_sunat !== null && /^\d{4}-\d{2}-\d{2}$/.test(r.fecha_sunat) && r.fecha_sunat > fecha,
  }),
};

/** Each lookup's record, by the lookup's name. */
type Records = { [Op in keyof typeof TABLE]: (typeof TABLE)[Op] extends Lookup<infer T extends object> ? T : never };
export type LookupOp = keyof Records;
/** The record a lookup answers. */
export type RecordOf<Op extends LookupOp> = Records[Op];
/** The table, typed so that the row of any one lookup is that lookup's `Lookup<record>`. */
export const LOOKUPS: { readonly [Op in LookupOp]: Lookup<RecordOf<Op>> } = TABLE;
export const LOOKUP_OPS = Object.keys(LOOKUPS) as LookupOp[];
