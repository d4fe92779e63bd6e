import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The layout docs/architecture.md describes: rooms by responsibility, imports flowing down the floors, no cycle. No line
 * count: a file is as long as its one concept needs, formatted by prettier (the test command checks it).
 */
const SRC = new URL('../src/', import.meta.url).pathname;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** The room of a file: its folder under src/, or its own name at the top (imports name it `.js`). */
const room = (path: string) => {
  const rel = relative(SRC, path);
  return rel.includes('/') ? rel.split('/')[0]! : rel.replace(/\.[jt]s$/, '');
};

/** The floors, top to bottom: a room may import its own floor or one below, never one above. */
const FLOORS = [
  'main',
  'process',
  'app',
  'http',
  'pipeline',
  'schema',
  'webhooks',
  'errors',
  'data',
  'telemetry',
  'sandbox',
  'sunat',
  'padron',
  'upstream',
  'config',
];
const floor = (name: string) => {
  const at = FLOORS.indexOf(name);
  if (at < 0) throw new Error(`src/${name} is on no floor: add it to FLOORS and docs/architecture.md`);
  return at;
};

describe('the layout of src/', () => {
  it('has at most five files at the top', () => {
    expect(readdirSync(SRC).filter((n) => n.endsWith('.ts')).length).toBeLessThanOrEqual(5);
  });

  it("marks the plugins for the fast path in one place, the app's list of them, from one table of treatments", () => {
    const marking = files(SRC).filter((path) => readFileSync(path, 'utf8').includes('treatedByFastPath('));
    expect(marking.map((path) => relative(SRC, path)).sort()).toEqual(['app.ts']);
  });

  it('keeps the README for users: at most 300 lines (details go to docs/)', () => {
    expect(readFileSync('README.md', 'utf8').trimEnd().split('\n').length).toBeLessThanOrEqual(300);
  });

  it('has every import between rooms run down the floors docs/architecture.md states', () => {
    const ups: string[] = [];
    for (const file of files(SRC)) {
      for (const [, spec] of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
        const target = normalize(join(dirname(file), spec!));
        if (!target.startsWith(SRC)) continue;
        const [a, b] = [room(file), room(target)];
        if (a !== b && floor(b) < floor(a)) ups.push(`${relative(SRC, file)} imports ${relative(SRC, target)}, a floor up`);
      }
    }
    expect(ups).toEqual([]);
  });

  it('has no import cycle: a file never reaches itself through what it imports (types aside, which are gone at run time)', () => {
    const importsOf = new Map<string, string[]>();
    for (const file of files(SRC)) {
      const targets = [
        ...readFileSync(file, 'utf8').matchAll(/^(?:import (?!type )[^;]*?from|import|export [^;]*?from) '(\.[^']+)'/gm),
      ].map(([, spec]) => normalize(join(dirname(file), spec!)).replace(/\.js$/, '.ts'));
      importsOf.set(file, targets);
    }
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(SRC, f)).join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const target of importsOf.get(file) ?? []) visit(target, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of importsOf.keys()) visit(file, []);
    expect(cycles).toEqual([]);
  });

  it('states the same floors in docs/architecture.md', () => {
    const doc = readFileSync(new URL('../docs/architecture.md', import.meta.url), 'utf8');
    expect(doc).toContain(FLOORS.map((f) => `\`${f}\``).join(' → '));
  });
});

describe('the paths the docs name', () => {
  const ROOT = new URL('../', import.meta.url).pathname;
  const PATH = /\b(?:src|test|bench|scripts|deploy|docs)\/[\w./-]+\.(?:ts|md|yaml|sh|json|graphql)\b/g;
  const DOCS = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((n) => n.endsWith('.md'))
      .map((n) => `docs/${n}`),
  ];

  it('exist, in README.md, docs/ and the comments of src/', () => {
    const missing: string[] = [];
    for (const file of [...DOCS.map((d) => join(ROOT, d)), ...files(SRC)]) {
      for (const [path] of readFileSync(file, 'utf8').matchAll(PATH)) {
        try {
          statSync(join(ROOT, path));
        } catch {
          missing.push(`${relative(ROOT, file)} names ${path}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('the tests', () => {
  const TEST = new URL('./', import.meta.url).pathname;
  /** Folders of tests that go through the whole gateway or its packaging, not one file of src/. */
  const WHOLE = ['e2e', 'image', 'deploy', 'fixtures'];
  /** Files at the top that test the whole of src/ rather than one of its files. */
  const ABOUT_ALL = ['layout.test.ts', 'soak.test.ts'];

  it('mirror src/: test/<room>/<file>.test.ts tests src/<room>/<file>.ts', () => {
    const unmatched = files(TEST)
      .map((path) => relative(TEST, path))
      .filter((rel) => rel.endsWith('.test.ts') && !WHOLE.includes(rel.split('/')[0]!) && !ABOUT_ALL.includes(rel))
      .filter((rel) => {
        try {
          return !statSync(join(SRC, rel.replace(/\.test\.ts$/, '.ts'))).isFile();
        } catch {
          return true;
        }
      });
    expect(unmatched).toEqual([]);
  });
});
