import { randomBytes } from 'node:crypto';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { createBareRepo, git, revParse } from '../git.js';
import type {
  ForgeUser,
  PullState,
  Issue,
  PushCommit,
  Comment,
  Review,
  ForgeRepo,
  Credential,
  ForgeEvent,
} from './records.js';

// What the embedded forge knows: users, tokens, repositories with their
// issues, PRs, comments, reviews and labels. Plain data and the operations
// GitHub would perform on it; no HTTP and no JSON shapes here. Changes that
// GitHub would announce by webhook are reported as ForgeEvents.

export * from './records.js';

export class ForgeState {
  readonly repos = new Map<string, ForgeRepo>();
  readonly users = new Map<string, ForgeUser>();
  private tokens = new Map<string, Credential>();
  private seeded = new Map<string, string>();
  private seq = 1000;

  constructor(
    readonly dataDir: string,
    readonly botLogin: string,
    readonly now: () => number,
    /** Told of each change GitHub would announce by webhook. */
    private readonly onEvent: (e: ForgeEvent) => void,
  ) {
    this.user(botLogin, 'Bot');
  }

  nextId(): number {
    return ++this.seq;
  }

  user(login: string, type: 'User' | 'Bot' = 'User'): ForgeUser {
    let u = this.users.get(login);
    if (!u) {
      u = { login, id: this.nextId(), type };
      this.users.set(login, u);
    }
    return u;
  }

  get botUser(): ForgeUser {
    return this.user(this.botLogin, 'Bot');
  }

  credential(token: string): Credential | undefined {
    return this.tokens.get(token);
  }

  /** Push tokens (scoped to contents) that still work: a delivery that revokes its own leaves none. */
  livePushTokens(): number {
    return [...this.tokens.values()].filter(
      (c) => c.kind === 'installation' && c.scope?.permissions.contents === 'write' && c.expiresAt > this.now(),
    ).length;
  }

  /** A review was submitted: GitHub sends pull_request_review.submitted. */
  reviewed(repo: ForgeRepo, issue: Issue, review: Review): void {
    this.onEvent({ kind: 'review_submitted', repo, issue, review, sender: review.user });
  }

  /** DELETE /installation/token: the token stops working at once, as GitHub's does. */
  revoke(token: string): void {
    this.tokens.delete(token);
  }

  /** A personal access token for a user (maintainers, the demo agent on the command launcher). */
  personalToken(login: string): string {
    const token = `ghp_${randomBytes(12).toString('hex')}`;
    this.tokens.set(token, {
      kind: 'user',
      user: this.user(login),
      installationId: null,
      expiresAt: Number.MAX_SAFE_INTEGER,
    });
    return token;
  }

  /** The GITHUB_TOKEN of one workflow job. */
  workflowToken(repo: string, write: boolean): string {
    const token = `ghs_wf${randomBytes(12).toString('hex')}`;
    this.tokens.set(token, {
      kind: 'workflow',
      user: this.user('github-actions[bot]', 'Bot'),
      installationId: null,
      expiresAt: this.now() + 6 * 3600_000,
      repo,
      write,
    });
    return token;
  }

  /** An installation access token, scoped to its installation, for an hour. */
  installationToken(installationId: number, scope?: Credential['scope']): { token: string; expiresAt: number } {
    const token = `ghs_${randomBytes(16).toString('hex')}`;
    const expiresAt = this.now() + 3600_000;
    this.tokens.set(token, {
      kind: 'installation',
      user: this.botUser,
      installationId,
      expiresAt,
      ...(scope ? { scope } : {}),
    });
    return { token, expiresAt };
  }

  /** The app's installations (a fork outside them has installationId -1). */
  installationIds(): number[] {
    return [...new Set([...this.repos.values()].map((r) => r.installationId))]
      .filter((id) => id >= 0)
      .sort((a, b) => a - b);
  }

  /** Someone forks a repository: a copy of its git history under their name, outside the app's installation. */
  forkRepo(source: ForgeRepo, ownerLogin: string): ForgeRepo {
    const fullName = `${ownerLogin}/${source.name}`;
    const gitDir = join(this.dataDir, 'git', `${fullName}.git`);
    git(this.dataDir, ['clone', '--quiet', '--bare', source.gitDir, gitDir]);
    return this.addRepo({
      fullName,
      gitDir,
      defaultBranch: source.defaultBranch,
      installationId: -1,
      collaborators: {},
    });
  }

  private addRepo(r: {
    fullName: string;
    gitDir: string;
    defaultBranch: string;
    installationId: number;
    collaborators: ForgeRepo['collaborators'];
  }): ForgeRepo {
    const [ownerLogin, name] = r.fullName.split('/') as [string, string];
    const repo: ForgeRepo = {
      id: this.nextId(),
      owner: this.user(ownerLogin),
      name,
      fullName: r.fullName,
      defaultBranch: r.defaultBranch,
      gitDir: r.gitDir,
      installationId: r.installationId,
      collaborators: { [ownerLogin]: 'admin', ...r.collaborators },
      issues: new Map(),
      nextNumber: 1,
      comments: [],
      reviews: [],
      reviewComments: [],
      labels: new Map(),
      createdAt: this.now(),
      checkRuns: [],
      secrets: {},
      protectedBranches: new Set(),
      rulesetBypass: new Set(),
      requiredChecks: new Map(),
      mergeQueue: new Set(),
      mergeQueueMethod: 'MERGE',
      queues: new Map(),
    };
    this.repos.set(r.fullName, repo);
    return repo;
  }

