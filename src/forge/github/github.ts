import { z } from 'zod';
import type { RepoConfigResult } from '../../config/repo-config.js';
import { NO_BUDGET, type BudgetBook, type BudgetLeft } from './budget.js';
import { unlessMissing } from '../errors.js';
import type { Octokit } from './octokit.js';
import { RepoReader } from './repo-reader.js';
import { GhBotApp, GhPermission } from './schemas.js';
import * as actions from './github-actions.js';
import * as git from './github-git.js';
import * as queue from './github-queue.js';
import * as issues from './github-issues.js';
import * as deployments from './github-deployments.js';
import * as setup from './github-setup.js';
import * as results from './github-results.js';
import type {
  ArtifactView,
  RefMove,
  BranchPolicy,
  BranchRules,
  InstallationGrants,
  CheckRunWrite,
  DeploymentCreated,
  DeploymentStatusView,
  DeploymentStatusWrite,
  DeploymentWrite,
  EnvironmentRules,
  ProtectionAnswer,
  FoundWorkflowRun,
  Forge,
  IssueDetail,
  EnqueueResult,
  MergeQueueRead,
  MergeResult,
  Permission,
  PullDetail,
  PushToken,
  RepoName,
  RepoRef,
  RepoView,
  ReviewView,
  ReviewCommentView,
  WorkflowRunView,
} from '../types.js';

// The one module that talks to GitHub: installations, the repository read (RepoReader), and every write yoke makes.

