import { isLosslessNumber, parse as parseLossless } from 'lossless-json';

/** Why `data` is no record: its first issues, each `path: code` as zod names them. */
export class Unreadable {
  constructor(readonly issues: string[]) {}
}

/**
 * Reads an answer's `data` into its record, or says why it cannot; with `parse`, the body is
 * read by it instead of JSON.parse (a record whose numbers must keep the text they were sent as).
 */
export type Reader<T> = ((data: unknown) => T | Unreadable) & { readonly parse?: (text: string) => unknown };

/**
 * What the service writes for "no value": empty or blank text, or a lone dash (upstream-notes: a
 * natural person's address). Most values start with a letter or a digit and end with no space,
 * and are kept untrimmed (trimming every value made two strings a field: docs/performance.md).
 * The rest are trimmed, not matched with `/^\s*-?\s*$/`, whose backtracking took quadratic
 * time over long blank runs.
 */
function noValue(v: string): boolean {
  if (v.length === 0) return true;
  if (v.charCodeAt(0) > 45 && v.charCodeAt(v.length - 1) > 32) return false;
  const trimmed = v.trim();
  return trimmed === '' || trimmed === '-';
}

/** A field's value that breaks its kind. */
const BAD = Symbol('bad');
const MAX_ISSUES = 5;

/**
 * One record being read: each field by its name, checked and cleaned, and what breaks its kind
 * noted. "No value" (absent, null, `""`, blank, a lone `"-"`) is null, and an absent list empty.
 */
export class Reading {
  issues: string[] | undefined;

  constructor(private readonly input: Record<string, unknown>) {}

  /** Text the record must carry, kept as sent. */
  text(key: string): string {
    const v = this.input[key];
    return typeof v === 'string' ? v : this.#bad(key, '');
  }

  /** Text or a number the record must carry, as text (a receipt's series and number). */
  figure(key: string): string {
    const v = this.input[key];
    return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : this.#bad(key, '');
  }

  /** Text, or no value. */
  optional(key: string): string | null {
    const v = this.input[key];
    if (v == null) return null;
    return typeof v === 'string' ? (noValue(v) ? null : v) : this.#bad(key, null);
  }

  /** Text or a number, or no value, as text. */
  code(key: string): string | null {
    const code = codeOf(this.input[key]);
    return code === BAD ? this.#bad(key, null) : code;
  }

  /** A list of codes, any of them without a value (`ubigeo`'s three levels). */
  levels(key: string): (string | null)[] {
    const v = this.input[key];
    if (v == null) return [];
    const levels = Array.isArray(v) ? levelsOf(v) : BAD;
    return levels === BAD ? this.#bad(key, []) : levels;
  }

  /** A list of texts. */
  list(key: string): string[] {
    const v = this.input[key];
    if (v == null) return [];
    return Array.isArray(v) && v.every((s) => typeof s === 'string') ? (v as string[]) : this.#bad(key, []);
  }

  /** A list of anything, each as text: strings as sent, anything else as its JSON. */
  notes(key: string): string[] {
    const v = this.input[key];
    if (v == null) return [];
    return Array.isArray(v) ? v.map((o: unknown) => (typeof o === 'string' ? o : JSON.stringify(o))) : this.#bad(key, []);
  }

  /**
   * A list of remarks, each typed: an object's `codigo` and `descripcion` (texts, or numbers as
   * text; "no value" null), a text as its `descripcion`; anything else as its JSON text there.
   */
  remarks(key: string): { codigo: string | null; descripcion: string | null }[] {
    const v = this.input[key];
    if (v == null) return [];
    if (!Array.isArray(v)) return this.#bad(key, []);
    const text = (x: unknown) => (typeof x === 'number' ? String(x) : typeof x === 'string' && !noValue(x) ? x : null);
    return v.map((o: unknown) =>
      typeof o === 'object' && o !== null && !Array.isArray(o)
        ? { codigo: text((o as Record<string, unknown>)['codigo']), descripcion: text((o as Record<string, unknown>)['descripcion']) }
        : { codigo: null, descripcion: typeof o === 'string' ? text(o) : JSON.stringify(o) },
    );
  }

