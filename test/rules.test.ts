import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// Every numbered rule docs/rules.md lists is named by a test that proves it (its id first in the title), and
// every id a test names is one docs/rules.md lists: a rule cannot lose its last test, nor a test cite a rule
// nobody wrote down, without this failing.

const ROOT = join(import.meta.dirname, '..');
const ID = /^[A-Z]{2}\d{2}$/;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? testFiles(join(dir, e.name)) : e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [],
  );
}

/** The ids a string literal starts with (`'LD03 TR43 a commit …'`, `"DX12/DX13 …"`), in every test file. */
function namedInTests(): Set<string> {
  const out = new Set<string>();
  for (const file of testFiles(join(ROOT, 'test'))) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/['"`]((?:[A-Z]{2}\d{2}[ /])+)/g))
      for (const id of m[1]!.split(/[ /]/)) if (ID.test(id)) out.add(id);
  }
  return out;
}

/** The ids docs/rules.md gives a row. */
function listed(): Set<string> {
  const text = readFileSync(join(ROOT, 'docs', 'rules.md'), 'utf8');
  return new Set([...text.matchAll(/^\| ([A-Z]{2}\d{2}) \|/gm)].map((m) => m[1]!));
}

describe('the rules and the tests that name them', () => {
  it('every rule docs/rules.md lists is named first in some test title, and every id a test names is listed', () => {
    const rules = listed();
    const named = namedInTests();
    expect([...rules].filter((id) => !named.has(id)).sort()).toEqual([]);
    expect([...named].filter((id) => !rules.has(id)).sort()).toEqual([]);
    expect(rules.size).toBeGreaterThan(100);
  });
});
