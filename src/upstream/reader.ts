/** Why `data` is no record: its first issues, each `path: code` as zod names them. */
export class Unreadable {
  constructor(readonly issues: string[]) {}
}

/** Reads an answer's `data` into its record, or says why it cannot. */
export type Reader<T> = (data: unknown) => T | Unreadable;

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

  #bad<T>(key: string, instead: T): T {
    const issues = (this.issues ??= []);
    if (issues.length < MAX_ISSUES) issues.push(`${key}: ${key in this.input ? 'invalid_type' : 'required'}`);
    return instead;
  }
}

/**
 * A reader of the records `build` makes, each field read through a Reading by its name. Written
 * here rather than with zod: its unions and per-field wrappers read a record in about three
 * times the time (docs/performance.md, "Reading a record").
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
