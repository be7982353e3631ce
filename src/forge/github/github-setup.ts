import { z } from 'zod';
import { unlessMissing } from '../errors.js';
import type { Octokit } from './octokit.js';
import { GhRepository } from './schemas.js';
import type { BranchPolicy, InstallationGrants, RepoRef } from '../types.js';

// What `yoke doctor` reads of a repository's set-up: what the app's
// installation grants, the Actions secrets' names (GitHub never shows a
// value), and which branches may deploy to an environment.

const at = (repo: RepoRef) => ({ owner: repo.owner, repo: repo.name });

const GhInstallation = z.object({
  id: z.number(),
  permissions: z.record(z.string(), z.string()).default({}),
  events: z.array(z.string()).default([]),
});
const GhSecrets = z.object({ secrets: z.array(z.object({ name: z.string() })) });
const GhEnvironment = z.object({
  deployment_branch_policy: z
    .object({ protected_branches: z.boolean(), custom_branch_policies: z.boolean() })
    .nullable()
    .default(null),
});
const GhBranchPolicies = z.object({
  branch_policies: z.array(z.object({ name: z.string(), type: z.string().default('branch') })),
});

/** With the app's own credential (a JWT): the installation on this repository, or null when there is none. */
export async function readInstallation(app: Octokit, repo: RepoRef): Promise<InstallationGrants | null> {
  const res = await unlessMissing(() => app.request('GET /repos/{owner}/{repo}/installation', at(repo)));
  if (!res) return null;
  const i = GhInstallation.parse(res.data);
  return { id: i.id, permissions: i.permissions, events: i.events };
}

/** The names of the repository's Actions secrets, and of its organisation's that it may read. */
export async function listSecretNames(o: Octokit, repo: RepoRef): Promise<string[]> {
  const own = GhSecrets.parse(
    (await o.request('GET /repos/{owner}/{repo}/actions/secrets', { ...at(repo), per_page: 100 })).data,
  );
  // A repository of a user has no organisation secrets: GitHub answers 404 there.
  const org = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/actions/organization-secrets', { ...at(repo), per_page: 100 }),
  );
  return [...own.secrets, ...(org ? GhSecrets.parse(org.data).secrets : [])].map((s) => s.name);
}

/** Which branches may deploy to an environment; null when there is no such environment. */
export async function readBranchPolicy(o: Octokit, repo: RepoRef, environment: string): Promise<BranchPolicy | null> {
  const res = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/environments/{environment_name}', {
      ...at(repo),
      environment_name: environment,
    }),
  );
  if (!res) return null;
  const policy = GhEnvironment.parse(res.data).deployment_branch_policy;
  if (!policy) return { kind: 'all' };
  if (policy.protected_branches) return { kind: 'protected' };
  const { data } = await o.request(
    'GET /repos/{owner}/{repo}/environments/{environment_name}/deployment-branch-policies',
    {
      ...at(repo),
      environment_name: environment,
      per_page: 100,
    },
  );
  return {
    kind: 'custom',
    branches: GhBranchPolicies.parse(data)
      .branch_policies.filter((p) => p.type === 'branch')
      .map((p) => p.name),
  };
}

/** The installation's repositories yoke may work on: archived ones are left out. */
/** The app's installations, by id. */
export async function listInstallations(app: Octokit): Promise<number[]> {
  const installs = await app.paginate('GET /app/installations', { per_page: 100 });
  return z
    .array(z.object({ id: z.number() }))
    .parse(installs)
    .map((i) => i.id);
}

export async function listRepos(o: Octokit, installationId: number): Promise<RepoRef[]> {
  const repos = z.array(GhRepository).parse(await o.paginate('GET /installation/repositories', { per_page: 100 }));
  return repos
    .filter((r) => !r.archived)
    .map((r) => ({
      owner: r.owner.login,
      name: r.name,
      fullName: r.full_name,
      installationId,
      ...(r.default_branch ? { defaultBranch: r.default_branch } : {}),
      ...(r.pushed_at ? { pushedAt: r.pushed_at } : {}),
    }));
}
