import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The docs point at files that exist: every yoke source path docs/rules.md,
// docs/architecture.md and the README name (a `.ts` file, or a path under one
// of yoke's own folders) is there, under src/ or from the repository's root;
// a bare file name (a list inside a folder's paragraph) is somewhere in src/
// or sandbox/.

const ROOT = resolve(import.meta.dirname, '..');
const OWN = /^(src|sandbox|test|bench|templates|bin|docs|eslint-rules)\//;

/** The paths a page names in backticks that must exist, as written. */
export function namedPaths(text: string): string[] {
  return [...text.matchAll(/`([\w./-]+\.(?:ts|cjs|js|md|yml|sh))`/g)]
    .map((m) => m[1]!)
    .filter((p) => p.endsWith('.ts') || OWN.test(p));
}

const SRC_NAMES = new Set(
  ['src', 'sandbox'].flatMap((d) => readdirSync(resolve(ROOT, d), { recursive: true }).map((f) => basename(String(f)))),
);
const exists = (p: string) =>
  existsSync(resolve(ROOT, p)) || existsSync(resolve(ROOT, 'src', p)) || (!p.includes('/') && SRC_NAMES.has(p));
const missing = (page: string) => namedPaths(readFileSync(resolve(ROOT, page), 'utf8')).filter((p) => !exists(p));

describe('the docs name files that exist', () => {
  const pages = [
    'README.md',
    ...readdirSync(resolve(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  it('covers every page of docs/', () => {
    expect(pages).toEqual(expect.arrayContaining(['docs/rules.md', 'docs/architecture.md', 'docs/hosting.md']));
  });
  for (const page of pages) {
    it(`${page} names no file that is not there`, () => {
      expect([...new Set(missing(page))]).toEqual([]);
    });
  }

  it('links only to pages that are there: every relative link of the README and docs/ resolves', () => {
    const broken = pages.flatMap((page) =>
      [...readFileSync(resolve(ROOT, page), 'utf8').matchAll(/\]\(([^)#:]+)(?:#[^)]*)?\)/g)]
        .map((m) => m[1]!)
        .filter((link) => !existsSync(resolve(ROOT, page, '..', link)))
        .map((link) => `${page} -> ${link}`),
    );
    expect(broken).toEqual([]);
  });

  it('finds a file that is not there (the check itself can fail)', () => {
    expect(namedPaths('`fleet/pass.ts`, `codes.ts` and `.github/yoke.yml`, `test/nowhere.test.ts`')).toEqual([
      'fleet/pass.ts',
      'codes.ts',
      'test/nowhere.test.ts',
    ]);
    expect(['fleet/pass.ts', 'pass.ts', 'codes.ts', 'codes/protection.ts'].filter((p) => !exists(p))).toEqual([
      'codes.ts',
      'codes/protection.ts',
    ]);
  });
});
