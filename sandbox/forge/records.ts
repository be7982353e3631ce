// What the embedded forge keeps: users, repositories, issues and pull requests,
// comments, reviews, check runs, credentials and the events it sends.

export interface ForgeUser {
  login: string;
  id: number;
  type: 'User' | 'Bot';
}

export interface Label {
  name: string;
  color: string;
}

export interface PullState {
  headRef: string;
  /** The repository the head branch lives in: this one, or a fork. */
  headRepo: string;
  headSha: string;
  baseRef: string;
  draft: boolean;
  merged: boolean;
  mergedAt: number | null;
  mergeCommitSha: string | null;
  /** The head the merge request named (`sha`), or null when it named none. */
  mergeNamedSha: string | null;
}

export interface Issue {
  number: number;
  title: string;
  body: string;
  user: ForgeUser;
  state: 'open' | 'closed';
  stateReason: 'completed' | 'not_planned' | null;
  labels: string[];
  createdAt: number;
  updatedAt: number;
  closedAt: number | null;
  /** Locked conversations take no comments from the app, and yoke will not close them out. */
  locked?: boolean;
  pull: PullState | null;
  /** Once edited: the body it was created with, then every body an edit wrote (the tests count writes). */
  bodyEdits?: string[];
  /** Its timeline's label events, oldest first (GET …/issues/{n}/events). */
  events?: IssueEvent[];
}

/** One commit of a push, as GitHub's push webhook lists it. */
export interface PushCommit {
  id: string;
  added: string[];
  modified: string[];
  removed: string[];
}

export interface IssueEvent {
  id: number;
  event: 'labeled' | 'unlabeled';
  label: string;
  actor: ForgeUser;
  createdAt: number;
}

export interface Comment {
  id: number;
  issueNumber: number;
  user: ForgeUser;
  body: string;
  createdAt: number;
  updatedAt: number;
  reactions: { id: number; content: string; user: ForgeUser; createdAt: number }[];
}

export interface Review {
  id: number;
  pr: number;
  user: ForgeUser;
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED';
  body: string;
  commitId: string;
  submittedAt: number;
}

/** An inline comment of a review, on a line of the PR's head. */
export interface ReviewComment {
  id: number;
  reviewId: number;
  pr: number;
  user: ForgeUser;
  path: string;
  line: number;
  body: string;
  diffHunk: string;
  commitId: string;
  createdAt: number;
}

export type RepoRole = 'admin' | 'maintain' | 'write' | 'triage' | 'read';

export interface ForgeRepo {
  id: number;
  owner: ForgeUser;
  name: string;
  fullName: string;
  defaultBranch: string;
  gitDir: string;
  installationId: number;
  collaborators: Record<string, RepoRole>;
  issues: Map<number, Issue>;
  nextNumber: number;
  comments: Comment[];
  reviews: Review[];
  reviewComments: ReviewComment[];
  labels: Map<string, Label>;
  createdAt: number;
  checkRuns: CheckRun[];
  /** Actions secrets, as `secrets.<NAME>` reads them in a workflow. */
  secrets: Record<string, string>;
  /** Branches a protection rule or ruleset covers (GET branch says `protected`). */
  protectedBranches: Set<string>;
  /** Logins a ruleset lets bypass the protected branches' rules (yoke's app, for fast-forward landing). */
  rulesetBypass: Set<string>;
  /** A ruleset's required status checks, by branch: a ref update there needs each, passed, on the new commit. */
  requiredChecks: Map<string, RequiredCheck[]>;
  /** Branches a ruleset requires GitHub's merge queue on (nothing merges there but through the queue). */
  mergeQueue: Set<string>;
  /** The merge queue rule's merge_method (MERGE, SQUASH or REBASE). */
  mergeQueueMethod: string;
  /** LD04: each such branch's queue, bottom first. */
  queues: Map<string, QueueEntry[]>;
}

/** LD04: a PR in a branch's merge queue, at the head it was queued at. */
export interface QueueEntry {
  pr: number;
  head: string;
  /** Its merge group's commit and the commit it was built on, once built. */
  group: string | null;
  parent: string | null;
}

/** A check run an app wrote on a commit, as it now stands. */
export interface CheckRun {
  id: number;
  headSha: string;
  name: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: string | null;
  externalId: string | null;
  detailsUrl: string | null;
  title: string | null;
  summary: string | null;
  startedAt: number;
  completedAt: number | null;
  /** Every write it received, oldest first (the sandbox's checks show them). */
  writes: number;
  /** The GitHub App whose token made it (a job's GITHUB_TOKEN: GitHub Actions'), which a ruleset's `integration_id` names. */
  appId: number;
}

/** GitHub Actions' own app: a job's GITHUB_TOKEN writes checks as it. */
export const GITHUB_ACTIONS_APP_ID = 15368;

/** A ruleset's required status check: its context, and the app it must come from (null: any source). */
export interface RequiredCheck {
  context: string;
  integrationId: number | null;
}

/** Whether a check run is the one a ruleset requires: its name, and from the app the rule names (if it names one). */
export const meetsRequiredCheck = (c: Pick<CheckRun, 'name' | 'appId'>, need: RequiredCheck): boolean =>
  c.name === need.context && (need.integrationId === null || c.appId === need.integrationId);

export interface Credential {
  kind: 'installation' | 'user' | 'workflow';
  user: ForgeUser;
  installationId: number | null;
  expiresAt: number;
  /** A workflow token reaches only its own repository, and writes only if its job may. */
  repo?: string;
  write?: boolean;
  /** An installation token asked for with `repositories` and `permissions`: only those. */
  scope?: { repos: string[]; permissions: Record<string, string> };
}

/** What GitHub would send a webhook about. */
export type ForgeEvent =
  | { kind: 'comment_created'; repo: ForgeRepo; issue: Issue; comment: Comment; sender: ForgeUser }
  | { kind: 'comment_edited'; repo: ForgeRepo; issue: Issue; comment: Comment; sender: ForgeUser }
  | {
      kind: 'push';
      repo: ForgeRepo;
      ref: string;
      before: string | null;
      after: string;
      commits: PushCommit[];
      sender: ForgeUser;
    }
  | { kind: 'labeled'; repo: ForgeRepo; issue: Issue; label: string; sender: ForgeUser }
  /** Repositories an owner added to an installation that reads selected repositories. */
  | { kind: 'repositories_added'; installationId: number; repos: ForgeRepo[]; sender: ForgeUser }
  | { kind: 'pull_opened'; repo: ForgeRepo; issue: Issue; sender: ForgeUser }
  | { kind: 'review_submitted'; repo: ForgeRepo; issue: Issue; review: Review; sender: ForgeUser }
  | {
      kind: 'merge_group';
      action: 'checks_requested' | 'destroyed';
      repo: ForgeRepo;
      group: { branch: string; headSha: string; headRef: string; baseSha: string; reason?: string };
      sender: ForgeUser;
    };
