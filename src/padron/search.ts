import { createHash } from 'node:crypto';
import type { RootDatabase } from 'lmdb';
import { MAX_SCANNED, StreamReader, UnionReader, type Spent } from './name-index.js';
import type { NameIndex } from './versions.js';
import { keptName, readKept, type KeptRow, type PadronRecord } from './record.js';
import { isValidRuc, rucCheckDigit, rucOfDni } from '../upstream/keys.js';
import {
  atLeastLength,
  bucketRange,
  codeOf,
  foldWords,
  LONG_NAMES,
  LOW_SIGNS,
  matchesWords,
  NOT_ACTIVE_RANK,
  pairStream,
  PREFIX,
  prefixStream,
  SIGN_GROUPS,
  signsFor,
  streamId,
} from './names.js';

/**
 * `buscarContribuyentes` over the name index (contract, "Finding and checking from the register").
 * The taxpayers whose name's first word begins with the text's first word come first (phase A),
 * then the others (phase B); each phase walks its streams together (a leapfrog join: each stream
 * jumps to the rank the others have reached), and each candidate's name is read and matched whole.
 */

export interface SearchFilter {
  estados?: readonly string[] | null;
  condiciones?: readonly string[] | null;
  ubigeo?: string | null;
  tipo?: 'PERSONA_NATURAL' | 'EMPRESA' | null;
}

/** What the register refuses, by the name src/errors.ts words it under: INVALID_INPUT. */
export type PadronRefusal =
  'textTooLong' | 'textTooShort' | 'textNotARuc' | 'textTooBroad' | 'cursorNotOurs' | 'cursorOfAnother' | 'changesCursorNotOurs';

/** A request of the register (a search, a page of its changes) refused: the refusal's name and what its words need. */
export class PadronRefused extends Error {
  constructor(
    readonly refusal: PadronRefusal,
    readonly args: Readonly<Record<string, number>> = {},
  ) {
    super(`the register refuses: ${refusal}`);
  }
}

const refused = (refusal: PadronRefusal, args?: Record<string, number>) => new PadronRefused(refusal, args);

/** No register answers searches yet: no import yet, past its age, or its name index still importing (`state`): `registerNotReady`. */
export class RegisterUnavailableError extends Error {
  constructor(readonly state: string) {
    super(`the register is unavailable: ${state}`);
  }
}

/**
 * A page's work is bounded so that no text can hold a search thread: past any of these it is
 * refused (a page is never cut short, contract). Typed texts stay far below: docs/performance.md.
 */
const MAX_CANDIDATES = 200_000;
const MAX_SEEKS = 2_000_000;
export const MIN_CHARACTERS = 3;
export const MAX_TEXT = 100;

export interface Found {
  ruc: string;
  /** What the index keeps of the RUC's row. */
  kept: string;
  cursor: string;
}

/** A page of a search as the schema reads it: the records, each one's cursor, and where to go on. */
export interface SearchAnswer {
  records: PadronRecord[];
  cursors: string[];
  hasNextPage: boolean;
  endCursor: string | null;
}

export interface SearchPage {
  found: Found[];
  hasNextPage: boolean;
  endCursor: string | null;
}

interface Position {
  phase: 'A' | 'B' | 'R';
  rank: number;
}

/** What a cursor is bound to: the register's version and the search (its folded text and its filter). */
function bindingOf(version: string, words: readonly string[], filter: SearchFilter): string {
  const canonical = JSON.stringify([
    words,
    [...(filter.estados ?? [])].map(foldText).sort(),
    [...(filter.condiciones ?? [])].map(foldText).sort(),
    filter.ubigeo ?? null,
    filter.tipo ?? null,
  ]);
  return createHash('sha256').update(version).update('\0').update(canonical).digest('base64url').slice(0, 16);
}

const foldText = (text: string) => foldWords(text).join(' ');

const cursorOf = (binding: string, at: Position) => Buffer.from(`${binding}.${at.phase}.${at.rank}`).toString('base64url');

