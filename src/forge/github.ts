import { z } from 'zod';
import type { RepoConfigResult } from '../config/repo-config.js';
import type { BudgetBook } from './budget.js';
import { classifyGitHubError, unlessMissing } from './errors.js';
import type { Octokit } from './octokit.js';
import { RepoReader } from './repo-reader.js';
import { GhBotApp, GhBranch, GhCommit, GhCompare, GhIssue, GhIssueState, GhPermission, GhPullDetail, GhRepository, GhReview, GhTree, GhWorkflowRun, GhIssueEvent, GhIssueUpdate } from './schemas.js';
import * as deployments from './github-deployments.js';
import type { CheckRunWrite, DeploymentCreated, DeploymentStatusView, DeploymentStatusWrite, DeploymentWrite, EnvironmentRules, ProtectionAnswer, FoundWorkflowRun, Forge, IssueDetail, MergeResult, Permission, PullDetail, PushToken, RepoName, RepoRef, RepoView, ReviewView, WorkflowRunView } from './types.js';

// The one module that talks to GitHub: installations, the repository read
// (RepoReader), and every write yoke makes.

export interface GitHubForgeOptions {
  appOctokit: () => Promise<Octokit>;
  installationOctokit: (installationId: number) => Promise<Octokit>;
  now: () => number;
  botLogin?: string;
  /** The request budgets the GitHub client spends from (SC03); none: unlimited. */
  budget?: BudgetBook;
}

const viewOf = ({ id, status, conclusion, repositoryId, event, actor, triggeringActor, htmlUrl, headSha }: z.output<typeof GhWorkflowRun>): WorkflowRunView => ({ id, status, conclusion, repositoryId, event, actor, triggeringActor, htmlUrl, headSha });

/** The owner/repo path parameters of a repository. */
const at = (repo: RepoRef) => ({ owner: repo.owner, repo: repo.name });

export class GitHubForge implements Forge {
  private octokits = new Map<number, Octokit>();
  private reader: RepoReader;
  private login: string | undefined;

  constructor(private readonly opts: GitHubForgeOptions) {
    this.login = opts.botLogin;
    this.reader = new RepoReader(opts.now);
  }

  private async gh(installationId: number): Promise<Octokit> {
    let o = this.octokits.get(installationId);
    if (!o) {
      o = await this.opts.installationOctokit(installationId);
      this.octokits.set(installationId, o);
    }
    return o;
  }

  async botLogin(): Promise<string> {
    if (!this.login) {
      const app = await this.opts.appOctokit();
      const { data } = await app.request('GET /app');
      this.login = `${GhBotApp.parse(data)?.slug ?? 'yoke'}[bot]`;
    }
    return this.login;
  }

  async listInstallations(): Promise<number[]> {
    const app = await this.opts.appOctokit();
    const installs = await app.paginate('GET /app/installations', { per_page: 100 });
    return z.array(z.object({ id: z.number() })).parse(installs).map((i) => i.id);
  }

  async authenticate(installationId: number): Promise<void> {
    const o = await this.gh(installationId);
    await o.auth({ type: 'installation' });
  }

  async listRepos(installationId: number): Promise<RepoRef[]> {
    const o = await this.gh(installationId);
    const repos = z.array(GhRepository).parse(await o.paginate('GET /installation/repositories', { per_page: 100 }));
    return repos
      .filter((r) => !r.archived)
      .map((r) => ({ owner: r.owner.login, name: r.name, fullName: r.full_name, installationId, ...(r.default_branch ? { defaultBranch: r.default_branch } : {}) }));
  }

  remainingContentWrites(installationId: number): number {
    return this.opts.budget ? this.opts.budget.for(`i${installationId}`).remaining().contentWrites : Number.POSITIVE_INFINITY;
  }

  remainingPoints(installationId: number): number {
    return this.opts.budget ? this.opts.budget.for(`i${installationId}`).remaining().points : Number.POSITIVE_INFINITY;
  }

  invalidate(name: RepoName): void {
    this.reader.invalidate(name);
  }

  async readConfig(repo: RepoRef, opts: { maxAgeMs: number }): Promise<RepoConfigResult> {
    return this.reader.readConfig(await this.gh(repo.installationId), repo, opts.maxAgeMs);
  }

  async readRepo(repo: RepoRef, opts: { claimLabel: string; configMaxAgeMs: number; maxViewAgeMs?: number }): Promise<RepoView> {
    return this.reader.readRepo(await this.gh(repo.installationId), repo, opts);
  }

