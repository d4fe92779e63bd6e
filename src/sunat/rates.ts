import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LRUCache } from 'lru-cache';
import { Agent, request, type Dispatcher } from 'undici';
import { SUNAT_RATES_HOST } from '../config/sunat.js';
import { todayInLima } from '../upstream/dates.js';
import { SunatUnavailable } from './errors.js';

/** The month listing's path under SUNAT_RATES_HOST (docs/sunat.md). */
export const SUNAT_RATES_PATH = '/cl-at-ittipcam/tcS01Alias/listarTipoCambio';
/** The page the listing belongs to: SUNAT's firewall wants a browser's Referer and Origin. */
const PAGE = `${SUNAT_RATES_HOST}/cl-at-ittipcam/tcS01Alias`;

/** The current month is asked again at most this often, until the day asked is in it. */
const CURRENT_MONTH_MS = 3_600_000;
/** Months kept in memory: 30 years of them. */
const MONTHS_KEPT = 360;
const MAX_BODY = 256 * 1024;

/** One day's rate as SUNAT published it, its figures as text with three decimals at least. */
export interface SunatRate {
  /** The date asked, YYYY-MM-DD. */
  fecha: string;
  /** The business day whose rate it is: that day, or the last one before it. */
  fecha_sunat: string;
  moneda: 'USD';
  compra: string | null;
  venta: string | null;
  /** When the gateway read SUNAT's listing. */
  receivedAt: number;
  fuente: 'SUNAT';
}

/** Where read months are kept between restarts, and by a fleet: a file a month, or Redis. Best effort: a failure is a miss. */
export interface RateMonthStore {
  get(month: string): Promise<string | undefined>;
  set(month: string, text: string): Promise<void>;
}

interface Month {
  /** Business days published, ascending, with their figures. */
  days: { day: string; compra: string | null; venta: string | null }[];
  fetchedAt: number;
}

export interface SunatRatesOptions {
  /** SUNAT's host, the sandbox's URL, or a mirror's: the listing is `SUNAT_RATES_PATH` under it. */
  baseUrl: string;
  timeoutMs: number;
  store?: RateMonthStore | undefined;
}

/**
 * SUNAT's exchange rates from its month listing: each month asked once and kept (a past month
 * never changes; the current one is asked again at most hourly while the day wanted is not in
 * it), and a day without a rate answered by the last business day before it.
 */
export class SunatRates {
  readonly #agent: Dispatcher;
  readonly #months = new LRUCache<string, Month>({ max: MONTHS_KEPT });
  readonly #asking = new Map<string, Promise<Month>>();

  constructor(readonly options: SunatRatesOptions) {
    const { timeoutMs } = options;
    this.#agent = new Agent({ headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connectTimeout: timeoutMs });
  }

  /** The rate of `fecha` (YYYY-MM-DD); undefined when SUNAT published none up to it. SunatUnavailable when the listing cannot be read. */
  async on(fecha: string): Promise<SunatRate | undefined> {
    const [rate] = await this.between(fecha, fecha);
    return rate;
  }

  /** The rate of each day from `desde` to `hasta` (inclusive) that has one, in order. */
  async between(desde: string, hasta: string): Promise<SunatRate[]> {
    const keys = monthsFrom(desde.slice(0, 7), hasta.slice(0, 7));
    const months = await Promise.all(keys.map((key) => this.#month(key, key === hasta.slice(0, 7) ? hasta : `${key}-31`)));
    // The first days of a month may need the last business day of the one before.
    if (!months[0]!.days.some((d) => d.day <= desde)) {
      const before = previousMonth(keys[0]!);
      keys.unshift(before);
      months.unshift(await this.#month(before, `${before}-31`));
    }
    const published = months.flatMap((m) => m.days.map((d) => ({ ...d, fetchedAt: m.fetchedAt })));
    const answer: SunatRate[] = [];
    let at = -1;
    for (const fecha of daysFrom(desde, hasta)) {
      while (at + 1 < published.length && published[at + 1]!.day <= fecha) at++;
      const rate = published[at];
      if (!rate) continue;
      const { day, compra, venta, fetchedAt } = rate;
      answer.push({ fecha, fecha_sunat: day, moneda: 'USD', compra, venta, receivedAt: fetchedAt, fuente: 'SUNAT' });
    }
    return answer;
  }

  /** `key`'s month (YYYY-MM), read so that it holds `wanted` if it is published. */
  async #month(key: string, wanted: string): Promise<Month> {
    const kept = this.#months.get(key) ?? (await this.#fromStore(key));
    if (kept && this.#enough(key, kept, wanted)) return kept;
    let asking = this.#asking.get(key);
    if (!asking) {
      asking = this.#ask(key).finally(() => this.#asking.delete(key));
      this.#asking.set(key, asking);
    }
    return asking;
  }

  /** A kept month serves unless it is the current one, missing the day wanted, and read over an hour ago. */
  #enough(key: string, month: Month, wanted: string): boolean {
    if (key < todayInLima(month.fetchedAt).slice(0, 7)) return true;
    const last = month.days.at(-1)?.day ?? '';
    return last >= wanted || Date.now() - month.fetchedAt < CURRENT_MONTH_MS;
  }

  async #fromStore(key: string): Promise<Month | undefined> {
    const text = await this.options.store?.get(key).catch(() => undefined);
    if (!text) return undefined;
    try {
      const month = JSON.parse(text) as Month;
      if (!Array.isArray(month.days) || typeof month.fetchedAt !== 'number') return undefined;
      this.#months.set(key, month);
      return month;
    } catch {
      return undefined;
    }
  }

  async #ask(key: string): Promise<Month> {
    const [anio, mes] = key.split('-').map(Number) as [number, number];
    const rows = await this.#listing(anio, mes - 1);
    const month: Month = { days: daysOf(rows, key), fetchedAt: Date.now() };
    // An empty listing of a past month is SUNAT's firewall or a fault, not a month without rates.
    if (month.days.length === 0 && key < todayInLima().slice(0, 7) && key >= '2000-01')
      throw new SunatUnavailable(`SUNAT's listing of ${key} came empty`);
    this.#months.set(key, month);
    await this.options.store?.set(key, JSON.stringify(month)).catch(() => undefined);
    return month;
  }