function positionOf(cursor: string, binding: string): Position {
  const text = Buffer.from(cursor, 'base64url').toString('latin1');
  const m = /^([\w-]{16})\.([ABR])\.(\d{1,16})$/.exec(text);
  if (!m || cursor.length > 64) throw refused('cursorNotOurs');
  if (m[1] !== binding) throw refused('cursorOfAnother');
  return { phase: m[2] as Position['phase'], rank: Number(m[3]) };
}

/** The text's words, or the RUC it names (11 digits, or the RUC 10 of 8 digits); refused when too short or too long. */
export function parseText(texto: string): { ruc: string } | { words: string[] } {
  if (texto.length > MAX_TEXT) throw refused('textTooLong', { max: MAX_TEXT });
  const words = foldWords(texto);
  const characters = words.reduce((n, w) => n + w.length, 0);
  if (characters < MIN_CHARACTERS) throw refused('textTooShort', { min: MIN_CHARACTERS });
  const digits = texto.trim();
  if (/^\d{11}$/.test(digits)) {
    if (!isValidRuc(digits)) throw refused('textNotARuc');
    return { ruc: digits };
  }
  const dni = /^\d{8}$/.test(digits) ? rucOfDni(digits) : undefined;
  if (dni?.ok) return { ruc: dni.value };
  return { words };
}

/** One search's page, from the register in use (`version` names it). */
export function search(
  index: { version: string; db: RootDatabase<string, string>; names: NameIndex },
  texto: string,
  filter: SearchFilter,
  first: number,
  after: string | undefined,
): SearchPage {
  const parsed = parseText(texto);
  const words = 'words' in parsed ? parsed.words : [parsed.ruc];
  const binding = bindingOf(index.version, words, filter);
  let at: Position = after ? positionOf(after, binding) : { phase: 'words' in parsed ? 'A' : 'R', rank: 0 };
  const accepts = accepting(filter);
  const found: Found[] = [];
  if ('ruc' in parsed) {
    const kept = at.rank === 0 ? index.db.get(parsed.ruc) : undefined;
    if (kept !== undefined && accepts(parsed.ruc, readKept(kept)))
      found.push({ ruc: parsed.ruc, kept, cursor: cursorOf(binding, { phase: 'R', rank: 1 }) });
    return { found, hasNextPage: false, endCursor: found[0]?.cursor ?? null };
  }
  const work = { candidates: 0, seeks: 0, scanned: 0 };
  const [low, high] = rankBounds(filter);
  const shortest = words.reduce((n, w) => n + w.length, words.length - 1);
  for (const phase of ['A', 'B'] as const) {
    if (phase === 'A' && at.phase === 'B') continue;
    const start = Math.max(low, at.phase === phase ? at.rank : 0);
    const streams = streamsOf(index.names, words, phase, work);
    const walked = walk(streams, start, high, shortest, work, (rank) => {
      if (++work.candidates > MAX_CANDIDATES) throw tooBroad();
      const ruc = rucOfRank(rank);
      // Most candidates fail on their name: the row is read whole only for those that match.
      const name = nameOf(index.db, ruc);
      if (name === undefined) return false;
      if ((phase === 'A') !== (name[0]?.startsWith(words[0]!) ?? false) || !matchesWords(words, name)) return false;
      const kept = index.db.get(ruc)!;
      if (!accepts(ruc, readKept(kept))) return false;
      found.push({ ruc, kept, cursor: cursorOf(binding, { phase, rank: rank + 1 }) });
      return found.length > first;
    });
    if (walked.full) {
      // A full page and one more, which says there is a next page.
      found.length = first;
      return { found, hasNextPage: true, endCursor: found.at(-1)!.cursor };
    }
    at = { phase: 'B', rank: 0 };
  }
  return { found, hasNextPage: false, endCursor: found.at(-1)?.cursor ?? null };
}

/** The folded words of a row's name (its first column), decoded from the row's bytes alone. */
function nameOf(db: RootDatabase<string, string>, ruc: string): string[] | undefined {
  const bytes = db.getBinaryFast(ruc);
  return bytes === undefined ? undefined : foldWords(keptName(bytes));
}

