import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CODES } from '../src/codes.js';

// The shape of src/ that keeps it workable: no import cycles, no file over
// 400 lines, GitHub only behind the forge, SQLite only behind the store, and
// the engine's dependencies private to the fleet.

const SRC = resolve(import.meta.dirname, '../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const files = sourceFiles(SRC);
const rel = (f: string) => relative(SRC, f);
const IMPORT_RE = /^\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm;

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(IMPORT_RE)].map((m) => (m[1] ?? m[2])!);
}

function localImports(file: string): string[] {
  return importsOf(file)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
}

/** Every cycle in the import graph, each as the chain of files that closes it. */
export function findCycles(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return cycles;
}

describe('the layout of src/', () => {
  it('has no import cycles, type-only imports included', () => {
    const graph = new Map(files.map((f) => [f, localImports(f)]));
    expect(findCycles(graph).map((c) => c.map(rel).join(' -> '))).toEqual([]);
  });

  it('finds a cycle when there is one (the check itself can fail)', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(findCycles(graph)).toEqual([['a', 'b', 'c', 'a']]);
  });

  it('keeps every source file at 400 lines or fewer', () => {
    const long = files.map((f) => ({ file: rel(f), lines: readFileSync(f, 'utf8').split('\n').length })).filter((f) => f.lines > 400);
    expect(long).toEqual([]);
  });

  it('keeps Octokit inside src/forge (and the composition roots that hand Probot its class)', () => {
    // Composition roots: the server, and the database door that runs the same app in the CLI's process.
    const allowed = (f: string) => f.startsWith('forge/') || f.startsWith('sandbox/') || ['app.ts', 'server.ts', 'door.ts', 'webhooks/handlers.ts'].includes(f);
    const offenders = files.filter((f) => !allowed(rel(f)) && importsOf(f).some((s) => s.startsWith('@octokit/') || s === 'probot')).map(rel);
    expect(offenders).toEqual([]);
  });

  it('keeps the database drivers (better-sqlite3, pg) inside src/store', () => {
    const offenders = files.filter((f) => !rel(f).startsWith('store/') && importsOf(f).some((s) => s === 'better-sqlite3' || s === 'pg')).map(rel);
    expect(offenders).toEqual([]);
  });

  it('reads the engine dependencies only inside src/fleet', () => {
    const offenders = files.filter((f) => !rel(f).startsWith('fleet/') && /\bengine\.deps\b/.test(readFileSync(f, 'utf8'))).map(rel);
    expect(offenders).toEqual([]);
  });

  it('has no code in the code table that nothing refuses with', () => {
    const elsewhere = files.filter((f) => rel(f) !== 'codes.ts').map((f) => readFileSync(f, 'utf8')).join('\n');
    expect(CODES.filter((code) => !elsewhere.includes(`'${code}'`))).toEqual([]);
  });
});
