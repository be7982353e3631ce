import type { BudgetLeft } from './github/budget.js';
import type { RepoConfigResult } from '../config/repo-config.js';
import type { Permission } from '../kernel/permission.js';

// What the engine knows of GitHub: plain data, read through the Forge.
// Engine code never sees Octokit.

/** A repository's full name, `owner/name`, as the store and candidates key it. */
export type RepoName = string;

/** A repository as the forge addresses it. */
export interface RepoRef {
  owner: string;
  name: string;
  fullName: RepoName;
  installationId: number;
  /** From the installation's repository listing: saves each repository a read of its own. */
  defaultBranch?: string;
  /** From the listing: when anything was last pushed to it (its opt-in file cannot have changed since). */
  pushedAt?: string;
}

export interface IssueView {
  number: number;
  title: string;
  labels: string[];
  author: string;
  assignee: string | null;
  /** TR24: a digest of the body alone (what yoke recorded before titles counted), to tell an edit since the label was seen. */
  bodyDigest: string;
  /** TR24: a digest of the title and the body (issueDigest), what an approval covers. */
  digest: string;
  /** BU05: the open issues that block it (GitHub's issue dependencies), and its sub-issues not closed yet. */
  graph?: IssueGraph;
}

/** BU05: what GitHub's issue graph says of one issue, from its summaries: none when absent. */
export interface IssueGraph {
  blockedBy: number;
  openSubIssues: number;
}

export interface PullView {
  number: number;
  title: string;
  body: string;
  headSha: string;
  headRef: string;
  /** The branch it would merge into (GitHub's `base.ref`); null when GitHub did not say. */
  baseRef: string | null;
  /** The repository the head branch lives in (another one for a fork; null when that was deleted). */
  headRepo: RepoName | null;
  labels: string[];
  draft: boolean;
  author: string;
  /** Issues the PR closes through GitHub's closing keywords. */
  closes: number[];
  /** The `Yoke-Run: <id>` trailer of its body, if any. */
  yokeRun: string | null;
}

export interface CommentView {
  id: number;
  issueNumber: number;
  isPull: boolean;
  author: string;
  authorIsBot: boolean;
  body: string;
  createdAt: number;
  /** Later than createdAt once the comment was edited. */
  updatedAt: number;
}

export interface ReviewView {
  author: string;
  state: string;
  commitId: string | null;
  /** GitHub's review id, its text and when it was submitted (what a review-driven fix carries). */
  id?: number;
  body?: string;
  submittedAt?: number | null;
}

/** An inline comment of a review: where it sits in the PR's diff, and what it says. */
export interface ReviewCommentView {
  id: number;
  /** The review it belongs to (null for a comment GitHub keeps outside any review). */
  reviewId: number | null;
  author: string;
  path: string;
  /** The line of the file it is on, in the version it was written on (null: outdated, or on a file as a whole). */
  line: number | null;
  /** The diff hunk it sits on, as GitHub shows it: up to and including its line. */
  diffHunk: string;
  body: string;
  commitId: string;
}

export interface ClaimView {
  pull: PullView;
  comments: CommentView[];
  reviews: ReviewView[];
  /** TR14: the paths its change touches at its head (a rename's old path too); null when GitHub did not list them. */
  files: string[] | null;
}

/** One repository as one pass read it from GitHub. */
export interface RepoView {
  repo: RepoRef;
  defaultBranch: string;
  config: RepoConfigResult;
  /** Open issues (not PRs). */
  issues: IssueView[];
  /** Open PRs. */
  pulls: PullView[];
  /** Claim PRs with their comments and reviews. */
  claims: ClaimView[];
  /** Comments repo-wide created or edited since the previous read (the newest 100 on first sight), for commands found by poll. */
  recentComments: CommentView[];
}

/** What GitHub answers for a login on a repository (the ladder is the kernel's). */
export type { Permission };

export type MergeResult = { ok: true; sha: string } | { ok: false; status: number; message: string };

/** LD04: GitHub added a PR to its branch's merge queue, or its refusal. */
export type EnqueueResult = { ok: true } | { ok: false; status: number; message: string };

/** LD04: a merge group GitHub's merge queue built: the commit `sha`, made on `parent`, ending with PR `pr` at `headSha`. */
export interface MergeGroup {
  pr: number;
  headSha: string;
  sha: string;
  /** The commit the group was built on: the branch's tip, or the group of the PR ahead of it. */
  parent: string;
}

/** LD04: a branch's merge queue as GitHub shows it: its PRs in order (at the head queued), and the groups built. */
export interface MergeQueueRead {
  entries: readonly { pr: number; headSha: string }[];
  groups: readonly MergeGroup[];
}