const rucOfRank = (rank: number) => {
  const first10 = String(codeOf(rank)).padStart(10, '0');
  return first10 + rucCheckDigit(first10);
};

/** The ranks a filter allows: ACTIVO alone is the ranks before the first of any other estado; without ACTIVO, those after. */
function rankBounds(filter: SearchFilter): [number, number] {
  const estados = filter.estados?.map(foldText);
  if (!estados || estados.length === 0) return [0, Infinity];
  const activo = estados.includes('ACTIVO');
  if (activo && estados.length === 1) return [0, NOT_ACTIVE_RANK];
  return activo ? [0, Infinity] : [NOT_ACTIVE_RANK, Infinity];
}

/** Whether a kept row passes the filter. */
function accepting(filter: SearchFilter): (ruc: string, row: KeptRow) => boolean {
  const estados = filter.estados?.length ? new Set(filter.estados.map(foldText)) : undefined;
  const condiciones = filter.condiciones?.length ? new Set(filter.condiciones.map(foldText)) : undefined;
  const { ubigeo, tipo } = filter;
  return (ruc, row) =>
    (!estados || estados.has(foldText(row.estado ?? ''))) &&
    (!condiciones || condiciones.has(foldText(row.condicion ?? ''))) &&
    (!ubigeo || (row.ubigeo ?? '').startsWith(ubigeo)) &&
    (!tipo || (tipo === 'EMPRESA') === ruc.startsWith('20'));
}

/**
 * The streams a phase walks, smallest first: in A, the first word's among first words, and each other word's of three or more
 * characters among later words; in B, the first word's among later words and the others' among any. Then, for each two
 * neighbouring words of three characters or more, their pair's: for common words that rarely meet, the few ranks where they do.
 */
function streamsOf(index: NameIndex, words: readonly string[], phase: 'A' | 'B', spent: Spent): UnionReader[] {
  /** A word's streams: of first words only, of the other words only, or of any. */
  const union = (word: string, which: 'first' | 'rest' | 'any') => {
    const [from, to] = bucketRange(word);
    const parts: StreamReader[] = [];
    const signs = signsFor(word);
    let size = 0;
    for (let b = from; b <= to; b++) {
      for (let group = 0; group < SIGN_GROUPS; group++) {
        // The low bits of the signs this group lets through; none: the group is not read.
        const low = signs?.subarray(group * LOW_SIGNS, (group + 1) * LOW_SIGNS);
        const share = low ? low.reduce((n, s) => n + s, 0) / LOW_SIGNS : 1;
        if (share === 0) continue;
        for (const notFirst of which === 'first' ? [0] : which === 'rest' ? [1] : [0, 1]) {
          const stream = streamId(b, group, notFirst);
          if (index.counts[stream] === 0) continue;
          size += index.counts[stream]! * share;
          parts.push(new StreamReader(index.db, stream, share === 1 ? undefined : low, spent, index.directory));
        }
      }
    }
    return new UnionReader(parts, Math.ceil(size));
  };
  /**
   * Another word in A begins a word after the name's first: the first word, which the first query word begins, is its own
   * only when one of the two words begins the other, and then the first query word goes to a later word. So: the later
   * words of the shorter of the two, or of this word alone, not the first words, which would only be passed over.
   */
  const otherInA = (word: string) => {
    const first = words[0]!;
    const shorter = first.startsWith(word) ? word : word.startsWith(first) ? first : word;
    return shorter.length < 3 ? union(word, 'any') : union(shorter, 'rest');
  };
  // In A the first word begins the name's first word; in B, whose first word it does not begin, it begins another.
  // A word of one character is matched on the names alone (its streams are a thousand), unless there is no other word.
  const streams = words.flatMap((w, i) =>
    w.length < 2 ? [] : [i > 0 && phase === 'A' ? otherInA(w) : union(w, i > 0 ? 'any' : phase === 'A' ? 'first' : 'rest')],
  );
  if (streams.length === 0) streams.push(union(words[0]!, phase === 'A' ? 'first' : 'rest'));
  if (index.pairs) streams.push(...pairStreamsOf(index, index.pairs, words, spent));
  return streams.sort((a, b) => a.size - b.size);
}

