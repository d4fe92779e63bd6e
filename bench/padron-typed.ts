/**
 * What the search must answer, worked out by the bench alone from the register's lines and the
 * contract's rules, without the gateway's index: the contract's folding written again, an
 * inverted index of whole words built here (postings of row numbers), and the contract's order.
 * Then two loads on the gateway: whole names typed four ways, each checked at the rank worked out
 * here, and a mix that weights the hardest texts, with a `contribuyente` caller meanwhile.
 */
import { fork } from 'node:child_process';
import { Pool } from 'undici';
import { lineAt, nameAt } from './padron-register.js';
import type { Answered, Asked } from './search-caller.js';

/** The contract's folding, written again on purpose (not the gateway's `foldWords`). */
export function fold(text: string): string[] {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toUpperCase()
    .replace(/[.']/g, '')
    .replace(/[^A-Z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter(Boolean);
}

/** Each query word begins a different word of the name (backtracking, as the contract reads). */
function matches(name: Uint32Array, words: readonly string[], q: readonly string[]): boolean {
  const used = new Uint8Array(name.length);
  const assign = (k: number): boolean => {
    if (k === q.length) return true;
    for (let n = 0; n < name.length; n++) {
      if (used[n] || !words[name[n]!]!.startsWith(q[k]!)) continue;
      used[n] = 1;
      if (assign(k + 1)) return true;
      used[n] = 0;
    }
    return false;
  };
  return assign(0);
}

/** A sorted list's growth: postings of a word, appended in row order. */
class Postings {
  list = new Uint32Array(16);
  size = 0;
  add(row: number) {
    if (this.size === this.list.length) {
      const grown = new Uint32Array(this.list.length * 2);
      grown.set(this.list);
      this.list = grown;
    }
    this.list[this.size++] = row;
  }
  get rows() {
    return this.list.subarray(0, this.size);
  }
}

/** The register, read from its lines by row number: each row's words, its rank's parts, and the postings of each whole word. */
export class Oracle {
  readonly words: string[] = [];
  readonly #ids = new Map<string, number>();
  readonly #postings: Postings[] = [];
  /** Each row's word ids: `offsets[i]` to `offsets[i + 1]` in `rowWords`. */
  readonly offsets: Uint32Array;
  rowWords: Uint32Array;
  readonly activo: Uint8Array;
  readonly length: Uint16Array;
  readonly ruc: Float64Array;
  #sortedWords: string[] = [];
  readonly #unions = new Map<string, Uint32Array>();

  constructor(readonly rows: number) {
    this.offsets = new Uint32Array(rows + 1);
    this.rowWords = new Uint32Array(rows * 5);
    this.activo = new Uint8Array(rows);
    this.length = new Uint16Array(rows);
    this.ruc = new Float64Array(rows);
    // Folding is slow (normalize, regexes); a register repeats its words: each raw word folded once.
    const folded = new Map<string, string[]>();
    let at = 0;
    for (let i = 0; i < rows; i++) {
      const line = lineAt(i, rows);
      const [ruc, name, estado] = line.split('|') as [string, string, string];
      this.ruc[i] = Number(ruc);
      this.activo[i] = estado === 'ACTIVO' ? 1 : 0;
      this.length[i] = Math.min(name.length, 255);
      this.offsets[i] = at;
      for (const raw of name.split(' ')) {
        let words = folded.get(raw);
        if (!words) folded.set(raw, (words = fold(raw)));
        for (const w of words) {
          let id = this.#ids.get(w);
          if (id === undefined) {
            this.#ids.set(w, (id = this.words.length));
            this.words.push(w);
            this.#postings.push(new Postings());
          }
          if (at === this.rowWords.length) {
            const grown = new Uint32Array(this.rowWords.length * 2);
            grown.set(this.rowWords);
            this.rowWords = grown;
          }
          this.rowWords[at++] = id;
          const p = this.#postings[id]!;
          // A word twice in a name is one posting (the rows are matched on their words after).
          if (p.size === 0 || p.list[p.size - 1] !== i) p.add(i);
        }
      }
    }
    this.offsets[rows] = at;
    this.#sortedWords = [...this.words].sort();
  }

  wordsOf(row: number): Uint32Array {
    return this.rowWords.subarray(this.offsets[row]!, this.offsets[row + 1]!);
  }

  /** How many rows hold a whole word: the commonest first. */
  commonest(n: number, minLength = 3): string[] {
    return this.words
      .map((w, id) => [w, this.#postings[id]!.size] as const)
      .filter(([w]) => w.length >= minLength)
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([w]) => w);
  }

  /** The rows holding a word that begins with `prefix`, sorted: the union of those words' postings. */
  rowsBeginning(prefix: string): Uint32Array {
    const cached = this.#unions.get(prefix);
    if (cached) return cached;
    const sorted = this.#sortedWords;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid]! < prefix) lo = mid + 1;
      else hi = mid;
    }
    const lists: Uint32Array[] = [];
    for (let k = lo; k < sorted.length && sorted[k]!.startsWith(prefix); k++) lists.push(this.#postings[this.#ids.get(sorted[k]!)!]!.rows);
    const union = lists.length === 1 ? lists[0]! : unionOf(lists);
    if (this.#unions.size > 2_000) this.#unions.clear();
    this.#unions.set(prefix, union);
    return union;
  }

  /**
   * A row's place in the contract's order for a query whose first word is `first`, as one number: first word or not, ACTIVO
   * or not, the name's length, the RUC (under 2 ** 35): unique, and smaller first.
   */
  key(row: number, first: string): number {
    const phase = this.words[this.wordsOf(row)[0]!]!.startsWith(first) ? 0 : 1;
    return ((phase * 2 + (this.activo[row] ? 0 : 1)) * 256 + this.length[row]!) * 2 ** 35 + this.ruc[row]!;
  }

  /** The keys of every row matching `texto`. */
  #matching(texto: string): { q: string[]; keys: Float64Array } {
    const q = fold(texto);
    // Every word's rows (a word of one or two characters: the union of every word it begins, read once and kept).
    const lists = q.map((w) => this.rowsBeginning(w));
    lists.sort((a, b) => a.length - b.length);
    // The two shortest lists intersected, then every row matched on its words.
    const rows = lists.length > 1 ? intersect(lists[0]!, lists[1]!) : lists[0]!;
    const keys: number[] = [];
    for (const r of rows) if (matches(this.wordsOf(r), this.words, q)) keys.push(this.key(r, q[0]!));
    return { q, keys: Float64Array.from(keys) };
  }

  /** How many matches of `texto` rank before `row`, or -1 when `row` does not match. */
  rankOf(texto: string, row: number): number {
    const { q, keys } = this.#matching(texto);
    const own = this.key(row, q[0]!);
    let before = 0;
    let found = false;
    for (const k of keys) {
      if (k < own) before++;
      else if (k === own) found = true;
    }
    return found ? before : -1;
  }

  /** The RUCs of the first `n` matches of `texto`, in the contract's order. */
  top(texto: string, n: number): string[] {
    const keys = this.#matching(texto).keys.sort();
    return [...keys.subarray(0, n)].map((k) => String(k % 2 ** 35));
  }
}

/** The sorted union of sorted lists: a mark per row, then the marked rows in order. */
function unionOf(lists: Uint32Array[]): Uint32Array {
  const max = lists.reduce((m, l) => Math.max(m, l[l.length - 1] ?? 0), 0);
  const marked = new Uint8Array(max + 1);
  let n = 0;
  for (const l of lists) for (const r of l) if (!marked[r]) ((marked[r] = 1), n++);
  const out = new Uint32Array(n);
  let k = 0;
  for (let r = 0; r <= max; r++) if (marked[r]) out[k++] = r;
  return out;
}

function intersect(a: Uint32Array, b: Uint32Array): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i]! < b[j]!) i++;
    else if (a[i]! > b[j]!) j++;
    else {
      out.push(a[i]!);
      i++;
      j++;
    }
  }
  return out;
}

/** A whole name as a person types it: as written, its words reversed, in lower case, without accents. */
export const TYPINGS = {
  written: (name: string) => name,
  reversed: (name: string) => name.split(' ').reverse().join(' '),
  lower: (name: string) => name.toLowerCase(),
  unaccented: (name: string) => name.normalize('NFD').replace(/[\u0300-\u036f]/g, ''),
};

const SEARCH =
  'query($t: String!, $n: Int!, $a: String) { buscarContribuyentes(texto: $t, first: $n, after: $a) { edges { node { ruc } } pageInfo { hasNextPage endCursor } } }';
type Page = {
  errors?: { message: string }[];
  data?: { buscarContribuyentes: { edges: { node: { ruc: string } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } };
};

async function ask(pool: Pool, t: string, n: number, a?: string): Promise<Page> {
  const res = await pool.request({
    path: '/graphql',
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench-token' },
    body: JSON.stringify({ query: SEARCH, variables: { t, n, a } }),
  });
  return (await res.body.json()) as Page;
}

/** Runs `each` over `items` with `width` at a time. */
async function atATime<T>(items: readonly T[], width: number, each: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await each(items[next++]!);
    }),
  );
}