  async getIssue(repo: RepoRef, number: number): Promise<IssueDetail | null> {
    const o = await this.gh(repo.installationId);
    const res = await unlessMissing(() => o.request('GET /repos/{owner}/{repo}/issues/{issue_number}', { ...at(repo), issue_number: number }));
    return res && GhIssueState.parse(res.data);
  }

  async findOpenIssue(repo: RepoRef, label: string): Promise<number | null> {
    const o = await this.gh(repo.installationId);
    const { data } = await o.request('GET /repos/{owner}/{repo}/issues', { ...at(repo), state: 'open', labels: label, sort: 'created', direction: 'asc', per_page: 100 });
    return z.array(GhIssue).parse(data).find((i) => !i.isPull)?.number ?? null;
  }

  async getPull(repo: RepoRef, number: number): Promise<PullDetail | null> {
    const o = await this.gh(repo.installationId);
    const res = await unlessMissing(() => o.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', { ...at(repo), pull_number: number }));
    return res && GhPullDetail.parse(res.data);
  }

  async listReviews(repo: RepoRef, pr: number): Promise<ReviewView[]> {
    const o = await this.gh(repo.installationId);
    return z.array(GhReview).parse(await o.paginate('GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews', { ...at(repo), pull_number: pr, per_page: 100 }));
  }

  async resolveCommit(repo: RepoRef, ref: string): Promise<string | null> {
    const o = await this.gh(repo.installationId);
    const res = await unlessMissing(() => o.request('GET /repos/{owner}/{repo}/commits/{ref}', { ...at(repo), ref }), [404, 422]);
    return res && GhCommit.parse(res.data).sha;
  }

  async isBranchProtected(repo: RepoRef, branch: string): Promise<boolean | null> {
    const o = await this.gh(repo.installationId);
    const res = await unlessMissing(() => o.request('GET /repos/{owner}/{repo}/branches/{branch}', { ...at(repo), branch }));
    return res && GhBranch.parse(res.data).protected;
  }

  async isAncestor(repo: RepoRef, ancestor: string, commit: string): Promise<boolean | null> {
    const o = await this.gh(repo.installationId);
    const res = await unlessMissing(() => o.request('GET /repos/{owner}/{repo}/compare/{basehead}', { ...at(repo), basehead: `${ancestor}...${commit}`, per_page: 1 }));
    if (!res) return null;
    const { status } = GhCompare.parse(res.data);
    return status === 'ahead' || status === 'identical';
  }

  async listFiles(repo: RepoRef, commit: string, dir: string): Promise<string[]> {
    const o = await this.gh(repo.installationId);
    const res = await unlessMissing(() => o.request('GET /repos/{owner}/{repo}/git/trees/{tree_sha}', { ...at(repo), tree_sha: commit, recursive: '1' }));
    if (!res) return [];
    return GhTree.parse(res.data).tree.filter((e) => e.type === 'blob' && e.path.startsWith(dir)).map((e) => e.path).sort();
  }

  async readFileAt(repo: RepoRef, path: string, commit: string): Promise<string | null> {
    const o = await this.gh(repo.installationId);
    const res = await unlessMissing(() => o.request('GET /repos/{owner}/{repo}/contents/{path}', { ...at(repo), path, ref: commit, headers: { accept: 'application/vnd.github.raw+json' } }));
    return res ? String(res.data) : null;
  }

  async createIssue(repo: RepoRef, issue: { title: string; body: string; labels: string[] }): Promise<number> {
    const o = await this.gh(repo.installationId);
    const { data } = await o.request('POST /repos/{owner}/{repo}/issues', { ...at(repo), ...issue });
    return z.object({ number: z.number() }).parse(data).number;
  }

  async updateIssue(repo: RepoRef, number: number, change: { body?: string; state?: 'open' | 'closed'; stateReason?: 'completed' | 'not_planned' }): Promise<void> {
    const o = await this.gh(repo.installationId);
    await o.request('PATCH /repos/{owner}/{repo}/issues/{issue_number}', {
      ...at(repo),
      issue_number: number,
      ...(change.body !== undefined ? { body: change.body } : {}),
      ...(change.state ? { state: change.state } : {}),
      ...(change.stateReason ? { state_reason: change.stateReason } : {}),
    });
  }

  async removeLabel(repo: RepoRef, number: number, label: string): Promise<void> {
    const o = await this.gh(repo.installationId);
    await unlessMissing(() => o.request('DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}', { ...at(repo), issue_number: number, name: label }));
  }

  async editComment(repo: RepoRef, commentId: number, body: string): Promise<boolean> {
    const o = await this.gh(repo.installationId);
    return (await unlessMissing(() => o.request('PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}', { ...at(repo), comment_id: commentId, body }))) !== null;
  }

  async readComment(repo: RepoRef, commentId: number): Promise<{ reactors: string[] } | null> {
    const o = await this.gh(repo.installationId);
    const res = await unlessMissing(() => o.request('GET /repos/{owner}/{repo}/issues/comments/{comment_id}', { ...at(repo), comment_id: commentId }));
    if (!res) return null;
    const total = z.object({ reactions: z.object({ total_count: z.number() }).optional() }).parse(res.data).reactions?.total_count ?? 0;
    // Who reacted is asked only when someone did (an idle notice costs one conditional read).
    if (total === 0) return { reactors: [] };
    const list = await o.paginate('GET /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions', { ...at(repo), comment_id: commentId, per_page: 100 });
    return { reactors: [...new Set(z.array(z.object({ user: z.object({ login: z.string() }).nullable() })).parse(list).flatMap((r) => (r.user ? [r.user.login] : [])))] };
  }

  async getPermission(repo: RepoRef, user: string): Promise<Permission> {
    const o = await this.gh(repo.installationId);
    const res = await unlessMissing(() => o.request('GET /repos/{owner}/{repo}/collaborators/{username}/permission', { ...at(repo), username: user }));
    return res ? GhPermission.parse(res.data) : 'none';
  }

  async labelledBy(repo: RepoRef, number: number, label: string): Promise<{ login: string; isBot: boolean } | null> {
    const o = await this.gh(repo.installationId);
    const events = z.array(GhIssueEvent).parse(await o.paginate('GET /repos/{owner}/{repo}/issues/{issue_number}/events', { ...at(repo), issue_number: number, per_page: 100 }));
    const last = events.filter((e) => e.event === 'labeled' && e.label?.name === label && e.actor).at(-1);
    return last?.actor ? { login: last.actor.login, isBot: last.actor.type === 'Bot' || last.actor.login.endsWith('[bot]') } : null;
  }

  async listIssuesUpdatedSince(repo: RepoRef, since: number): Promise<{ number: number; labels: string[]; updatedAt: number }[]> {
    const o = await this.gh(repo.installationId);
    const data = await o.paginate('GET /repos/{owner}/{repo}/issues', { ...at(repo), state: 'all', since: new Date(since).toISOString(), sort: 'updated', direction: 'asc', per_page: 100 });
    return z
      .array(GhIssueUpdate)
      .parse(data)
      .filter((i) => !i.isPull)
      .map(({ number, labels, updatedAt }) => ({ number, labels, updatedAt }));
  }

  async createComment(repo: RepoRef, number: number, body: string): Promise<number> {
    const o = await this.gh(repo.installationId);
    const { data } = await o.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', { ...at(repo), issue_number: number, body });
    return z.object({ id: z.number() }).parse(data).id;
  }

  async addReaction(repo: RepoRef, commentId: number, content: '+1' | '-1' | 'eyes' | 'confused' | 'rocket'): Promise<void> {
    const o = await this.gh(repo.installationId);
    await o.request('POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions', { ...at(repo), comment_id: commentId, content });
  }

  async addLabels(repo: RepoRef, number: number, labels: string[]): Promise<void> {
    const o = await this.gh(repo.installationId);
    await o.request('POST /repos/{owner}/{repo}/issues/{issue_number}/labels', { ...at(repo), issue_number: number, labels });
  }

  async merge(repo: RepoRef, number: number, sha: string, method: 'merge' | 'squash' | 'rebase'): Promise<MergeResult> {
    const o = await this.gh(repo.installationId);
    try {
      const { data } = await o.request('PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge', { ...at(repo), pull_number: number, sha, merge_method: method });
      return { ok: true, sha: z.object({ sha: z.string() }).parse(data).sha };
    } catch (err) {
      const e = classifyGitHubError(err);
      if (e.kind === 'refused') return { ok: false, status: e.status!, message: e.message };
      throw err;
    }
  }

  async mintPushToken(repo: RepoRef): Promise<PushToken> {
    const app = await this.opts.appOctokit();
    const { data } = await app.request('POST /app/installations/{installation_id}/access_tokens', {
      installation_id: repo.installationId,
      repositories: [repo.name],
      permissions: { contents: 'write' },
    });
    const t = z.object({ token: z.string(), expires_at: z.string() }).parse(data);
    return { token: t.token, expiresAt: t.expires_at };
  }

  async openPull(repo: RepoRef, pull: { head: string; base: string; title: string; body: string }): Promise<number> {
    const o = await this.gh(repo.installationId);
    const { data } = await o.request('POST /repos/{owner}/{repo}/pulls', { ...at(repo), ...pull });
    return z.object({ number: z.number() }).parse(data).number;
  }

  async dispatchWorkflow(repo: RepoRef, workflow: string, ref: string, inputs: Record<string, string>): Promise<void> {
    const o = await this.gh(repo.installationId);
    await o.request('POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches', { ...at(repo), workflow_id: workflow, ref, inputs });
  }

  async findWorkflowRun(repo: RepoRef, workflow: string, runId: string, since: number): Promise<FoundWorkflowRun> {
    const o = await this.gh(repo.installationId);
    const bot = await this.botLogin();
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
      for (const r of z.array(GhWorkflowRun).parse(page.data)) if (named(r.title) && r.actor === bot) mine.push(viewOf(r));
    }
    if (mine.length === 0) return { kind: 'none' };
    return mine.length === 1 ? { kind: 'one', run: mine[0]! } : { kind: 'many', ids: mine.map((r) => r.id) };
  }

