import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The layout docs/architecture.md describes: rooms by responsibility, small files, imports flowing one way. */
const SRC = new URL('../src/', import.meta.url).pathname;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** The room of a file: its folder under src/, or its own name at the top. */
const room = (path: string) => {
  const rel = relative(SRC, path);
  return rel.includes('/') ? rel.split('/')[0]! : rel.replace(/\.ts$/, '');
};

describe('the layout of src/', () => {
  it('has at most five files at the top', () => {
    expect(readdirSync(SRC).filter((n) => n.endsWith('.ts')).length).toBeLessThanOrEqual(5);
  });

  it('has no file over 300 lines', () => {
    for (const file of files(SRC)) expect(readFileSync(file, 'utf8').split('\n').length, relative(SRC, file)).toBeLessThanOrEqual(301);
  });

  it('has imports between rooms that flow one way (no room reaches back to itself)', () => {
    const edges = new Map<string, Set<string>>();
    for (const file of files(SRC)) {
      for (const [, spec] of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
        const target = normalize(join(dirname(file), spec!));
        if (!target.startsWith(SRC)) continue;
        const [a, b] = [room(file), room(target)];
        if (a !== b) edges.set(a, (edges.get(a) ?? new Set()).add(b));
      }
    }
    const reaches = (from: string, to: string, seen = new Set<string>()): boolean =>
      [...(edges.get(from) ?? [])].some((next) => next === to || (!seen.has(next) && (seen.add(next), reaches(next, to, seen))));
    for (const a of edges.keys()) expect(reaches(a, a), `${a} imports something that imports ${a}`).toBe(false);
  });
});
