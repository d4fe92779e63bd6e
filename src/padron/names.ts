import { rucCheckDigit } from '../upstream/keys.js';

/**
 * Names as the search matches them (contract, "Finding and checking from the register"): folded to
 * words of A–Z and 0–9, each word filed under its first three characters and its sign (its 4th
 * character, and its 5th's remainder of 3: 7 bits). One entry of the name index is 64 bits (`hi`, `lo`):
 *
 *   stream: bucket (16 bits) | the sign's top 3 bits | not the name's first word (1)
 *   rank:   not ACTIVO (1) | the name's length (8) | the RUC without its check digit (31: RUC 10, 15, 16, 17 and 20 fit)
 *   then the sign's low 4 bits
 *
 * so that, sorted, a stream's entries come in the search's order: ACTIVO first, then the shorter
 * name, then the RUC. A search for a word of four characters or more reads one or two streams of its
 * bucket and passes over the other signs there without reading any name.
 */

/** 36 symbols (A–Z, 0–9) and the end of a shorter word: three of them make a bucket. */
const SYMBOLS = 37;
export const BUCKETS = SYMBOLS ** 3;
/** A name files at most this many entries: a hostile register's names of a thousand words cost no more. */
export const MAX_BUCKETS_PER_NAME = 32;
/** The greatest length the order tells apart: SUNAT's names are under 255 characters; longer ones rank as equal, then by RUC. */
const MAX_LENGTH = 0xff;
/** RUCs past this do not fit the entry (none is: they begin with 10, 15, 16, 17 or 20). */
const MAX_CODE = 0x7fff_ffff;
/** Signs a word's 4th and 5th characters may take. */
export const SIGNS = 128;

/** A character's plain letter or digit; '' for `.` and `'` (deleted); ' ' for the rest. */
function foldChar(ch: string): string {
  if (ch === '.' || ch === "'") return '';
  const plain = ch
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toUpperCase();
  return /^[A-Z0-9]$/.test(plain) ? plain : ' ';
}

/** foldChar of every Latin character, looked up rather than normalized each time. */
const FOLD: string[] = Array.from({ length: 0x250 }, (_, c) => foldChar(String.fromCharCode(c)));

/** The folded words of a text or a name: upper case, accents and Ñ to plain letters, `.` and `'` deleted, anything else a blank. */
export function foldWords(text: string): string[] {
  // Most names are upper-case letters, digits and blanks already: only the other characters are looked up.
  const folded = PLAIN.test(text) ? text : text.replace(OTHER, (ch) => FOLD[ch.charCodeAt(0)] ?? foldChar(ch));
  return folded.split(' ').filter((w) => w !== '');
}

const PLAIN = /^[A-Z0-9 ]*$/;
const OTHER = /[^A-Z0-9 ]/g;

const symbol = (c: number) => (c >= 65 ? c - 64 : c - 48 + 27);

/** The bucket of a folded word (its first three characters). */
export function bucketOf(word: string): number {
  let b = 0;
  for (let i = 0; i < 3; i++) b = b * SYMBOLS + (i < word.length ? symbol(word.charCodeAt(i)) : 0);
  return b;
}

/** The buckets a folded word begins: its own, or for a shorter word every bucket of a word that begins with it. */
export function bucketRange(word: string): [number, number] {
  const from = bucketOf(word);
  return [from, word.length >= 3 ? from : from + (word.length === 1 ? SYMBOLS * SYMBOLS - 1 : SYMBOLS - 1)];
}

/** The sign's bits kept in an entry (the rest choose its stream). */
export const LOW_SIGNS = 16;
export const SIGN_GROUPS = SIGNS / LOW_SIGNS;
/** An entry's stream: bucket, sign group, first word or not (20 bits). */
export const streamOf = (hi: number) => hi >>> 12;
export const STREAMS = BUCKETS * SIGN_GROUPS * 2;
export const streamId = (bucket: number, group: number, notFirst: number) => (bucket * SIGN_GROUPS + group) * 2 + notFirst;
/** An entry as its stream keeps it: its rank times LOW_SIGNS, plus its sign's low bits (44 bits, exact in a number). */
export const valueOf = (hi: number, lo: number) => (hi & 0xfff) * 0x1_0000_0000 + lo;
/** The first rank of a taxpayer that is not ACTIVO. */
export const NOT_ACTIVE_RANK = 2 ** 39;
/** A rank's unit of name length (its bits 31 to 38). */
const LENGTH_UNIT = 2 ** 31;
/** The first rank at or after `rank` of a name at least `length` characters long: within ACTIVO, and within the rest, the shorter come first. */
export function atLeastLength(rank: number, length: number): number {
  const half = rank - (rank % NOT_ACTIVE_RANK);
  const wanted = Math.min(length, MAX_LENGTH);
  return Math.floor((rank - half) / LENGTH_UNIT) >= wanted ? rank : half + wanted * LENGTH_UNIT;
}
/** The RUC's first ten digits in a rank. */
export const codeOf = (rank: number) => rank % 2 ** 31;

/**
 * The sign of a word's 4th character (whole) and 5th (its remainder of 3), 0 for none. The 4th whole: a word of four
 * characters typed (`CARL`, `MANU`) reads the words that begin so alone, not those of a 4th sharing its hash (`CARB`,
 * `CARH`: thousands of names to read, docs/performance.md); a longer word also reads its prefix stream.
 */
export function signOf(word: string): number {
  const c3 = word.length > 3 ? symbol(word.charCodeAt(3)) : 0;
  const c4 = word.length > 4 ? symbol(word.charCodeAt(4)) : 0;
  return c3 * FIFTHS + (c4 % FIFTHS);
}

