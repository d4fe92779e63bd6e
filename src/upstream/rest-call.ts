import type { CircuitBreakerPolicy } from 'cockatiel';
import type { Origin } from './origin.js';
import type { Reader } from './reader.js';
import { PLAN_COST } from './billing.js';
import { REST } from './paths.js';
import {
  readDniRecord,
  readEstablecimientos,
  readRepresentantes,
  type EstablecimientosRecord,
  type RepresentantesRecord,
  readLicenciaRecord,
  readRucRecord,
  readRucSunatRecord,
  readTipoDeCambio,
  MONEDA,
  type TipoDeCambioRecord,
  type DniRecord,
  type LicenciaRecord,
  type RucRecord,
  type RucSunatRecord,
} from './schemas.js';

/** Where a call goes: an origin and its breaker. */
export interface Route {
  name: 'primary' | 'fallback';
  origin: Origin;
  breaker: CircuitBreakerPolicy;
}

/** One REST call: where, what, how to read the answer, and its plan cost. */
export interface RestCall<T> {
  path: string;
  body: unknown;
  read: Reader<T>;
  cost: number;
  /** Values the body carries that no answer, log line or trace may show (SOL credentials). */
  secrets?: readonly string[] | undefined;
  /** A lookup's check that the record is the document asked for. */
  isOther?: (record: T) => boolean;
}

/**
 * Each lookup's call for one key: its path, body, reader and price, and how to tell another
 * document's record (the service may spell a licence number in another case; any other
 * difference is another licence).
 */
export const LOOKUP_CALLS = {
  ruc: (ruc: string): RestCall<RucRecord> => ({
    path: REST.ruc,
    body: { ruc },
    read: readRucRecord,
    cost: PLAN_COST[REST.ruc],
    isOther: (r) => r.ruc.trim() !== ruc,
  }),
  rucSunat: (ruc: string): RestCall<RucSunatRecord> => ({
    path: REST.rucSunat,
    body: { ruc },
    read: readRucSunatRecord,
    cost: PLAN_COST[REST.rucSunat],
    isOther: (r) => r.ruc.trim() !== ruc,
  }),
  licencia: (numLicencia: string): RestCall<LicenciaRecord> => ({
    path: REST.licencia,
    body: { num_licencia: numLicencia },
    read: readLicenciaRecord,
    cost: PLAN_COST[REST.licencia],
    isOther: (r) => r.num_licencia.trim().toUpperCase() !== numLicencia.toUpperCase(),
  }),
  dni: (dni: string): RestCall<DniRecord> => ({
    path: REST.dni,
    body: { dni },
    read: readDniRecord,
    cost: PLAN_COST[REST.dni],
    isOther: (r) => r.numero.trim() !== dni,
  }),
  representantes: (ruc: string): RestCall<RepresentantesRecord> => ({
    path: REST.representantes,
    body: { ruc },
    read: readRepresentantes,
    cost: PLAN_COST[REST.representantes],
  }),
  establecimientos: (ruc: string): RestCall<EstablecimientosRecord> => ({
    path: REST.establecimientos,
    body: { ruc },
    read: readEstablecimientos,
    cost: PLAN_COST[REST.establecimientos],
  }),
  // A rate published after the date asked is another date's.
  tipoDeCambio: (fecha: string): RestCall<TipoDeCambioRecord> => ({
    path: REST.tipoDeCambio,
    body: { fecha, moneda: MONEDA },
    read: readTipoDeCambio(fecha),
    cost: PLAN_COST[REST.tipoDeCambio],
    isOther: (r) => r.fecha_sunat !== null && /^\d{4}-\d{2}-\d{2}$/.test(r.fecha_sunat) && r.fecha_sunat > fecha,
  }),
};