export interface WorkflowRunView {
  id: number;
  status: string;
  conclusion: string | null;
  /** The repository the run belongs to, as OIDC tokens name it (repository_id). */
  repositoryId: number | null;
  event: string | null;
  /** Who started it, and who started its newest attempt (a re-run); yoke's own runs name its bot for both. */
  actor?: string | null;
  triggeringActor?: string | null;
  /** Its page on GitHub, as a deployment's log_url links it. */
  htmlUrl?: string | null;
  /** The commit it ran (GitHub's head_sha). */
  headSha?: string | null;
  /** When it last changed (GitHub's updated_at): for a completed run, when it completed. */
  updatedAt?: number | null;
}

/** A workflow run's artifact, as its listing shows it. */
export interface ArtifactView {
  id: number;
  name: string;
  sizeInBytes: number;
  expired: boolean;
}

/** A branch moved, or GitHub's refusal (422: not a fast forward). */
export type RefMove = { ok: true } | { ok: false; status: number | null; message: string };

/** The workflow runs whose run-name names a yoke run: TR03 binds a run only to the one yoke's app dispatched. */
export type FoundWorkflowRun =
  { kind: 'none' } | { kind: 'one'; run: WorkflowRunView } | { kind: 'many'; ids: number[] };

/** One issue or PR by number, as delivery reads it fresh. */
export interface IssueDetail {
  number: number;
  state: string;
  stateReason: string | null;
  isPull: boolean;
  locked: boolean;
  labels: string[];
  assignee: string | null;
  /** Who opened it (null when GitHub does not say). */
  author: string | null;
  /** TR24: a digest of its title and body as read now (issueDigest), what a writer's start approves. */
  digest: string;
  /** BU05: the issue graph's summaries for it. */
  graph?: IssueGraph;
}

/** One PR by number, merged or not. */
export interface PullDetail {
  number: number;
  state: string;
  merged: boolean;
  mergeCommitSha: string | null;
  author: string;
  /** The head branch, and the repository it lives in (null when the fork is gone). */
  headRef?: string | null;
  headRepo?: string | null;
  /** Its head commit; for a merged PR, the head it was merged at (GitHub's record of the merge). */
  headSha?: string | null;
}

/** A short-lived token that may push to one repository (contents: write, nothing else). */
export interface PushToken {
  token: string;
  expiresAt: string;
}

/** What yoke writes to a check run. */
export interface CheckRunWrite {
  name: string;
  status: 'in_progress' | 'completed';
  conclusion: 'success' | 'failure' | 'neutral' | 'action_required' | null;
  externalId: string;
  detailsUrl: string | null;
  title: string;
  summary: string;
}

import type {
  DeploymentWrite,
  DeploymentCreated,
  DeploymentStatusWrite,
  DeploymentStatusView,
  EnvironmentRules,
  InstallationGrants,
  BranchPolicy,
  ProtectionAnswer,
} from './deployment-types.js';
export type * from './deployment-types.js';

/** A status check a branch's rules require, and the app it must come from (null: any source). */
export interface RequiredCheck {
  context: string;
  appId: number | null;
}

/** What the rules in force on a branch require of a merge, as `yoke doctor` checks them against the way yoke lands. */
export interface BranchRules {
  requiredChecks: RequiredCheck[];
  /** The merge queue rule's merge method (MERGE, SQUASH or REBASE), when a ruleset requires the queue. */
  mergeQueue: { mergeMethod: string } | null;
}

