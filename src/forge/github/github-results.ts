import { createHash } from 'node:crypto';
import { z } from 'zod';
import { classifyGitHubError, unlessMissing } from '../errors.js';
import type { Octokit } from './octokit.js';
import { GhWorkflowRun } from './schemas.js';
import type { ArtifactView, RefMove, RepoRef, WorkflowRunView } from '../types.js';

// What runs need when they reach yoke through GitHub alone (YOKE_RUNS_REACH=github):
// yoke's runner published into the repository under a ref of its own, a run's
// result artifact listed and downloaded, a branch moved or removed, and the
// workflow runs waiting at an environment's protection rules.

const at = (repo: RepoRef) => ({ owner: repo.owner, repo: repo.name });

/** The ref a runner of this sha256 lives under (a commit holding yoke-runner.mjs). */
export const runnerRef = (sha256: string) => `refs/yoke/runner/${sha256}`;
export const RUNNER_FILE = 'yoke-runner.mjs';

/**
 * Publishes the runner under its ref, once: blob, tree, a parentless commit,
 * then the ref. A ref already there is left as it is (its name is the hash the
 * workflow checks, so whatever it holds is refused unless it is this runner).
 */
/** git's id of a blob: the sha1 of its header and content. */
const blobId = (content: string): string => {
  const body = Buffer.from(content, 'utf8');
  return createHash('sha1').update(`blob ${body.length}\0`).update(body).digest('hex');
};

/** Whether a commit's tree holds exactly the runner, and nothing else. */
async function holdsRunner(o: Octokit, repo: RepoRef, commit: string, content: string): Promise<boolean> {
  const c = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/commits/{ref}', { ...at(repo), ref: commit }),
  );
  const tree = z.object({ commit: z.object({ tree: z.object({ sha: z.string() }) }) }).safeParse(c?.data);
  if (!tree.success) return false;
  const t = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/git/trees/{tree_sha}', { ...at(repo), tree_sha: tree.data.commit.tree.sha }),
  );
  const entries = z.object({ tree: z.array(z.object({ path: z.string(), sha: z.string() })) }).safeParse(t?.data);
  return (
    entries.success &&
    entries.data.tree.length === 1 &&
    entries.data.tree[0]!.path === RUNNER_FILE &&
    entries.data.tree[0]!.sha === blobId(content)
  );
}

export async function publishRunner(
  o: Octokit,
  repo: RepoRef,
  sha256: string,
  content: string,
): Promise<'published' | 'present'> {
  const ref = runnerRef(sha256);
  const there = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/git/ref/{ref}', { ...at(repo), ref: ref.slice('refs/'.length) }),
  );
  const sha = (res: { data: unknown }) => z.object({ sha: z.string() }).parse(res.data).sha;
  // Any writer can make a ref under refs/yoke/: one there counts only if it holds exactly this runner.
  const heldCommit = there ? z.object({ object: z.object({ sha: z.string() }) }).parse(there.data).object.sha : null;
  if (heldCommit && (await holdsRunner(o, repo, heldCommit, content))) return 'present';
  const blob = sha(
    await o.request('POST /repos/{owner}/{repo}/git/blobs', {
      ...at(repo),
      content: Buffer.from(content, 'utf8').toString('base64'),
      encoding: 'base64',
    }),
  );
  const tree = sha(
    await o.request('POST /repos/{owner}/{repo}/git/trees', {
      ...at(repo),
      tree: [{ path: RUNNER_FILE, mode: '100644', type: 'blob', sha: blob }],
    }),
  );
  const commit = sha(
    await o.request('POST /repos/{owner}/{repo}/git/commits', {
      ...at(repo),
      message: `yoke's runner, sha256 ${sha256}`,
      tree,
      parents: [],
    }),
  );
  if (heldCommit) {
    // TR35: squatted with something else: yoke's runner takes the ref back (the jobs would refuse the other by its sha256).
    await o.request('PATCH /repos/{owner}/{repo}/git/refs/{ref}', {
      ...at(repo),
      ref: ref.slice('refs/'.length),
      sha: commit,
      force: true,
    });
    return 'published';
  }
  try {
    await o.request('POST /repos/{owner}/{repo}/git/refs', { ...at(repo), ref, sha: commit });
  } catch (err) {
    // Another yoke process published it in between.
    if (!/already exists/i.test(classifyGitHubError(err).message)) throw err;
  }
  return 'published';
}

const GhArtifact = z.object({
  id: z.number(),
  name: z.string(),
  size_in_bytes: z.number(),
  expired: z.boolean(),
});

export async function listRunArtifacts(o: Octokit, repo: RepoRef, workflowRunId: number): Promise<ArtifactView[]> {
  const res = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts', {
      ...at(repo),
      run_id: workflowRunId,
      per_page: 100,
    }),
  );
  if (!res) return [];
  return z
    .object({ artifacts: z.array(GhArtifact) })
    .parse(res.data)
    .artifacts.map((a) => ({ id: a.id, name: a.name, sizeInBytes: a.size_in_bytes, expired: a.expired }));
}

/** An artifact's zip archive (GitHub answers with a redirect to it); null when it is gone. */
export async function downloadArtifact(o: Octokit, repo: RepoRef, artifactId: number): Promise<Uint8Array | null> {
  const res = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}', {
      ...at(repo),
      artifact_id: artifactId,
      archive_format: 'zip',
    }),
  );
  if (!res) return null;
  const data: unknown = res.data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw new Error(`the artifact ${artifactId} download was not a zip archive`);
}

/** Moves a branch to a commit only if that is a fast forward; GitHub's refusal comes back as data. */
export async function moveBranch(o: Octokit, repo: RepoRef, branch: string, sha: string): Promise<RefMove> {
  try {
    await o.request('PATCH /repos/{owner}/{repo}/git/refs/{ref}', {
      ...at(repo),
      ref: `heads/${branch}`,
      sha,
      force: false,
    });
    return { ok: true };
  } catch (err) {
    const e = classifyGitHubError(err);
    if (e.kind === 'fault') throw err;
    return { ok: false, status: e.status, message: e.message };
  }
}

export async function deleteBranch(o: Octokit, repo: RepoRef, branch: string): Promise<void> {
  await unlessMissing(
    () => o.request('DELETE /repos/{owner}/{repo}/git/refs/{ref}', { ...at(repo), ref: `heads/${branch}` }),
    [422],
  );
}

/** Workflow runs of the repository waiting at a protection rule (`status=waiting`), newest first. */
export async function listWaitingRuns(o: Octokit, repo: RepoRef): Promise<WorkflowRunView[]> {
  const res = await o.request('GET /repos/{owner}/{repo}/actions/runs', {
    ...at(repo),
    status: 'waiting',
    per_page: 100,
  });
  return z
    .object({ workflow_runs: z.array(GhWorkflowRun) })
    .parse(res.data)
    .workflow_runs.map(({ title: _title, ...view }) => view);
}

/** The environments a workflow run waits on for protection rules. */
export async function listPendingDeployments(o: Octokit, repo: RepoRef, workflowRunId: number): Promise<string[]> {
  const res = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/actions/runs/{run_id}/pending_deployments', {
      ...at(repo),
      run_id: workflowRunId,
    }),
  );
  if (!res) return [];
  return z
    .array(z.object({ environment: z.object({ name: z.string() }) }))
    .parse(res.data)
    .map((p) => p.environment.name);
}
