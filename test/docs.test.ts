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
  const files = [...text.matchAll(/`([\w./-]+\.(?:ts|cjs|js|md|yml|sh))`/g)]
    .map((m) => m[1]!)
    .filter((p) => p.endsWith('.ts') || OWN.test(p));
  // A folder of yoke's own, named as one (`src/delivery`, `test/fleet/`).
  const folders = [...text.matchAll(/`((?:src|sandbox|bench|templates|eslint-rules)\/[\w/-]*)`/g)].map((m) => m[1]!);
  return [...files, ...folders];
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
    expect(
      namedPaths('`fleet/engine/pass.ts`, `codes.ts` and `.github/yoke.yml`, `test/nowhere.test.ts` in `src/qa`'),
    ).toEqual(['fleet/engine/pass.ts', 'codes.ts', 'test/nowhere.test.ts', 'src/qa']);
    expect(exists('src/qa')).toBe(false);
    expect(['fleet/engine/pass.ts', 'pass.ts', 'codes.ts', 'codes/protection.ts'].filter((p) => !exists(p))).toEqual([
      'codes.ts',
      'codes/protection.ts',
    ]);
  });
});

/** A route as the docs and the table write it: its method and path, every parameter one `:`, no query. */
export const routeKey = (method: string, path: string): string =>
  `${method.toUpperCase()} ${path.replace(/\?.*$/, '').replace(/:[A-Za-z_]+/g, ':')}`;

/** The `METHOD /path` routes a page names in backticks. */
export function documentedRoutes(text: string): Set<string> {
  return new Set([...text.matchAll(/`(GET|POST|PUT|PATCH|DELETE) (\/[^`\s]*)/g)].map((m) => routeKey(m[1]!, m[2]!)));
}

/** The `--flags` a page names in backticks. */
export const documentedFlags = (text: string): Set<string> =>
  new Set([...text.matchAll(/`(--[a-z-]+)/g)].map((m) => m[1]!));

describe('the docs say what the code does', () => {
  it('docs/http-api.md names every route yoke serves', async () => {
    const { ROUTE } = await import('../src/http/api/routes.js');
    const documented = documentedRoutes(readFileSync(resolve(ROOT, 'docs/http-api.md'), 'utf8'));
    const served = Object.values(ROUTE).map((r) => routeKey(r.method, r.path));
    expect(served.filter((r) => !documented.has(r))).toEqual([]);
    // The check can fail: a route the page does not name is found.
    expect(documentedRoutes('`GET /yoke/api/runs/:id` and `POST /yoke/api/fleet?x=1`')).toEqual(
      new Set(['GET /yoke/api/runs/:', 'POST /yoke/api/fleet']),
    );
  });

  it('docs/sandbox.md names every flag of `npm run sandbox`', async () => {
    const { sandboxProgram } = await import('../sandbox/program.js');
    const documented = documentedFlags(readFileSync(resolve(ROOT, 'docs/sandbox.md'), 'utf8'));
    const flags = sandboxProgram().options.map((o) => o.long ?? '');
    expect(flags.length).toBeGreaterThan(5);
    expect(flags.filter((f) => !documented.has(f))).toEqual([]);
    expect(documentedFlags('`--postgres` and `--otel [URL]`')).toEqual(new Set(['--postgres', '--otel']));
  });
});