export interface Forge {
  /** The app's login as it appears on comments, e.g. `yoke[bot]`. */
  botLogin(): Promise<string>;
  /**
   * SC10: the app's installations. With `maxAgeMs`, a list read less than that ago stands in, as an installation's
   * listing does: until its slot of the period comes round or `relist` asks for it again; without, read now.
   */
  listInstallations(opts?: { maxAgeMs: number }): Promise<number[]>;
  /** Authenticates one installation (the per-pass memo calls it at most once). */
  authenticate(installationId: number): Promise<void>;
  /**
   * SC10: the installation's repositories. With `maxAgeMs`, a listing read less than that ago stands in, until its
   * slot of the period comes round or `relist` asks for it again (a repository added or removed); without, read now.
   */
  listRepos(installationId: number, opts?: { maxAgeMs: number }): Promise<RepoRef[]>;
  /**
   * SC10: the installation's next listing is read from GitHub, whatever its age (its repositories changed), and the
   * app's installations with it (an installation came or went).
   */
  relist(installationId: number): void;
  /** The opt-in file, re-read at most every maxAgeMs (or after invalidate). */
  readConfig(repo: RepoRef, opts: { maxAgeMs: number }): Promise<RepoConfigResult>;
  /** The repository's open work; a view probed less than maxViewAgeMs ago is returned without any request (SC02). */
  readRepo(
    repo: RepoRef,
    opts: { claimLabel: string; configMaxAgeMs: number; maxViewAgeMs?: number },
  ): Promise<RepoView>;
  /** SC03: whether a read of the repository now would cost no request (its last view and opt-in file stand in). */
  standsIn(repo: RepoRef, opts: { maxViewAgeMs: number; configMaxAgeMs: number }): boolean;
  /** SC03: whether yoke holds a read of the repository, current or not (a budget reads one never read first). */
  everRead(repo: RepoRef): boolean;
  /** SC03: what is left of an installation's request budgets (each Infinity without a budget). */
  budgetLeft(installationId: number): BudgetLeft;
  /** Forgets cached reads of a repo (a push to the opt-in file, say). */
  invalidate(name: RepoName): void;
  getIssue(repo: RepoRef, number: number): Promise<IssueDetail | null>;
  /** BU05: the open issues that block this one, as `#3` here or `owner/repo#3` elsewhere; null when GitHub would not say. */
  listBlockers(repo: RepoRef, number: number): Promise<string[] | null>;
  /** The oldest open issue (not a PR) carrying this label, or null. */
  findOpenIssue(repo: RepoRef, label: string): Promise<number | null>;
  getPull(repo: RepoRef, number: number): Promise<PullDetail | null>;
  listReviews(repo: RepoRef, pr: number): Promise<ReviewView[]>;
  /** The inline comments of a PR's reviews, oldest first. */
  listReviewComments(repo: RepoRef, pr: number): Promise<ReviewCommentView[]>;
  /** The commit a branch, tag or SHA names, or null. */
  resolveCommit(repo: RepoRef, ref: string): Promise<string | null>;
  /** LD02: the commit a branch is at now, or null when there is no such branch. */
  readBranchTip(repo: RepoRef, branch: string): Promise<string | null>;
  /** LD04: whether a ruleset requires GitHub's merge queue on a branch; null when GitHub would not say. */
  requiresMergeQueue(repo: RepoRef, branch: string): Promise<boolean | null>;
  /** `yoke doctor`: what the rules in force on a branch require of a merge (rulesets and branch protection); null when GitHub would not say. */
  readBranchRules(repo: RepoRef, branch: string): Promise<BranchRules | null>;
  /** LD04: the merge queue on a branch: its PRs and the merge groups built for them; null when GitHub shows none. */
  readMergeQueue(repo: RepoRef, branch: string): Promise<MergeQueueRead | null>;
  /** LD04: adds a PR to its branch's merge queue while its head is `headSha`; a refusal comes back as data. */
  enqueuePullRequest(repo: RepoRef, number: number, headSha: string): Promise<EnqueueResult>;
  /** TR29: whether GitHub protects a branch (branch protection or a ruleset); null when there is no such branch. */
  isBranchProtected(repo: RepoRef, branch: string): Promise<boolean | null>;
  /** Whether `ancestor` is `commit` or comes before it; null when either is unknown. */
  isAncestor(repo: RepoRef, ancestor: string, commit: string): Promise<boolean | null>;
  /** Paths of the files under `dir` at a commit. */
  listFiles(repo: RepoRef, commit: string, dir: string): Promise<string[]>;
  readFileAt(repo: RepoRef, path: string, commit: string): Promise<string | null>;
  createIssue(repo: RepoRef, issue: { title: string; body: string; labels: string[] }): Promise<number>;
  updateIssue(
    repo: RepoRef,
    number: number,
    change: { body?: string; state?: 'open' | 'closed'; stateReason?: 'completed' | 'not_planned' },
  ): Promise<void>;
  removeLabel(repo: RepoRef, number: number, label: string): Promise<void>;
  /** Edits a comment; false when it is gone (deleted). */
  editComment(repo: RepoRef, commentId: number, body: string): Promise<boolean>;
  /** A comment's standing: gone, or there with the logins who reacted to it. */
  readComment(repo: RepoRef, commentId: number): Promise<{ reactors: string[] } | null>;
  getPermission(repo: RepoRef, user: string): Promise<Permission>;
  /** TR05: who added a label still on an issue (its newest `labeled` event), or null when no event names anyone. */
  labelledBy(repo: RepoRef, number: number, label: string): Promise<{ login: string; isBot: boolean } | null>;
  /** Issues (not PRs), open or closed, updated at or after `since`, oldest update first, with their labels. */
  listIssuesUpdatedSince(
    repo: RepoRef,
    since: number,
  ): Promise<{ number: number; labels: string[]; updatedAt: number }[]>;
  createComment(repo: RepoRef, number: number, body: string): Promise<number>;
  addReaction(repo: RepoRef, commentId: number, content: '+1' | '-1' | 'eyes' | 'confused' | 'rocket'): Promise<void>;
  addLabels(repo: RepoRef, number: number, labels: string[]): Promise<void>;
  merge(repo: RepoRef, number: number, sha: string, method: 'merge' | 'squash' | 'rebase'): Promise<MergeResult>;
  /**
   * LD03: merges a commit into a branch as GitHub's merges API does (`POST /repos/{owner}/{repo}/merges`): the
   * merge commit it made (or the branch as it is, when it already held the commit); a conflict comes back as data.
   */
  mergeIntoBranch(repo: RepoRef, branch: string, head: string, message: string): Promise<MergeResult>;
  /** LD03: a commit's parents in order (`GET /repos/{owner}/{repo}/git/commits/{sha}`), or null when GitHub has no such commit. */
  commitParents(repo: RepoRef, sha: string): Promise<string[] | null>;
  /** An installation token for this one repository with `contents: write` only, for one run's push (never to a child process of yoke's). */
  mintPushToken(repo: RepoRef): Promise<PushToken>;
  /** Opens a PR as the app (so the repository's own workflows run on it); returns its number. */
  openPull(repo: RepoRef, pull: { head: string; base: string; title: string; body: string }): Promise<number>;
  dispatchWorkflow(repo: RepoRef, workflow: string, ref: string, inputs: Record<string, string>): Promise<void>;
  /**
   * TR03: the workflow_dispatch run that yoke's app dispatched whose run-name ends `(<runId>)`, searching every
   * page created since `since`. Runs anyone else dispatched under that name are never candidates; more than
   * one of yoke's is `many`, and binds none.
   */
  findWorkflowRun(repo: RepoRef, workflow: string, runId: string, since: number): Promise<FoundWorkflowRun>;
  getWorkflowRun(repo: RepoRef, id: number): Promise<WorkflowRunView | null>;
  cancelWorkflowRun(repo: RepoRef, id: number): Promise<void>;
  /** Creates a check run on a commit; returns its id. */
  createCheckRun(repo: RepoRef, headSha: string, check: CheckRunWrite): Promise<number>;
  updateCheckRun(repo: RepoRef, id: number, check: CheckRunWrite): Promise<void>;
  /** DP01: a deployment; GitHub's refusal (409 when a required context has not passed) comes back as data. */
  createDeployment(repo: RepoRef, d: DeploymentWrite): Promise<DeploymentCreated>;
  createDeploymentStatus(repo: RepoRef, deploymentId: number, s: DeploymentStatusWrite): Promise<void>;
  listDeploymentStatuses(repo: RepoRef, deploymentId: number): Promise<DeploymentStatusView[]>;
  /** Points a branch at a commit (creating it, or moving it there), so a workflow can be dispatched at exactly that commit. */
  pinBranch(repo: RepoRef, branch: string, sha: string): Promise<void>;
  readEnvironmentRules(repo: RepoRef, environment: string): Promise<EnvironmentRules>;
  /** `yoke doctor`: what the app's installation on this repository grants, or null when it is not installed there. */
  readInstallation(repo: RepoRef): Promise<InstallationGrants | null>;
  /** `yoke doctor`: the names of the Actions secrets a workflow of this repository can read (never their values). */
  listSecretNames(repo: RepoRef): Promise<string[]>;
  /** `yoke doctor`: which branches may deploy to an environment; null when there is no such environment. */
  readBranchPolicy(repo: RepoRef, environment: string): Promise<BranchPolicy | null>;
  /** Runs reaching yoke through GitHub: its runner, published once per repository under refs/yoke/runner/<sha256>. */
  publishRunner(repo: RepoRef, sha256: string, content: string): Promise<'published' | 'present'>;
  /** The artifacts a workflow run uploaded (where a run reaching yoke through GitHub leaves its result). */
  listRunArtifacts(repo: RepoRef, workflowRunId: number): Promise<ArtifactView[]>;
  /** An artifact's zip archive; null when it is gone. */
  downloadArtifact(repo: RepoRef, artifactId: number): Promise<Uint8Array | null>;
  /** Moves a branch to a commit, fast forward only, as the app (so the PR's own workflows run on it). */
  moveBranch(repo: RepoRef, branch: string, sha: string): Promise<RefMove>;
  deleteBranch(repo: RepoRef, branch: string): Promise<void>;
  /** DP03 without webhooks: the workflow runs waiting at a protection rule (`status=waiting`). */
  listWaitingRuns(repo: RepoRef): Promise<WorkflowRunView[]>;
  /** The environments one workflow run waits on. */
  listPendingDeployments(repo: RepoRef, workflowRunId: number): Promise<string[]>;
  /** DP03: answers a protection-rule request of a workflow run of this repository (never a URL the event names). */
  reviewProtectionRule(
    repo: RepoRef,
    workflowRunId: number,
    answer: ProtectionAnswer,
  ): Promise<{ ok: true } | { ok: false; status: number | null; message: string }>;
}

export const CONTROL_LABEL = 'yoke:control';