  createRepo(
    fullName: string,
    opts: {
      files: Record<string, string>;
      installationId: number;
      defaultBranch?: string;
      collaborators?: ForgeRepo['collaborators'];
    },
  ): ForgeRepo {
    const gitDir = join(this.dataDir, 'git', `${fullName}.git`);
    const branch = opts.defaultBranch ?? 'main';
    // A repository seeded with the same files as an earlier one is a copy of it (a fleet of a thousand is seconds, not minutes).
    const key = JSON.stringify([branch, opts.files]);
    const twin = this.seeded.get(key);
    if (twin) cpSync(twin, gitDir, { recursive: true });
    else {
      createBareRepo(gitDir, branch, opts.files, 'Initial commit');
      this.seeded.set(key, gitDir);
    }
    return this.addRepo({
      fullName,
      gitDir,
      defaultBranch: branch,
      installationId: opts.installationId,
      collaborators: opts.collaborators ?? {},
    });
  }

  /** An owner adds repositories to an installation that reads selected ones: GitHub announces them (installation_repositories). */
  announceAdded(installationId: number, repos: ForgeRepo[], by: ForgeUser): void {
    this.onEvent({ kind: 'repositories_added', installationId, repos, sender: by });
  }

  createIssue(repo: ForgeRepo, by: ForgeUser, title: string, body: string, labels: string[] = []): Issue {
    const t = this.now();
    const issue: Issue = {
      number: repo.nextNumber++,
      title,
      body,
      user: by,
      state: 'open',
      stateReason: null,
      labels: [],
      createdAt: t,
      updatedAt: t,
      closedAt: null,
      pull: null,
    };
    for (const l of labels) this.addLabel(repo, issue, l);
    repo.issues.set(issue.number, issue);
    return issue;
  }

  openPull(
    repo: ForgeRepo,
    by: ForgeUser,
    title: string,
    body: string,
    pull: Pick<PullState, 'headRef' | 'headRepo' | 'headSha' | 'baseRef' | 'draft'>,
  ): Issue {
    const issue = this.createIssue(repo, by, title, body);
    issue.pull = { ...pull, merged: false, mergedAt: null, mergeCommitSha: null, mergeNamedSha: null };
    const home = this.repos.get(pull.headRepo);
    // As GitHub does, the base repository keeps the head as refs/pull/N/head (a fork's commits included).
    if (home && home !== repo)
      git(repo.gitDir, ['fetch', '--quiet', home.gitDir, `refs/heads/${pull.headRef}:refs/pull/${issue.number}/head`]);
    this.onEvent({ kind: 'pull_opened', repo, issue, sender: by });
    return issue;
  }

  addComment(repo: ForgeRepo, issue: Issue, by: ForgeUser, body: string): Comment {
    const t = this.now();
    const c: Comment = {
      id: this.nextId(),
      issueNumber: issue.number,
      user: by,
      body,
      createdAt: t,
      updatedAt: t,
      reactions: [],
    };
    repo.comments.push(c);
    issue.updatedAt = t;
    this.onEvent({ kind: 'comment_created', repo, issue, comment: c, sender: by });
    return c;
  }

  /** A comment's body edited in place (GitHub keeps its id and created_at, and moves updated_at). */
  editComment(repo: ForgeRepo, comment: Comment, body: string, by: ForgeUser): void {
    comment.body = body;
    comment.updatedAt = this.now() + 1000; // second precision: an edit is always visibly later
    const issue = repo.issues.get(comment.issueNumber);
    if (issue) this.onEvent({ kind: 'comment_edited', repo, issue, comment, sender: by });
  }

  addLabel(repo: ForgeRepo, issue: Issue, name: string, by?: ForgeUser): void {
    if (!repo.labels.has(name)) repo.labels.set(name, { name, color: 'ededed' });
    if (!issue.labels.includes(name)) issue.labels.push(name);
    issue.updatedAt = this.now();
    if (by)
      (issue.events ??= []).push({
        id: this.nextId(),
        event: 'labeled',
        label: name,
        actor: by,
        createdAt: issue.updatedAt,
      });
    if (by) this.onEvent({ kind: 'labeled', repo, issue, label: name, sender: by });
  }

  /** A push moved a branch: GitHub sends the push webhook. */
  pushed(
    repo: ForgeRepo,
    ref: string,
    before: string | null,
    after: string,
    commits: PushCommit[],
    by: ForgeUser,
  ): void {
    this.onEvent({ kind: 'push', repo, ref, before, after, commits, sender: by });
  }

  /** LD04: GitHub's merge queue built or destroyed a merge group: GitHub sends `merge_group`. */
  mergeGroup(
    repo: ForgeRepo,
    action: 'checks_requested' | 'destroyed',
    group: { branch: string; headSha: string; headRef: string; baseSha: string; reason?: string },
  ): void {
    this.onEvent({ kind: 'merge_group', action, repo, group, sender: this.user('github-merge-queue[bot]', 'Bot') });
  }

  /** Follows pushes: a PR's head is its branch; a moved branch is an update. */
  syncPulls(repo: ForgeRepo): void {
    for (const issue of repo.issues.values()) {
      if (!issue.pull || issue.state !== 'open') continue;
      const home = this.repos.get(issue.pull.headRepo) ?? repo;
      const sha = revParse(home.gitDir, `refs/heads/${issue.pull.headRef}`);
      if (sha && sha !== issue.pull.headSha) {
        issue.pull.headSha = sha;
        issue.updatedAt = this.now();
      }
    }
  }

  canWrite(repo: ForgeRepo, who: { auth: string; actor: ForgeUser | null; writes: boolean }): boolean {
    if (who.auth === 'installation') return true;
    if (who.auth === 'workflow') return who.writes;
    const p = who.actor ? repo.collaborators[who.actor.login] : undefined;
    return p === 'admin' || p === 'maintain' || p === 'write';
  }
}
