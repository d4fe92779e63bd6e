import type { RateMonthStore } from '../sunat/rates.js';
import type { RedisLink } from './redis.js';

/** A month of SUNAT's rates is kept this long in Redis: a past month never changes, and 400 days cover any date asked again. */
const KEPT_S = 400 * 86_400;

/** SUNAT's months of exchange rates in Redis, shared by the fleet: a month one instance read, no other asks. */
export function redisRateMonths(link: RedisLink): RateMonthStore {
  const key = (month: string) => `tc:sunat:${month}`;
  return {
    get: async (month) => (await link.send((r) => r.get(key(month)))) ?? undefined,
    set: async (month, text) => void (await link.send((r) => r.set(key(month), text, 'EX', KEPT_S))),
  };
}
