import { z } from 'zod';
import { classifyGitHubError, unlessMissing } from '../errors.js';
import type { Octokit } from './octokit.js';
import { GhWorkflowRun } from './schemas.js';
import type { CheckRunWrite, FoundWorkflowRun, RepoRef, WorkflowRunView } from '../types.js';

// GitHub Actions as GitHubForge calls it: a run's workflow dispatched, found
// by its run-name, read and cancelled; and the check runs yoke keeps on a
// claim PR's head.

const at = (repo: RepoRef) => ({ owner: repo.owner, repo: repo.name });

const viewOf = ({
  id,
  status,
  conclusion,
  repositoryId,
  event,
  actor,
  triggeringActor,
  htmlUrl,
  headSha,
  updatedAt,
}: z.output<typeof GhWorkflowRun>): WorkflowRunView => ({
  id,
  status,
  conclusion,
  repositoryId,
  event,
  actor,
  triggeringActor,
  htmlUrl,
  headSha,
  updatedAt,
});

export async function dispatchWorkflow(
  o: Octokit,
  repo: RepoRef,
  workflow: string,
  ref: string,
  inputs: Record<string, string>,
): Promise<void> {
  await o.request('POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches', {
    ...at(repo),
    workflow_id: workflow,
    ref,
    inputs,
  });
}

export async function findWorkflowRun(
  o: Octokit,
  repo: RepoRef,
  bot: string,
  workflow: string,
  runId: string,
  since: number,
): Promise<FoundWorkflowRun> {
  // The run-name ends with the run id in parentheses: match that exactly, never a substring of another id.
  const named = (title: string) => title.endsWith(`(${runId})`);
  const iterator = o.paginate.iterator('GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs', {
    ...at(repo),
    workflow_id: workflow,
    event: 'workflow_dispatch',
    created: `>=${new Date(since - 60_000).toISOString().slice(0, 19)}Z`,
    per_page: 100,
  });
  const mine: WorkflowRunView[] = [];
  for await (const page of iterator) {
    // Anyone with write access can dispatch the workflow under any run-name: only the app's own runs count.
    for (const r of z.array(GhWorkflowRun).parse(page.data))
      if (named(r.title) && r.actor === bot) mine.push(viewOf(r));
  }
  if (mine.length === 0) return { kind: 'none' };
  return mine.length === 1 ? { kind: 'one', run: mine[0]! } : { kind: 'many', ids: mine.map((r) => r.id) };
}

export async function getWorkflowRun(o: Octokit, repo: RepoRef, id: number): Promise<WorkflowRunView | null> {
  const res = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/actions/runs/{run_id}', { ...at(repo), run_id: id }),
  );
  return res && viewOf(GhWorkflowRun.parse(res.data));
}

export async function cancelWorkflowRun(o: Octokit, repo: RepoRef, id: number): Promise<void> {
  try {
    await o.request('POST /repos/{owner}/{repo}/actions/runs/{run_id}/cancel', { ...at(repo), run_id: id });
  } catch (err) {
    // 409: the run already completed, which is what cancel wanted.
    if (classifyGitHubError(err).status !== 409) throw err;
  }
}

export async function createCheckRun(
  o: Octokit,
  repo: RepoRef,
  headSha: string,
  check: CheckRunWrite,
  now: number,
): Promise<number> {
  const { data } = await o.request('POST /repos/{owner}/{repo}/check-runs', {
    ...at(repo),
    head_sha: headSha,
    ...checkRunBody(check, now),
  });
  return z.object({ id: z.number() }).parse(data).id;
}

export async function updateCheckRun(
  o: Octokit,
  repo: RepoRef,
  id: number,
  check: CheckRunWrite,
  now: number,
): Promise<void> {
  await o.request('PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}', {
    ...at(repo),
    check_run_id: id,
    ...checkRunBody(check, now),
  });
}

/** GitHub caps a check run's summary at 65,535 characters. */
const CHECK_SUMMARY_LIMIT = 65_535;

function checkRunBody(c: CheckRunWrite, now: number) {
  const summary =
    c.summary.length > CHECK_SUMMARY_LIMIT
      ? `${c.summary.slice(0, CHECK_SUMMARY_LIMIT - 40)}\n\n(cut at GitHub's limit)`
      : c.summary;
  return {
    name: c.name,
    status: c.status,
    external_id: c.externalId,
    output: { title: c.title, summary },
    ...(c.detailsUrl ? { details_url: c.detailsUrl } : {}),
    ...(c.status === 'completed'
      ? { conclusion: c.conclusion ?? 'neutral', completed_at: new Date(now).toISOString() }
      : {}),
  };
}
