import { z } from 'zod';
import { classifyGitHubError, unlessMissing } from '../errors.js';
import type { Octokit } from './octokit.js';
import { GhBranch, GhBranchRules, GhCommit, GhCompare, GhGitCommit, GhRef, GhTree } from './schemas.js';
import type { BranchRules, MergeResult, PushToken, RepoRef } from '../types.js';

// A repository's commits, branches and files as GitHubForge reads them: a
// ref resolved, a branch's protection, ancestry, a tree and a file at a
// commit. Each answers null (or nothing) for what GitHub does not have. And
// the one git write landing needs: a merge into a branch (LD03).

const at = (repo: RepoRef) => ({ owner: repo.owner, repo: repo.name });

export async function resolveCommit(o: Octokit, repo: RepoRef, ref: string): Promise<string | null> {
  const res = await unlessMissing(
    () => o.request('GET /repos/{owner}/{repo}/commits/{ref}', { ...at(repo), ref }),
    [404, 422],
  );
  return res && GhCommit.parse(res.data).sha;
}

/** LD02: the commit a branch is at now (its ref, a small answer GitHub serves conditionally), or null. */
/**
 * LD03: `POST /repos/{owner}/{repo}/merges`: GitHub merges `head` into `branch` and answers with the merge commit
 * (201), or nothing when the branch already holds it (204: the branch as it is), or 409 on a conflict (data).
 */
export async function mergeIntoBranch(
  o: Octokit,
  repo: RepoRef,
  branch: string,
  head: string,
  message: string,
): Promise<MergeResult> {
  try {
    const res = await o.request('POST /repos/{owner}/{repo}/merges', {
      ...at(repo),
      base: branch,
      head,
      commit_message: message,
    });
    if (Number(res.status) === 204) {
      const tip = await readBranchTip(o, repo, branch);
      if (!tip) return { ok: false, status: 404, message: `Branch ${branch} is gone` };
      return { ok: true, sha: tip };
    }
    return { ok: true, sha: z.object({ sha: z.string() }).parse(res.data).sha };
  } catch (err) {
    const e = classifyGitHubError(err);
    if (e.kind === 'refused') return { ok: false, status: e.status!, message: e.message };
    throw err;
  }
}

/** LD03: a commit's parents, in order, as the git database has them; null for a commit GitHub does not have. */
export async function commitParents(o: Octokit, repo: RepoRef, sha: string): Promise<string[] | null> {
  const res = await unlessMissing(
    () => o.request('GET /repos/{owner}/{repo}/git/commits/{commit_sha}', { ...at(repo), commit_sha: sha }),
    [404, 422],
  );
  return res && GhGitCommit.parse(res.data).parents.map((p) => p.sha);
}

/** The rules in force on a branch, from its rulesets (`GET /repos/{owner}/{repo}/rules/branches/{branch}`); null: not there. */
async function rulesOf(o: Octokit, repo: RepoRef, branch: string): Promise<BranchRules | null> {
  const res = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/rules/branches/{branch}', { ...at(repo), branch, per_page: 100 }),
  );
  if (!res) return null;
  const rules = GhBranchRules.parse(res.data);
  const queue = rules.find((r) => r.type === 'merge_queue');
  return {
    requiredChecks: rules.flatMap((r) =>
      r.type === 'required_status_checks'
        ? (r.parameters?.required_status_checks ?? []).map((c) => ({
            context: c.context,
            appId: c.integration_id ?? null,
          }))
        : [],
    ),
    mergeQueue: queue ? { mergeMethod: queue.parameters?.merge_method ?? 'MERGE' } : null,
  };
}

/** LD04: the rules in force on a branch hold a merge queue. */
export async function requiresMergeQueue(o: Octokit, repo: RepoRef, branch: string): Promise<boolean | null> {
  const rules = await rulesOf(o, repo, branch);
  return rules && rules.mergeQueue !== null;
}

/** What a merge onto a branch must meet: its rulesets' rules, and the status checks its branch protection requires. */
export async function readBranchRules(o: Octokit, repo: RepoRef, branch: string): Promise<BranchRules | null> {
  const rules = await rulesOf(o, repo, branch);
  if (!rules) return null;
  const res = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/branches/{branch}', { ...at(repo), branch }),
  );
  const classic = res ? (GhBranch.parse(res.data).protection?.required_status_checks?.checks ?? []) : [];
  return {
    ...rules,
    requiredChecks: [...rules.requiredChecks, ...classic.map((c) => ({ context: c.context, appId: c.app_id ?? null }))],
  };
}

export async function readBranchTip(o: Octokit, repo: RepoRef, branch: string): Promise<string | null> {
  const res = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/git/ref/{ref}', { ...at(repo), ref: `heads/${branch}` }),
  );
  return res && GhRef.parse(res.data).object.sha;
}

export async function isBranchProtected(o: Octokit, repo: RepoRef, branch: string): Promise<boolean | null> {
  const res = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/branches/{branch}', { ...at(repo), branch }),
  );
  return res && GhBranch.parse(res.data).protected;
}

export async function isAncestor(o: Octokit, repo: RepoRef, ancestor: string, commit: string): Promise<boolean | null> {
  const res = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/compare/{basehead}', {
      ...at(repo),
      basehead: `${ancestor}...${commit}`,
      per_page: 1,
    }),
  );
  if (!res) return null;
  const { status } = GhCompare.parse(res.data);
  return status === 'ahead' || status === 'identical';
}

export async function listFiles(o: Octokit, repo: RepoRef, commit: string, dir: string): Promise<string[]> {
  const res = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/git/trees/{tree_sha}', { ...at(repo), tree_sha: commit, recursive: '1' }),
  );
  if (!res) return [];
  return GhTree.parse(res.data)
    .tree.filter((e) => e.type === 'blob' && e.path.startsWith(dir))
    .map((e) => e.path)
    .sort();
}

export async function readFileAt(o: Octokit, repo: RepoRef, path: string, commit: string): Promise<string | null> {
  const res = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/contents/{path}', {
      ...at(repo),
      path,
      ref: commit,
      headers: { accept: 'application/vnd.github.raw+json' },
    }),
  );
  return res ? String(res.data) : null;
}

/** TR17: a token, minted with the app's JWT, that may push to this one repository and do nothing else. */
export async function mintPushToken(app: Octokit, repo: RepoRef): Promise<PushToken> {
  const { data } = await app.request('POST /app/installations/{installation_id}/access_tokens', {
    installation_id: repo.installationId,
    repositories: [repo.name],
    permissions: { contents: 'write' },
  });
  const t = z.object({ token: z.string(), expires_at: z.string() }).parse(data);
  return { token: t.token, expiresAt: t.expires_at };
}