/**
 * `samples` taxpayers spread over the whole register, each one's name typed four ways: each must be
 * where the order worked out here puts it (on the first page of 10 when fewer than 10 rank before it,
 * else on the page of 50 that holds its rank), and no page may be short of `first` but the last.
 */
export async function foundAsTyped(url: string, oracle: Oracle, samples: number) {
  const pool = new Pool(new URL(url).origin, { connections: 20 });
  const step = Math.floor(oracle.rows / samples);
  const cases: { row: number; typing: keyof typeof TYPINGS; texto: string; rank: number }[] = [];
  let tooLong = 0;
  const started = performance.now();
  for (let k = 0; k < samples; k++) {
    const row = (k * step + (k % step)) % oracle.rows;
    const name = lineAt(row, oracle.rows).split('|')[1]!;
    if (name.length > 100) {
      tooLong++;
      continue;
    }
    const ranks = new Map<string, number>();
    for (const typing of Object.keys(TYPINGS) as (keyof typeof TYPINGS)[]) {
      const texto = TYPINGS[typing](name);
      // As written, in lower case and without accents the text folds alike: one order for the three.
      const folded = fold(texto).join(' ');
      let rank = ranks.get(folded);
      if (rank === undefined) ranks.set(folded, (rank = oracle.rankOf(texto, row)));
      cases.push({ row, typing, texto, rank });
    }
  }
  const oracleS = (performance.now() - started) / 1000;
  const result = {
    samples,
    cases: cases.length,
    tooLong,
    oracleS: Math.round(oracleS),
    notMatched: 0,
    found: 0,
    misplaced: [] as string[],
    shortPages: 0,
    errors: 0,
    ranks: { under10: 0, under50: 0, beyond: 0 },
  };
  await atATime(cases, 20, async (c) => {
    if (c.rank < 0) {
      result.notMatched++;
      return;
    }
    const first = c.rank < 10 ? 10 : 50;
    let after: string | undefined;
    for (let seen = 0; ;) {
      const page = await ask(pool, c.texto, first, after);
      const conn = page.data?.buscarContribuyentes;
      if (!conn) {
        result.errors++;
        if (result.misplaced.length < 20) result.misplaced.push(`${c.texto}: ${page.errors?.[0]?.message}`);
        return;
      }
      if (conn.pageInfo.hasNextPage && conn.edges.length < first) result.shortPages++;
      if (c.rank < seen + conn.edges.length) {
        const at = conn.edges.findIndex((e) => e.node.ruc === String(oracle.ruc[c.row]));
        if (at === c.rank - seen) result.found++;
        else if (result.misplaced.length < 20)
          result.misplaced.push(`${c.typing} ${c.texto}: rank ${c.rank}, found at ${at < 0 ? 'none' : seen + at}`);
        result.ranks[c.rank < 10 ? 'under10' : c.rank < 50 ? 'under50' : 'beyond']++;
        return;
      }
      seen += conn.edges.length;
      if (!conn.pageInfo.hasNextPage) {
        if (result.misplaced.length < 20) result.misplaced.push(`${c.typing} ${c.texto}: rank ${c.rank}, past the last page (${seen})`);
        return;
      }
      after = conn.pageInfo.endCursor!;
    }
  });
  await pool.close();
  return result;
}

