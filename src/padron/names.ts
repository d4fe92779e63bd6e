import { rucCheckDigit } from '../upstream/keys.js';

/**
 * Names as the search matches them (contract, "Finding and checking from the register"): folded to
 * words of A–Z and 0–9, each word filed under its first three characters. One entry of the name
 * index is a word's bucket and the taxpayer's place in the search's order, in 64 bits (`hi`, `lo`):
 *
 *   hi: bucket (16 bits) | not the name's first word (1) | not ACTIVO (1) | the name's length (14)
 *   lo: the RUC without its check digit (RUC 10, 15, 16, 17 and 20 fit in 32 bits)
 *
 * so that, sorted, a bucket's entries come in the search's order: ACTIVO first, then the shorter
 * name, then the RUC.
 */

/** 36 symbols (A–Z, 0–9) and the end of a shorter word: three of them make a bucket. */
const SYMBOLS = 37;
export const BUCKETS = SYMBOLS ** 3;
/** A name files at most this many buckets: a hostile register's names of a thousand words cost no more. */
export const MAX_BUCKETS_PER_NAME = 32;
/** The greatest length the order tells apart (names are under 300 characters; a line is at most 4 KB). */
const MAX_LENGTH = 0x3fff;
/** RUCs past this do not fit the entry (none is: they begin with 10, 15, 16, 17 or 20). */
const MAX_CODE = 0xffff_ffff;

/** Each Latin-1 letter's plain letter; '' for characters deleted (`.` and `'`); ' ' for the rest. */
const FOLD: string[] = (() => {
  const table: string[] = [];
  for (let c = 0; c < 0x250; c++) {
    const ch = String.fromCharCode(c);
    const plain = ch.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toUpperCase();
    table[c] = ch === '.' || ch === "'" ? '' : /^[A-Z0-9]$/.test(plain) ? plain : ' ';
  }
  return table;
})();

/** The folded words of a text or a name: upper case, accents and Ñ to plain letters, `.` and `'` deleted, anything else a blank. */
export function foldWords(text: string): string[] {
  let folded = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    folded += c < 0x250 ? FOLD[c]! : foldOther(text[i]!);
  }
  return folded.split(' ').filter((w) => w !== '');
}

function foldOther(ch: string): string {
  const plain = ch.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toUpperCase();
  return /^[A-Z0-9]$/.test(plain) ? plain : ' ';
}

const symbol = (c: number) => (c >= 65 ? c - 64 : c - 48 + 27);

/** The bucket of a folded word (its first three characters). */
export function bucketOf(word: string): number {
  let b = 0;
  for (let i = 0; i < 3; i++) b = b * SYMBOLS + (i < word.length ? symbol(word.charCodeAt(i)) : 0);
  return b;
}

/** The buckets a folded word of one or two characters begins: every bucket of a word that begins with it. */
export function bucketRange(word: string): [number, number] {
  if (word.length >= 3) return [bucketOf(word), bucketOf(word)];
  const from = bucketOf(word);
  return [from, from + (word.length === 1 ? SYMBOLS * SYMBOLS - 1 : SYMBOLS - 1)];
}

/** The order's key of a taxpayer without its bucket: not ACTIVO, then the name's length, then the RUC (47 bits, exact in a number). */
export const rankOf = (hi: number, lo: number) => (hi & 0x7fff) * 0x1_0000_0000 + lo;
export const NOT_ACTIVE_RANK = 0x4000 * 0x1_0000_0000;

/**
 * The index entries of one row, as [hi, lo] pairs pushed onto `out`: one per bucket of its name's
 * words, the first word's marked as such. None when its RUC does not fit or its check digit is wrong.
 */
export function entriesOf(ruc: string, name: string, estado: string, out: { push(hi: number, lo: number): void }): boolean {
  const first10 = ruc.slice(0, 10);
  const code = Number(first10);
  if (code > MAX_CODE || rucCheckDigit(first10) !== ruc.charCodeAt(10) - 48) return false;
  const words = foldWords(name);
  const tail = (estado === 'ACTIVO' ? 0 : 0x4000) | Math.min(name.length, MAX_LENGTH);
  const seen = new Set<number>();
  for (let i = 0; i < words.length && seen.size < MAX_BUCKETS_PER_NAME; i++) {
    const bucket = bucketOf(words[i]!);
    if (seen.has(bucket)) continue;
    seen.add(bucket);
    out.push(((bucket << 16) | (i === 0 ? 0 : 0x8000) | tail) >>> 0, code);
  }
  return true;
}

/**
 * Whether each query word begins a different word of the name (`com andi` matches `COMERCIAL
 * ANDINA`; `com comercial` needs two words that begin so). Backtracks: queries have few words.
 */
export function matchesWords(query: readonly string[], name: readonly string[]): boolean {
  const used = new Uint8Array(name.length);
  const assign = (q: number): boolean => {
    if (q === query.length) return true;
    for (let n = 0; n < name.length; n++) {
      if (used[n] || !name[n]!.startsWith(query[q]!)) continue;
      used[n] = 1;
      if (assign(q + 1)) return true;
      used[n] = 0;
    }
    return false;
  };
  return assign(0);
}