  async getWorkflowRun(repo: RepoRef, id: number): Promise<WorkflowRunView | null> {
    const o = await this.gh(repo.installationId);
    const res = await unlessMissing(() => o.request('GET /repos/{owner}/{repo}/actions/runs/{run_id}', { ...at(repo), run_id: id }));
    return res && viewOf(GhWorkflowRun.parse(res.data));
  }

  async cancelWorkflowRun(repo: RepoRef, id: number): Promise<void> {
    const o = await this.gh(repo.installationId);
    try {
      await o.request('POST /repos/{owner}/{repo}/actions/runs/{run_id}/cancel', { ...at(repo), run_id: id });
    } catch (err) {
      // 409: the run already completed, which is what cancel wanted.
      if (classifyGitHubError(err).status !== 409) throw err;
    }
  }

  async createCheckRun(repo: RepoRef, headSha: string, check: CheckRunWrite): Promise<number> {
    const o = await this.gh(repo.installationId);
    const { data } = await o.request('POST /repos/{owner}/{repo}/check-runs', { ...at(repo), head_sha: headSha, ...checkRunBody(check, this.opts.now()) });
    return z.object({ id: z.number() }).parse(data).id;
  }

  async updateCheckRun(repo: RepoRef, id: number, check: CheckRunWrite): Promise<void> {
    const o = await this.gh(repo.installationId);
    await o.request('PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}', { ...at(repo), check_run_id: id, ...checkRunBody(check, this.opts.now()) });
  }

