import { z } from 'zod';
import { classifyGitHubError } from '../errors.js';
import type { Octokit } from './octokit.js';
import type {
  DeploymentCreated,
  DeploymentStatusView,
  DeploymentStatusWrite,
  DeploymentWrite,
  EnvironmentRules,
  ProtectionAnswer,
  RepoRef,
} from '../types.js';

// DP01, DP03: GitHub's deployments, deployment statuses, environments and the
// custom protection rule's callback, as GitHubForge calls them.

const at = (repo: RepoRef) => ({ owner: repo.owner, repo: repo.name });

const GhDeploymentStatus = z.object({
  state: z.string(),
  creator: z.object({ login: z.string() }).nullable().optional(),
  log_url: z.string().nullable().optional(),
  environment_url: z.string().nullable().optional(),
});

const GhProtectionRules = z.object({
  custom_deployment_protection_rules: z
    .array(z.object({ enabled: z.boolean(), app: z.object({ slug: z.string() }) }))
    .default([]),
});

export async function createDeployment(o: Octokit, repo: RepoRef, d: DeploymentWrite): Promise<DeploymentCreated> {
  try {
    const { status, data } = await o.request('POST /repos/{owner}/{repo}/deployments', {
      ...at(repo),
      ref: d.sha,
      environment: d.environment,
      description: d.description,
      payload: d.payload,
      // yoke deploys the commit it pinned: never a merge of the default branch into it.
      auto_merge: false,
      required_contexts: d.requiredContexts,
    });
    // 202 is GitHub's auto-merge answer, which auto_merge: false rules out; anything without an id is a refusal.
    const id = z.object({ id: z.number() }).safeParse(data);
    return id.success
      ? { ok: true, id: id.data.id }
      : {
          ok: false,
          status,
          message: z.object({ message: z.string() }).catch({ message: 'GitHub made no deployment' }).parse(data)
            .message,
        };
  } catch (err) {
    const e = classifyGitHubError(err);
    if (e.kind === 'fault') throw err;
    return { ok: false, status: e.status, message: e.message };
  }
}

export async function createDeploymentStatus(
  o: Octokit,
  repo: RepoRef,
  id: number,
  s: DeploymentStatusWrite,
): Promise<void> {
  await o.request('POST /repos/{owner}/{repo}/deployments/{deployment_id}/statuses', {
    ...at(repo),
    deployment_id: id,
    state: s.state,
    description: s.description.slice(0, 140),
    ...(s.logUrl ? { log_url: s.logUrl } : {}),
    ...(s.environmentUrl ? { environment_url: s.environmentUrl } : {}),
    // As GitHub does by default: a success makes the environment's earlier deployments inactive.
    auto_inactive: true,
  });
}

export async function listDeploymentStatuses(o: Octokit, repo: RepoRef, id: number): Promise<DeploymentStatusView[]> {
  const { data } = await o.request('GET /repos/{owner}/{repo}/deployments/{deployment_id}/statuses', {
    ...at(repo),
    deployment_id: id,
    per_page: 100,
  });
  return z
    .array(GhDeploymentStatus)
    .parse(data)
    .map((s) => ({
      state: s.state,
      creator: s.creator?.login ?? null,
      logUrl: s.log_url ?? null,
      environmentUrl: s.environment_url ?? null,
    }));
}

export async function pinBranch(o: Octokit, repo: RepoRef, branch: string, sha: string): Promise<void> {
  try {
    await o.request('POST /repos/{owner}/{repo}/git/refs', { ...at(repo), ref: `refs/heads/${branch}`, sha });
  } catch (err) {
    // 422 "Reference already exists": move it to this commit.
    if (classifyGitHubError(err).status !== 422) throw err;
    await o.request('PATCH /repos/{owner}/{repo}/git/refs/{ref}', {
      ...at(repo),
      ref: `heads/${branch}`,
      sha,
      force: true,
    });
  }
}

export async function readEnvironmentRules(o: Octokit, repo: RepoRef, environment: string): Promise<EnvironmentRules> {
  try {
    const { data } = await o.request(
      'GET /repos/{owner}/{repo}/environments/{environment_name}/deployment_protection_rules',
      { ...at(repo), environment_name: environment },
    );
    return {
      exists: true,
      ruleApps: GhProtectionRules.parse(data)
        .custom_deployment_protection_rules.filter((r) => r.enabled)
        .map((r) => r.app.slug),
    };
  } catch (err) {
    if (classifyGitHubError(err).kind === 'missing') return { exists: false };
    throw err;
  }
}

export async function reviewProtectionRule(
  o: Octokit,
  repo: RepoRef,
  workflowRunId: number,
  a: ProtectionAnswer,
): Promise<{ ok: true } | { ok: false; status: number | null; message: string }> {
  try {
    await o.request('POST /repos/{owner}/{repo}/actions/runs/{run_id}/deployment_protection_rule', {
      ...at(repo),
      run_id: workflowRunId,
      environment_name: a.environment,
      state: a.state,
      comment: a.comment.slice(0, 1000),
    });
    return { ok: true };
  } catch (err) {
    const e = classifyGitHubError(err);
    if (e.kind === 'fault') throw err;
    return { ok: false, status: e.status, message: e.message };
  }
}