export interface GitHubForgeOptions {
  appOctokit: () => Promise<Octokit>;
  installationOctokit: (installationId: number) => Promise<Octokit>;
  now: () => number;
  botLogin?: string;
  /** The request budgets the GitHub client spends from (SC03); none: unlimited. */
  budget?: BudgetBook;
}

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
    if (!o) this.octokits.set(installationId, (o = await this.opts.installationOctokit(installationId)));
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

  listInstallations(opts?: { maxAgeMs: number }): Promise<number[]> {
    return this.reader.listings.installations(opts, async () => setup.listInstallations(await this.opts.appOctokit()));
  }

  async authenticate(installationId: number): Promise<void> {
    const o = await this.gh(installationId);
    await o.auth({ type: 'installation' });
  }

  async listRepos(installationId: number, opts?: { maxAgeMs: number }): Promise<RepoRef[]> {
    const held = opts && this.reader.listings.standing(installationId, opts.maxAgeMs);
    if (held) return held;
    const repos = await setup.listRepos(await this.gh(installationId), installationId);
    this.reader.listed(repos, installationId);
    return repos;
  }

  relist(installationId: number): void {
    this.reader.listings.relist(installationId);
  }

  standsIn(repo: RepoRef, opts: { maxViewAgeMs: number; configMaxAgeMs: number }): boolean {
    return this.reader.standsIn(repo, opts);
  }

  everRead(repo: RepoRef): boolean {
    return this.reader.everRead(repo);
  }

  budgetLeft(installationId: number): BudgetLeft {
    return this.opts.budget?.for(`i${installationId}`).remaining() ?? NO_BUDGET;
  }

  invalidate(name: RepoName): void {
    this.reader.invalidate(name);
  }

  async readConfig(repo: RepoRef, opts: { maxAgeMs: number }): Promise<RepoConfigResult> {
    return this.reader.readConfig(await this.gh(repo.installationId), repo, opts.maxAgeMs);
  }

  async readRepo(
    repo: RepoRef,
    opts: { claimLabel: string; configMaxAgeMs: number; maxViewAgeMs?: number },
  ): Promise<RepoView> {
    return this.reader.readRepo(await this.gh(repo.installationId), repo, opts);
  }

  async getIssue(repo: RepoRef, number: number): Promise<IssueDetail | null> {
    return issues.getIssue(await this.gh(repo.installationId), repo, number);
  }

  async findOpenIssue(repo: RepoRef, label: string): Promise<number | null> {
    return issues.findOpenIssue(await this.gh(repo.installationId), repo, label);
  }

  async getPull(repo: RepoRef, number: number): Promise<PullDetail | null> {
    return issues.getPull(await this.gh(repo.installationId), repo, number);
  }

  async listReviews(repo: RepoRef, pr: number): Promise<ReviewView[]> {
    return issues.listReviews(await this.gh(repo.installationId), repo, pr);
  }
  async listReviewComments(repo: RepoRef, pr: number): Promise<ReviewCommentView[]> {
    return issues.listReviewComments(await this.gh(repo.installationId), repo, pr);
  }

  async resolveCommit(repo: RepoRef, ref: string): Promise<string | null> {
    return git.resolveCommit(await this.gh(repo.installationId), repo, ref);
  }

  async readBranchTip(repo: RepoRef, branch: string): Promise<string | null> {
    return git.readBranchTip(await this.gh(repo.installationId), repo, branch);
  }

  async isBranchProtected(repo: RepoRef, branch: string): Promise<boolean | null> {
    return git.isBranchProtected(await this.gh(repo.installationId), repo, branch);
  }

  async isAncestor(repo: RepoRef, ancestor: string, commit: string): Promise<boolean | null> {
    return git.isAncestor(await this.gh(repo.installationId), repo, ancestor, commit);
  }

  async listFiles(repo: RepoRef, commit: string, dir: string): Promise<string[]> {
    return git.listFiles(await this.gh(repo.installationId), repo, commit, dir);
  }

  async readFileAt(repo: RepoRef, path: string, commit: string): Promise<string | null> {
    return git.readFileAt(await this.gh(repo.installationId), repo, path, commit);
  }

  async createIssue(repo: RepoRef, issue: { title: string; body: string; labels: string[] }): Promise<number> {
    const o = await this.gh(repo.installationId);
    const { data } = await o.request('POST /repos/{owner}/{repo}/issues', { ...at(repo), ...issue });
    return z.object({ number: z.number() }).parse(data).number;
  }

  async updateIssue(
    repo: RepoRef,
    number: number,
    change: { body?: string; state?: 'open' | 'closed'; stateReason?: 'completed' | 'not_planned' },
  ): Promise<void> {
    await issues.updateIssue(await this.gh(repo.installationId), repo, number, change);
  }

  async removeLabel(repo: RepoRef, number: number, label: string): Promise<void> {
    const o = await this.gh(repo.installationId);
    await unlessMissing(() =>
      o.request('DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}', {
        ...at(repo),
        issue_number: number,
        name: label,
      }),
    );
  }

  async editComment(repo: RepoRef, commentId: number, body: string): Promise<boolean> {
    const o = await this.gh(repo.installationId);
    return (
      (await unlessMissing(() =>
        o.request('PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}', {
          ...at(repo),
          comment_id: commentId,
          body,
        }),
      )) !== null
    );
  }

  async readComment(repo: RepoRef, commentId: number): Promise<{ reactors: string[] } | null> {
    return issues.readComment(await this.gh(repo.installationId), repo, commentId);
  }

  async getPermission(repo: RepoRef, user: string): Promise<Permission> {
    const o = await this.gh(repo.installationId);
    const res = await unlessMissing(() =>
      o.request('GET /repos/{owner}/{repo}/collaborators/{username}/permission', { ...at(repo), username: user }),
    );
    return res ? GhPermission.parse(res.data) : 'none';
  }

  async labelledBy(repo: RepoRef, number: number, label: string): Promise<{ login: string; isBot: boolean } | null> {
    return issues.labelledBy(await this.gh(repo.installationId), repo, number, label);
  }

  async listIssuesUpdatedSince(
    repo: RepoRef,
    since: number,
  ): Promise<{ number: number; labels: string[]; updatedAt: number }[]> {
    return issues.listIssuesUpdatedSince(await this.gh(repo.installationId), repo, since);
  }

  async createComment(repo: RepoRef, number: number, body: string): Promise<number> {
    const o = await this.gh(repo.installationId);
    const { data } = await o.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
      ...at(repo),
      issue_number: number,
      body,
    });
    return z.object({ id: z.number() }).parse(data).id;
  }

  async addReaction(
    repo: RepoRef,
    commentId: number,
    content: '+1' | '-1' | 'eyes' | 'confused' | 'rocket',
  ): Promise<void> {
    const o = await this.gh(repo.installationId);
    await o.request('POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions', {
      ...at(repo),
      comment_id: commentId,
      content,
    });
  }

  async addLabels(repo: RepoRef, number: number, labels: string[]): Promise<void> {
    await issues.addLabels(await this.gh(repo.installationId), repo, number, labels);
  }

  async merge(repo: RepoRef, number: number, sha: string, method: 'merge' | 'squash' | 'rebase'): Promise<MergeResult> {
    return issues.merge(await this.gh(repo.installationId), repo, number, sha, method);
  }

  async listBlockers(repo: RepoRef, number: number): Promise<string[] | null> {
    return issues.listBlockers(await this.gh(repo.installationId), repo, number);
  }

  async requiresMergeQueue(repo: RepoRef, branch: string): Promise<boolean | null> {
    return git.requiresMergeQueue(await this.gh(repo.installationId), repo, branch);
  }

  async readBranchRules(repo: RepoRef, branch: string): Promise<BranchRules | null> {
    return git.readBranchRules(await this.gh(repo.installationId), repo, branch);
  }

  /** LD04: merge group commits never change: their first parents are read once. */
  private groupParents = new Map<string, string>();

  async readMergeQueue(repo: RepoRef, branch: string): Promise<MergeQueueRead | null> {
    return queue.readMergeQueue(await this.gh(repo.installationId), repo, branch, this.groupParents);
  }

  async enqueuePullRequest(repo: RepoRef, number: number, headSha: string): Promise<EnqueueResult> {
    return queue.enqueuePullRequest(await this.gh(repo.installationId), repo, number, headSha);
  }

  async mergeIntoBranch(repo: RepoRef, branch: string, head: string, message: string): Promise<MergeResult> {
    return git.mergeIntoBranch(await this.gh(repo.installationId), repo, branch, head, message);
  }

  async commitParents(repo: RepoRef, sha: string): Promise<string[] | null> {
    return git.commitParents(await this.gh(repo.installationId), repo, sha);
  }

  async mintPushToken(repo: RepoRef): Promise<PushToken> {
    return git.mintPushToken(await this.opts.appOctokit(), repo);
  }

  async openPull(repo: RepoRef, pull: { head: string; base: string; title: string; body: string }): Promise<number> {
    return issues.openPull(await this.gh(repo.installationId), repo, pull);
  }

  async dispatchWorkflow(repo: RepoRef, workflow: string, ref: string, inputs: Record<string, string>): Promise<void> {
    await actions.dispatchWorkflow(await this.gh(repo.installationId), repo, workflow, ref, inputs);
  }

  async findWorkflowRun(repo: RepoRef, workflow: string, runId: string, since: number): Promise<FoundWorkflowRun> {
    return actions.findWorkflowRun(
      await this.gh(repo.installationId),
      repo,
      await this.botLogin(),
      workflow,
      runId,
      since,
    );
  }

  async getWorkflowRun(repo: RepoRef, id: number): Promise<WorkflowRunView | null> {
    return actions.getWorkflowRun(await this.gh(repo.installationId), repo, id);
  }

  async cancelWorkflowRun(repo: RepoRef, id: number): Promise<void> {
    await actions.cancelWorkflowRun(await this.gh(repo.installationId), repo, id);
  }

  async createCheckRun(repo: RepoRef, headSha: string, check: CheckRunWrite): Promise<number> {
    return actions.createCheckRun(await this.gh(repo.installationId), repo, headSha, check, this.opts.now());
  }

  async updateCheckRun(repo: RepoRef, id: number, check: CheckRunWrite): Promise<void> {
    await actions.updateCheckRun(await this.gh(repo.installationId), repo, id, check, this.opts.now());
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

  async readInstallation(repo: RepoRef): Promise<InstallationGrants | null> {
    return setup.readInstallation(await this.opts.appOctokit(), repo);
  }

  async listSecretNames(repo: RepoRef): Promise<string[]> {
    return setup.listSecretNames(await this.gh(repo.installationId), repo);
  }

  async readBranchPolicy(repo: RepoRef, environment: string): Promise<BranchPolicy | null> {
    return setup.readBranchPolicy(await this.gh(repo.installationId), repo, environment);
  }

  // Runs that reach yoke through GitHub (github-results.ts).
  async publishRunner(repo: RepoRef, sha256: string, content: string): Promise<'published' | 'present'> {
    return results.publishRunner(await this.gh(repo.installationId), repo, sha256, content);
  }
  async listRunArtifacts(repo: RepoRef, workflowRunId: number): Promise<ArtifactView[]> {
    return results.listRunArtifacts(await this.gh(repo.installationId), repo, workflowRunId);
  }
  async downloadArtifact(repo: RepoRef, artifactId: number): Promise<Uint8Array | null> {
    return results.downloadArtifact(await this.gh(repo.installationId), repo, artifactId);
  }
  async moveBranch(repo: RepoRef, branch: string, sha: string): Promise<RefMove> {
    return results.moveBranch(await this.gh(repo.installationId), repo, branch, sha);
  }
  async deleteBranch(repo: RepoRef, branch: string): Promise<void> {
    await results.deleteBranch(await this.gh(repo.installationId), repo, branch);
  }
  async listWaitingRuns(repo: RepoRef): Promise<WorkflowRunView[]> {
    return results.listWaitingRuns(await this.gh(repo.installationId), repo);
  }
  async listPendingDeployments(repo: RepoRef, workflowRunId: number): Promise<string[]> {
    return results.listPendingDeployments(await this.gh(repo.installationId), repo, workflowRunId);
  }

  async reviewProtectionRule(
    repo: RepoRef,
    workflowRunId: number,
    answer: ProtectionAnswer,
  ): Promise<{ ok: true } | { ok: false; status: number | null; message: string }> {
    return deployments.reviewProtectionRule(await this.gh(repo.installationId), repo, workflowRunId, answer);
  }
}