  /**
   * A decimal the record must carry, as text with at least three decimals ("3.75" and 3.75 are
   * "3.750"), worked out digit by digit; or no value. A number arrives here as the text it was
   * sent as when the reader parses with `decimalsAsText`.
   */
  decimal(key: string): string | null {
    if (!(key in this.input)) return this.#bad(key, null);
    const v = this.input[key];
    if (v == null || (typeof v === 'string' && noValue(v))) return null;
    const text = typeof v === 'string' ? decimalText(v) : typeof v === 'number' ? decimalText(String(v)) : BAD;
    return text === BAD ? this.#bad(key, null) : text;
  }

  /** A date, or no value: `YYYY-MM-DD` as sent, `DD/MM/YYYY` turned into it, any other text as sent. */
  date(key: string): string | null {
    const text = this.optional(key);
    const dmy = text === null ? null : /^\s*(\d{2})\/(\d{2})\/(\d{4})\s*$/.exec(text);
    return dmy ? `${dmy[3]}-${dmy[2]}-${dmy[1]}` : text;
  }

  #bad<T>(key: string, instead: T): T {
    const issues = (this.issues ??= []);
    if (issues.length < MAX_ISSUES) issues.push(`${key}: ${key in this.input ? 'invalid_type' : 'required'}`);
    return instead;
  }
}

/**
 * A reader of the records `build` makes, each field read through a Reading by its name. Written
 * here rather than with zod: its unions and per-field wrappers made reading a record the
 * costliest step of an answer (docs/performance.md, "Reading a record").
 */
export function reader<T>(build: (r: Reading) => T): Reader<T> {
  return (data) => {
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return new Unreadable(['(root): invalid_type']);
    const r = new Reading(data as Record<string, unknown>);
    const record = build(r);
    return r.issues ? new Unreadable(r.issues) : record;
  };
}

function codeOf(v: unknown): string | null | typeof BAD {
  if (v == null) return null;
  if (typeof v === 'number') return String(v);
  return typeof v === 'string' ? (noValue(v) ? null : v) : BAD;
}

function levelsOf(levels: readonly unknown[]): (string | null)[] | typeof BAD {
  const out: (string | null)[] = [];
  for (const level of levels) {
    const code = codeOf(level);
    if (code === BAD) return BAD;
    out.push(code);
  }
  return out;
}

/** A decimal's text, plain or with an exponent (`3.75`, `375e-2`), as plain text with at least three decimals. */
function decimalText(v: string): string | typeof BAD {
  const m = /^(-?)(\d{1,30})(?:\.(\d{1,30}))?(?:[eE]([+-]?\d{1,2}))?$/.exec(v.trim());
  if (!m) return BAD;
  const [, sign, whole, fraction = '', exponent] = m;
  let digits = whole! + fraction;
  let point = whole!.length + (exponent ? Number(exponent) : 0);
  if (point < 1) ((digits = '0'.repeat(1 - point) + digits), (point = 1));
  if (point > digits.length) digits = digits.padEnd(point, '0');
  const integer = digits.slice(0, point).replace(/^0+(?=\d)/, '');
  // Zeros past the third decimal say nothing; the first three are how SUNAT writes a rate.
  const decimals = digits.slice(point).replace(/0+$/, '').padEnd(3, '0');
  return `${sign}${integer}.${decimals}`;
}

/**
 * A `parse` for a reader: JSON whose numbers under `keys` keep the text they were sent as
 * (JSON.parse would make them binary floats first); every other number read as JSON.parse reads it.
 */
export function decimalsAsText(keys: readonly string[]): (text: string) => unknown {
  const named = new Set(keys);
  return (text) =>
    parseLossless(text, (key, value) => (isLosslessNumber(value) ? (named.has(key) ? value.value : Number(value.value)) : value));
}