/** The 5th character's classes in a sign: 37 × 3 signs fit SIGNS. */
const FIFTHS = 3;

/** The signs a word of the query lets through: one for five characters or more, those of its 4th for four, all for fewer. */
export function signsFor(word: string): Uint8Array | undefined {
  if (word.length < 4) return undefined;
  const allowed = new Uint8Array(SIGNS);
  if (word.length >= 5) allowed[signOf(word)] = 1;
  else allowed.fill(1, symbol(word.charCodeAt(3)) * FIFTHS, (symbol(word.charCodeAt(3)) + 1) * FIFTHS);
  return allowed;
}

/** Where a row's entries go: the name index's, and the pair index's (./pairs.ts). */
export interface EntrySink {
  push(hi: number, lo: number): void;
}

/**
 * The index entries of one row, as [hi, lo] pairs pushed onto `out`: one per bucket of its name's
 * words, the first word's marked as such; and onto `pairs`, one per pair of its words' buckets.
 * None when its RUC does not fit or its check digit is wrong.
 */
export function entriesOf(ruc: string, name: string, estado: string, out: EntrySink, pairs?: EntrySink): boolean {
  const first10 = ruc.slice(0, 10);
  const code = Number(first10);
  if (code > MAX_CODE || rucCheckDigit(first10) !== ruc.charCodeAt(10) - 48) return false;
  const words = foldWords(name);
  // The rank's bits in the high word: not ACTIVO (bit 11), the length (bits 3 to 10), the RUC's top 3 bits.
  const rankHigh = (estado === 'ACTIVO' ? 0 : 0x800) | (Math.min(name.length, MAX_LENGTH) << 3) | (code >>> 28);
  const codeLow = (code & 0xfff_ffff) * LOW_SIGNS;
  const seen = new Set<number>();
  for (let i = 0; i < words.length && seen.size < MAX_BUCKETS_PER_NAME; i++) {
    const word = words[i]!;
    const bucket = bucketOf(word);
    const sign = signOf(word);
    // Each stream and sign once a name: two other words of one bucket and sign match the same searches.
    const notFirst = i === 0 ? 0 : 1;
    const seenAs = (bucket * SIGNS + sign) * 2 + notFirst;
    if (seen.has(seenAs)) continue;
    seen.add(seenAs);
    const stream = streamId(bucket, sign >>> 4, notFirst);
    out.push(((stream << 12) | rankHigh) >>> 0, codeLow + (sign & (LOW_SIGNS - 1)));
  }
  if (pairs) pairEntriesOf(words, rankHigh * 2 ** 28 + (code & 0xfff_ffff), pairs);
  return true;
}

/**
 * The pair index: for each two words of a name, an entry in the stream of their two buckets (a hash
 * of the pair to 24 bits: two pairs sharing a stream only add candidates the names refuse), its
 * value the rank alone. A text of common words that rarely meet (a person's whole name, a surname
 * and a connector) reads the few ranks of its pairs, not the many of each word.
 *
 *   hi: the pair's stream (24 bits) | the rank's top 8 bits;   lo: the rank's low 32 bits
 */
export const PAIR_STREAMS = 2 ** 24;
/** The stream of the names with more words than MAX_PAIR_WORDS: read with every pair's, so that none is missed. */
export const LONG_NAMES = PAIR_STREAMS - 1;
/** Words of a name paired: 12 make 66 pairs; a longer name is filed under LONG_NAMES instead. */
export const MAX_PAIR_WORDS = 12;

/** The stream of two buckets, in either order. */
export function pairStream(a: number, b: number): number {
  const [lo, hi] = a <= b ? [a, b] : [b, a];
  let h = Math.imul(lo * BUCKETS + hi, 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
  const stream = (h ^ (h >>> 13)) >>> 8;
  return stream === LONG_NAMES ? LONG_NAMES - 1 : stream;
}

/**
 * The stream of the words that begin with `word`'s first PREFIX characters, in the pair index too (another hash: a
 * stream shared with a pair only adds candidates). Words of a register often share their first five characters
 * (Quechua and Aymara surnames, brand names of syllables): a long word read by its bucket and sign alone has the names
 * of all of them to read.
 */
export const PREFIX = 6;
export function prefixStream(word: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < PREFIX; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193);
  const stream = (h ^ (h >>> 15)) >>> 8;
  return stream === LONG_NAMES ? LONG_NAMES - 1 : stream;
}

/** A name's pair entries onto `out`, and the prefix entries of its words of PREFIX characters or more: each stream once. */
export function pairEntriesOf(words: readonly string[], rank: number, out: EntrySink): void {
  if (words.length === 0) return;
  const buckets = words.map(bucketOf);
  const high = Math.floor(rank / 2 ** 32);
  const low = (rank % 2 ** 32) >>> 0;
  if (buckets.length > MAX_PAIR_WORDS) return out.push(((LONG_NAMES << 8) | high) >>> 0, low);
  const seen = new Set<number>();
  for (const word of words) {
    if (word.length < PREFIX) continue;
    const stream = prefixStream(word);
    if (seen.has(stream)) continue;
    seen.add(stream);
    out.push(((stream << 8) | high) >>> 0, low);
  }
  for (let i = 0; i < buckets.length; i++) {
    for (let j = i + 1; j < buckets.length; j++) {
      const stream = pairStream(buckets[i]!, buckets[j]!);
      if (seen.has(stream)) continue;
      seen.add(stream);
      out.push(((stream << 8) | high) >>> 0, low);
    }
  }
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