/** A deterministic shuffle. */
function shuffled<T>(xs: T[]): T[] {
  let seed = 7;
  for (let i = xs.length - 1; i > 0; i--) {
    seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
    const j = seed % (i + 1);
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}

/**
 * The hard mix: one- and two-word prefixes of the commonest words from 3 characters up, pairs of
 * common words (a company's word with a legal form, a surname with a connector), persons' whole
 * names of common words, RUCs and DNIs. Each checked against the oracle's first page too.
 */
export function hardMix(oracle: Oracle, n = 2_000): string[] {
  const common = oracle.commonest(30);
  const texts: string[] = [];
  for (const w of common) for (let len = 3; len <= w.length; len++) texts.push(w.slice(0, len));
  for (let i = 0; i < common.length; i++)
    for (let j = 0; j < common.length; j += 3)
      if (i !== j) texts.push(`${common[i]} ${common[j]!.slice(0, 3 + ((i + j) % Math.max(1, common[j]!.length - 2)))}`);
  for (const w of common) for (const tail of ['SAC', 'S.A.C.', 'EIRL', 'DE', 'DEL', 'DE LA', 'Y']) texts.push(`${w} ${tail}`);
  const persons: string[] = [];
  for (let k = 0; persons.length < n / 3; k++) {
    const row = (k * 7_919) % oracle.rows;
    if (String(oracle.ruc[row]).startsWith('10')) persons.push(lineAt(row, oracle.rows).split('|')[1]!);
  }
  const ids: string[] = [];
  for (let k = 0; ids.length < n / 10; k++) {
    const ruc = String(oracle.ruc[(k * 104_729) % oracle.rows]);
    ids.push(k % 2 && ruc.startsWith('10') ? ruc.slice(2, 10) : ruc);
  }
  const hard = shuffled(texts).slice(0, n - persons.length - ids.length);
  return shuffled([...hard, ...persons, ...ids]);
}

/** The mix, 20 at a time (each first page compared with the oracle's), while another caller, a process of its own, asks `contribuyente` one at a time. */
export async function hardLoad(url: string, oracle: Oracle, texts: string[], ruc: string) {
  // The other caller is a process of its own: its answers' times are its clock's, not this busy one's.
  const other = fork(new URL('./lookup-caller.js', import.meta.url), [url, ruc]);
  const lookups = new Promise<number[]>((resolve, reject) => {
    other.once('message', (times) => resolve(times as number[]));
    other.once('exit', () => reject(new Error('the other caller stopped before it answered')));
  });
  try {
    // Each text's first page worked out before the load: the oracle's work would otherwise stall this process's clock.
    const wanted = new Map<string, string>();
    for (const t of texts) if (!/^\d{8}$|^\d{11}$/.test(t.trim())) wanted.set(t, oracle.top(t, 10).join());
    // A pass to warm up (the threads' directories, the page cache), then three passes measured: some thousand lookups meanwhile.
    const answers = await searchesOf(url, { texts, first: 10, width: 20, passes: 3 }, () => other.send('reset'));
    other.send('stop');
    const meanwhile = await lookups;
    const examples: string[] = [];
    let wrong = 0;
    for (const a of answers) {
      // RUCs and DNIs are looked up, not matched on words: the oracle checks the rest.
      const want = wanted.get(a.text);
      const got = a.rucs?.join();
      if (a.error && examples.length < 10) examples.push(`${a.text}: ${a.error}`);
      if (want === undefined || got === undefined || want === got) continue;
      wrong++;
      if (examples.length < 10) examples.push(`${a.text}: expected ${want.slice(0, 40)}…, got ${got.slice(0, 40)}…`);
    }
    const slowest = [...answers].sort((x, y) => y.ms - x.ms).slice(0, 10);
    return {
      ...timesOf(answers),
      slowest: slowest.map((a) => `${a.text}: ${Math.round(a.ms)} ms`),
      differentFromOracle: wrong,
      examples,
      contribuyenteMeanwhile: { lookups: meanwhile.length, ...quantiles(meanwhile) },
    };
  } finally {
    // Stopped by its PID however the load ended.
    if (other.exitCode === null) other.kill();
  }
}

/**
 * `texts` asked of the gateway by bench/search-caller.ts, a process of its own: a pass to warm up, then `passes` measured
 * (`measuring` called between). Stopped by its PID however the load ends.
 */
export async function searchesOf(url: string, asked: Asked, measuring = () => {}): Promise<Answered[]> {
  const caller = fork(new URL('./search-caller.js', import.meta.url), [url]);
  try {
    return await new Promise<Answered[]>((resolve, reject) => {
      caller.on('message', (message) => (message === 'measuring' ? measuring() : resolve(message as Answered[])));
      caller.once('exit', () => reject(new Error('the searching caller stopped before it answered')));
      caller.send(asked);
    });
  } finally {
    if (caller.exitCode === null) caller.kill();
  }
}

/** The answers' times, and those that failed or came back short of `first` with a next page. */
export function timesOf(answers: readonly Answered[], first = 10) {
  return {
    searches: answers.length,
    ...quantiles(answers.map((a) => a.ms)),
    failed: answers.filter((a) => a.error).length,
    shortPages: answers.filter((a) => a.hasNextPage && a.rucs!.length < first).length,
  };
}

function quantiles(xs: readonly number[]) {
  const sorted = [...xs].sort((a, b) => a - b);
  const q = (p: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]! * 10) / 10;
  return { p50: q(0.5), p99: q(0.99), max: q(1) };
}

/** The commonest words alone and together: the searches with the most matches to order. */
const COMMON = ['QUISPE', 'SAC', 'S.A.C.', 'SERVICIOS', 'SERVICIOS GENERALES', 'INVERSIONES SAC', 'QUISPE MAMANI', 'qui', 'ser gen'];

/** 1,000 prefixes typed into a form, cut from names of the register at a length a user stops at, and the common words. */
export function typedPrefixes(lines: number): string[] {
  const texts: string[] = [];
  for (let k = 0; texts.length < 1000; k++) {
    const name = nameAt((k * 7_919_993) % (lines - 1), lines - 1);
    const cut = 3 + ((k * 31) % Math.max(1, name.length - 2));
    const text = name.slice(0, cut);
    if (text.replace(/[^A-Z0-9]/g, '').length >= 3) texts.push(text);
  }
  for (let r = 0; r < 10; r++) texts.push(...COMMON);
  return texts;
}