/** The pairs a text reads: each two neighbouring words of three characters or more, and each shorter word with the longest. */
function pairsOf(words: readonly string[]): [string, string][] {
  const long = words.filter((w) => w.length >= 3);
  if (long.length === 0) return [];
  const longest = long.reduce((a, b) => (b.length > a.length ? b : a));
  const pairs: [string, string][] = [];
  for (let i = 1; i < long.length; i++) pairs.push([long[i - 1]!, long[i]!]);
  for (const w of words) if (w.length < 3) pairs.push([longest, w]);
  return pairs;
}

/** Pairs a word of one character may stand for (its other words' buckets): beyond this the pair is not read. */
const MAX_PAIR_PARTS = 2_000;

/**
 * Each pair's streams as one: for a word of one or two characters, the pairs of every bucket the register's words fill
 * that begins with it. The names with more words than the pair index holds are read with each.
 */
function pairStreamsOf(index: NameIndex, pairs: NonNullable<NameIndex['pairs']>, words: readonly string[], spent: Spent): UnionReader[] {
  const filled = (bucket: number) => {
    for (let group = 0; group < SIGN_GROUPS; group++)
      if (index.counts[streamId(bucket, group, 0)]! + index.counts[streamId(bucket, group, 1)]! > 0) return true;
    return false;
  };
  const bucketsOf = (word: string) => {
    const [from, to] = bucketRange(word);
    const buckets: number[] = [];
    for (let b = from; b <= to; b++) if (from === to || filled(b)) buckets.push(b);
    return buckets;
  };
  const reader = (stream: number) => new StreamReader(pairs.db, stream, undefined, spent, pairs.directory);
  const longNames = pairs.directory.size(LONG_NAMES);
  const unions: UnionReader[] = [];
  for (const [a, b] of pairsOf(words)) {
    const [as, bs] = [bucketsOf(a), bucketsOf(b)];
    if (as.length * bs.length > MAX_PAIR_PARTS) continue;
    const parts: StreamReader[] = [];
    let size = 0;
    for (const x of as)
      for (const y of bs) {
        const stream = pairStream(x, y);
        const n = pairs.directory.size(stream);
        if (n === 0) continue;
        size += n;
        parts.push(reader(stream));
      }
    if (longNames > 0) parts.push(reader(LONG_NAMES));
    unions.push(new UnionReader(parts, size + longNames));
  }
  // A long word reads the stream of the words that begin as it does, not only its bucket's and sign's.
  for (const word of words) {
    if (word.length < PREFIX) continue;
    const stream = prefixStream(word);
    unions.push(
      new UnionReader([reader(stream), ...(longNames > 0 ? [reader(LONG_NAMES)] : [])], pairs.directory.size(stream) + longNames),
    );
  }
  return unions;
}

/** Walks the ranks every stream holds, from `start` to below `end`, until `take` says the page is full; refused past the page's bounds. */
function walk(
  streams: UnionReader[],
  start: number,
  end: number,
  shortest: number,
  work: { candidates: number; seeks: number; scanned: number },
  take: (rank: number) => boolean,
): { full?: true } {
  if (streams.some((s) => s.size === 0)) return {};
  let t = start;
  for (;;) {
    if (work.seeks >= MAX_SEEKS || work.scanned >= MAX_SCANNED) throw tooBroad();
    t = streams[0]!.seek(t);
    work.seeks++;
    if (t >= end) return {};
    // A name shorter than the words and the blanks between them cannot hold them: its ranks are passed over.
    const long = atLeastLength(t, shortest);
    if (long > t) {
      t = long;
      continue;
    }
    let agreed = true;
    for (let i = 1; i < streams.length; i++) {
      const r = streams[i]!.seek(t);
      work.seeks++;
      if (r > t) {
        t = r;
        agreed = false;
        break;
      }
    }
    if (!agreed) continue;
    if (take(t)) return { full: true };
    t += 1;
  }
}

/** A text whose page would take more than its bounds: a word of one letter among common ones, or a hostile text. */
const tooBroad = () => refused('textTooBroad');