  /** One POST of the listing: `mes` counts from 0, and an empty token answers nothing. */
  async #listing(anio: number, mes: number): Promise<unknown> {
    let answer: Dispatcher.ResponseData;
    try {
      answer = await request(new URL(SUNAT_RATES_PATH, this.options.baseUrl), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          referer: PAGE,
          origin: SUNAT_RATES_HOST,
          'user-agent': 'Mozilla/5.0 (X11; Linux x86_64)',
        },
        body: JSON.stringify({ anio, mes, token: randomBytes(16).toString('hex') }),
        dispatcher: this.#agent,
      });
    } catch (error) {
      throw new SunatUnavailable(`SUNAT's rates: ${error instanceof Error ? error.message : String(error)}`);
    }
    const { statusCode, body } = answer;
    if (statusCode !== 200) {
      await body.dump().catch(() => undefined);
      throw new SunatUnavailable(`SUNAT's rates: HTTP ${statusCode}`);
    }
    try {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        if ((size += chunk.length) > MAX_BODY) throw new Error('too large');
      }
      return JSON.parse(Buffer.concat(chunks, size).toString('utf8'));
    } catch (error) {
      body.destroy();
      throw new SunatUnavailable(`SUNAT's rates unreadable: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}

/** The listing's rows, `{fecPublica: "dd/mm/yyyy", valTipo: "3.758", codTipo: "C"|"V"}`, as days of `key` ascending. */
function daysOf(rows: unknown, key: string): Month['days'] {
  if (!Array.isArray(rows)) throw new SunatUnavailable("SUNAT's rates: not a list");
  const days = new Map<string, { day: string; compra: string | null; venta: string | null }>();
  for (const row of rows as Record<string, unknown>[]) {
    const date = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(String(row?.['fecPublica'] ?? ''));
    const value = /^\d{1,3}\.\d{1,6}$/.exec(String(row?.['valTipo'] ?? '').trim());
    const side = row?.['codTipo'] === 'C' ? 'compra' : row?.['codTipo'] === 'V' ? 'venta' : undefined;
    if (!date || !value || !side) continue;
    const day = `${date[3]}-${date[2]}-${date[1]}`;
    if (!day.startsWith(key)) continue;
    const held = days.get(day) ?? { day, compra: null, venta: null };
    held[side] = threeDecimals(value[0]);
    days.set(day, held);
  }
  return [...days.values()].sort((a, b) => (a.day < b.day ? -1 : 1));
}

/** "3.75" as SUNAT's page shows it: "3.750". */
const threeDecimals = (text: string) => {
  const [whole, decimals = ''] = text.split('.');
  return `${whole}.${decimals.padEnd(3, '0')}`;
};

function previousMonth(key: string): string {
  const [y, m] = key.split('-').map(Number) as [number, number];
  return m === 1 ? `${y - 1}-12` : `${y}-${String(m - 1).padStart(2, '0')}`;
}

function monthsFrom(first: string, last: string): string[] {
  const keys = [last];
  while (keys[0]! > first) keys.unshift(previousMonth(keys[0]!));
  return keys;
}

function* daysFrom(desde: string, hasta: string): Generator<string> {
  for (let t = Date.parse(`${desde}T00:00:00Z`); t <= Date.parse(`${hasta}T00:00:00Z`); t += 86_400_000)
    yield new Date(t).toISOString().slice(0, 10);
}

/** Months kept as files under `dir`, written whole (a temporary file renamed). */
export function rateMonthsOnDisk(dir: string): RateMonthStore {
  let made: Promise<unknown> | undefined;
  return {
    get: (month) => readFile(join(dir, `${month}.json`), 'utf8').catch(() => undefined),
    set: async (month, text) => {
      await (made ??= mkdir(dir, { recursive: true }));
      const temporary = join(dir, `.${month}.${process.pid}.${randomBytes(4).toString('hex')}`);
      await writeFile(temporary, text);
      await rename(temporary, join(dir, `${month}.json`));
    },
  };
}