  async createDeployment(repo: RepoRef, d: DeploymentWrite): Promise<DeploymentCreated> {
    return deployments.createDeployment(await this.gh(repo.installationId), repo, d);
  }

  async createDeploymentStatus(repo: RepoRef, id: number, s: DeploymentStatusWrite): Promise<void> {
    await deployments.createDeploymentStatus(await this.gh(repo.installationId), repo, id, s);
  }

  async listDeploymentStatuses(repo: RepoRef, id: number): Promise<DeploymentStatusView[]> {
    return deployments.listDeploymentStatuses(await this.gh(repo.installationId), repo, id);
  }

  async pinBranch(repo: RepoRef, branch: string, sha: string): Promise<void> {
    await deployments.pinBranch(await this.gh(repo.installationId), repo, branch, sha);
  }

  async readEnvironmentRules(repo: RepoRef, environment: string): Promise<EnvironmentRules> {
    return deployments.readEnvironmentRules(await this.gh(repo.installationId), repo, environment);
  }

  async reviewProtectionRule(repo: RepoRef, workflowRunId: number, answer: ProtectionAnswer): Promise<{ ok: true } | { ok: false; status: number | null; message: string }> {
    return deployments.reviewProtectionRule(await this.gh(repo.installationId), repo, workflowRunId, answer);
  }
}

/** GitHub caps a check run's summary at 65,535 characters. */
const CHECK_SUMMARY_LIMIT = 65_535;

function checkRunBody(c: CheckRunWrite, now: number) {
  const summary = c.summary.length > CHECK_SUMMARY_LIMIT ? `${c.summary.slice(0, CHECK_SUMMARY_LIMIT - 40)}\n\n(cut at GitHub's limit)` : c.summary;
  return {
    name: c.name,
    status: c.status,
    external_id: c.externalId,
    output: { title: c.title, summary },
    ...(c.detailsUrl ? { details_url: c.detailsUrl } : {}),
    ...(c.status === 'completed' ? { conclusion: c.conclusion ?? 'neutral', completed_at: new Date(now).toISOString() } : {}),
  };
}
