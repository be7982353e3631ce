import type { BudgetLeft } from '../../src/forge/github/budget.js';
import { bodyDigest } from '../../src/forge/github/schemas.js';
import { parseClosingRefs, parseYokeRunTrailer } from '../../src/forge/body-text.js';
import { issueDigest } from '../../src/kernel/issue-digest.js';
import { parseRepoConfig, type RepoConfigResult } from '../../src/config/repo-config.js';
import {
  type CheckRunWrite,
  type EnqueueResult,
  type MergeGroup,
  type MergeQueueRead,
  type CommentView,
  type Forge,
  type IssueDetail,
  type PullDetail,
  type ReviewView,
  type MergeResult,
  type Permission,
  type RepoRef,
  type RepoView,
  type WorkflowRunView,
  type FoundWorkflowRun,
  type DeploymentCreated,
  type DeploymentStatusView,
  type DeploymentStatusWrite,
  type DeploymentWrite,
  type EnvironmentRules,
  type BranchPolicy,
  type BranchRules,
  type RequiredCheck,
  type InstallationGrants,
  type ProtectionAnswer,
  type ArtifactView,
  type RefMove,
  type ReviewCommentView,
} from '../../src/forge/types.js';

// An in-memory Forge for engine tests: the same interface the GitHub forge
// implements, with state a test can shape and writes it can inspect.

export interface FakePull {
  number: number;
  headSha: string;
  labels: string[];
  body: string;
  author: string;
  draft?: boolean;
  /** The full name of the repository the head lives in, for a PR from a fork. */
  headRepo?: string;
  /** The head branch (`pr-<number>` unless set). */
  headRef?: string;
  comments: CommentView[];
  reviews: ReviewView[];
  /** The paths the PR changes (none by default). */
  files?: string[] | null;
}

export interface FakeRepo {
  ref: RepoRef;
  config: unknown;
  issues: {
    number: number;
    labels: string[];
    open: boolean;
    assignee?: string | null;
    locked?: boolean;
    stateReason?: string | null;
    body?: string;
    title?: string;
    /** Who opened it. */
    author?: string;
    /** When it last changed (ms); undefined reads as the start of time. */
    updatedAt?: number;
    /** TR05: who added each label, as its newest `labeled` event says. */
    labelledBy?: Record<string, string>;
    /** BU05: the open issues that block it (as GitHub names them), and its sub-issues not closed yet. */
    blockers?: string[];
    openSubIssues?: number;
  }[];
  pulls: FakePull[];
  permissions: Record<string, Permission>;
  mergeRefusal?: { status: number; message: string };
  /** LD03: GitHub's refusal of any update to the default branch by yoke's app (its rules, without a bypass). */
  branchRule?: { status: number; message: string };
  /** LD04: a ruleset requires GitHub's merge queue on the default branch (GitHub refuses merges around it). */
  mergeQueue?: boolean;
  /** The status checks the default branch's rules require (`yoke doctor`). */
  requiredChecks?: RequiredCheck[];
  /** LD04: the PRs in the default branch's merge queue, in order, at the head each was queued at. */
  queued?: { pr: number; headSha: string }[];
  /** LD04: the merge groups GitHub built for them (buildMergeGroups), bottom first. */
  groups?: MergeGroup[];
  /** LD04: GitHub's refusal to add any PR to the queue (a permission not granted, say). */
  enqueueRefusal?: { status: number; message: string };
  /** The default branch's commits, oldest first, each with its files. */
  history: string[];
  files: Map<string, Record<string, string>>;
  /** Merged PRs: GitHub keeps them, the open listing does not. */
  merged: (PullDetail & { reviews: ReviewView[] })[];
  /** Branches besides the default one: each a head commit off it, and whether GitHub protects the branch. */
  branches: Record<string, { head: string; protected: boolean; base: string }>;
}

/** BU05: an issue's graph summaries, as GitHub's issue objects carry them (none when there is nothing to say). */
const graphOf = (i: { blockers?: string[]; openSubIssues?: number }) =>
  i.blockers?.length || i.openSubIssues
    ? { graph: { blockedBy: i.blockers?.length ?? 0, openSubIssues: i.openSubIssues ?? 0 } }
    : {};

export class FakeForge implements Forge {
  repos = new Map<string, FakeRepo>();
  installations: number[] = [1];
  failingAuth = new Set<number>();
  bot = 'yoke[bot]';
  calls = { auth: 0, listInstallations: 0, listRepos: 0, readRepo: 0, readConfig: 0, getPermission: 0 };
  readsByRepo = new Map<string, number>();
  comments: { repo: string; number: number; body: string; id: number }[] = [];
  reactions: { repo: string; commentId: number; content: string }[] = [];
  labelsAdded: { repo: string; number: number; labels: string[] }[] = [];
  merges: { repo: string; number: number; sha: string; method: string }[] = [];
  /** The yoke/lander check's conclusion on each merged head when its merge was asked for, in merge order. */
  checkAtMerge: (string | null)[] = [];
  dispatches: { repo: string; workflow: string; ref: string; inputs: Record<string, string> }[] = [];
  private nextId = 1000;

  addRepo(fullName: string, config: unknown, installationId = 1): FakeRepo {
    const [owner, name] = fullName.split('/') as [string, string];
    const repo: FakeRepo = {
      ref: { owner, name, fullName, installationId },
      config,
      issues: [],
      pulls: [],
      permissions: {},
      history: ['c0'],
      files: new Map([['c0', {}]]),
      merged: [],
      branches: {},
    };
    this.repos.set(fullName, repo);
    if (!this.installations.includes(installationId)) this.installations.push(installationId);
    return repo;
  }

  /** A repository by name, compared as GitHub compares names (without regard to case). */
  repo(fullName: string): FakeRepo {
    const r =
      this.repos.get(fullName) ??
      [...this.repos.values()].find((x) => x.ref.fullName.toLowerCase() === fullName.toLowerCase());
    if (!r) throw new Error(`no fake repo ${fullName}`);
    return r;
  }

  addIssue(fullName: string, number: number, labels = ['yoke:afk']): void {
    this.repo(fullName).issues.push({ number, labels, open: true });
  }

  addPull(fullName: string, pull: Partial<FakePull> & { number: number; headSha: string }): FakePull {
    const p: FakePull = { labels: ['yoke:claim'], body: '', author: 'agent', comments: [], reviews: [], ...pull };
    this.repo(fullName).pulls.push(p);
    return p;
  }

  /** A comment as GitHub would list it. */
  comment(fullName: string, number: number, author: string, body: string): CommentView {
    const now = Date.now();
    const c: CommentView = {
      id: this.nextId++,
      issueNumber: number,
      isPull: true,
      author,
      authorIsBot: author.endsWith('[bot]'),
      body,
      createdAt: now,
      updatedAt: now,
    };
    const pull = this.repo(fullName).pulls.find((p) => p.number === number);
    if (pull) pull.comments.push(c);
    return c;
  }

  async botLogin(): Promise<string> {
    return this.bot;
  }

  async listInstallations(): Promise<number[]> {
    this.calls.listInstallations++;
    return [...this.installations];
  }

  async authenticate(installationId: number): Promise<void> {
    this.calls.auth++;
    if (this.failingAuth.has(installationId)) throw new Error('Bad credentials');
  }

  /** The installations whose listing was asked for again (SC10); the fake lists afresh every time. */
  relisted: number[] = [];

  relist(installationId: number): void {
    this.relisted.push(installationId);
  }

  async listRepos(installationId: number, _opts?: { maxAgeMs: number }): Promise<RepoRef[]> {
    this.calls.listRepos++;
    return [...this.repos.values()].filter((r) => r.ref.installationId === installationId).map((r) => r.ref);
  }

  /** Points left per installation (unlimited unless a test sets it). */
  points = new Map<number, number>();
  /** Content-creating writes left per installation; unset: unlimited. */
  contentWrites = new Map<number, number>();
  /** The fake keeps no views: every read is a read. */
  standsIn(): boolean {
    return false;
  }

  everRead(repo: RepoRef): boolean {
    return this.readsByRepo.has(repo.fullName);
  }

  budgetLeft(installationId: number): BudgetLeft {
    return {
      points: this.points.get(installationId) ?? Number.POSITIVE_INFINITY,
      contentWrites: this.contentWrites.get(installationId) ?? Number.POSITIVE_INFINITY,
      primary: Number.POSITIVE_INFINITY,
    };
  }

  invalidate(): void {}

  async readConfig(repo: RepoRef): Promise<RepoConfigResult> {
    this.calls.readConfig++;
    return parseRepoConfig(this.repo(repo.fullName).config);
  }

  /** The last view of each repository: a read that finds the same answers with it, as GitHub's reader's kept view does. */
  private readonly views = new Map<string, { key: string; view: RepoView }>();

  async readRepo(repo: RepoRef, _opts?: { maxViewAgeMs?: number }): Promise<RepoView> {
    this.calls.readRepo++;
    this.readsByRepo.set(repo.fullName, (this.readsByRepo.get(repo.fullName) ?? 0) + 1);
    const view = this.viewOf(repo);
    const key = JSON.stringify(view);
    const last = this.views.get(repo.fullName);
    if (last?.key === key) return { ...last.view };
    this.views.set(repo.fullName, { key, view });
    return view;
  }

  private viewOf(repo: RepoRef): RepoView {
    const r = this.repo(repo.fullName);
    const pulls = r.pulls.map((p) => ({
      number: p.number,
      title: `PR ${p.number}`,
      body: p.body,
      headSha: p.headSha,
      headRef: `branch-${p.number}`,
      baseRef: 'main',
      headRepo: p.headRepo ?? r.ref.fullName,
      labels: [...p.labels],
      draft: p.draft ?? false,
      author: p.author,
      closes: parseClosingRefs(p.body),
      yokeRun: parseYokeRunTrailer(p.body),
    }));
    return {
      repo: r.ref,
      defaultBranch: 'main',
      config: parseRepoConfig(r.config),
      issues: r.issues
        .filter((i) => i.open)
        .map((i) => ({
          number: i.number,
          title: i.title ?? `Issue ${i.number}`,
          labels: [...i.labels],
          author: 'maint',
          assignee: null,
          bodyDigest: bodyDigest(i.body ?? ''),
          digest: issueDigest(i.title ?? `Issue ${i.number}`, i.body ?? ''),
          ...graphOf(i),
        })),
      pulls,
      claims: r.pulls
        .filter((p) => p.labels.includes('yoke:claim') || parseYokeRunTrailer(p.body))
        .map((p) => ({
          pull: pulls.find((x) => x.number === p.number)!,
          comments: [...p.comments],
          reviews: [...p.reviews],
          files: p.files === null ? null : [...(p.files ?? [])],
        })),
      recentComments: [],
    };
  }

  async getIssue(repo: RepoRef, number: number): Promise<IssueDetail | null> {
    const r = this.repo(repo.fullName);
    const issue = r.issues.find((i) => i.number === number);
    if (issue) {
      return {
        number,
        state: issue.open ? 'open' : 'closed',
        stateReason: issue.stateReason ?? null,
        isPull: false,
        locked: issue.locked ?? false,
        labels: [...issue.labels],
        assignee: issue.assignee ?? null,
        author: issue.author ?? null,
        digest: issueDigest(issue.title ?? `Issue ${issue.number}`, issue.body ?? ''),
        ...graphOf(issue),
      };
    }
    const pull = r.pulls.find((p) => p.number === number) ?? r.merged.find((p) => p.number === number);
    return pull
      ? {
          number,
          state: 'open' in pull ? 'closed' : 'open',
          stateReason: null,
          isPull: true,
          locked: false,
          labels: [],
          assignee: null,
          author: pull.author,
          digest: issueDigest('', ''),
        }
      : null;
  }

  /** Adds a commit to the default branch with these files changed; returns its SHA. */
  commit(fullName: string, files: Record<string, string | null>): string {
    const r = this.repo(fullName);
    const prev = r.files.get(r.history.at(-1)!)!;
    const sha = `c${r.history.length}`;
    const next = { ...prev };
    for (const [path, text] of Object.entries(files)) {
      if (text === null) delete next[path];
      else next[path] = text;
    }
    r.history.push(sha);
    r.files.set(sha, next);
    return sha;
  }

  /** A claim PR that GitHub merged (by yoke or by hand), landing as a new commit. */
  mergePull(
    fullName: string,
    pr: { number: number; author?: string; files?: Record<string, string | null>; headSha?: string },
  ): string {
    const sha = this.commit(fullName, pr.files ?? {});
    this.repo(fullName).merged.push({
      number: pr.number,
      state: 'closed',
      merged: true,
      mergeCommitSha: sha,
      author: pr.author ?? 'agent',
      headSha: pr.headSha ?? null,
      reviews: [],
    });
    return sha;
  }

  async getPull(repo: RepoRef, number: number): Promise<PullDetail | null> {
    const r = this.repo(repo.fullName);
    const m = r.merged.find((p) => p.number === number);
    if (m)
      return {
        number,
        state: m.state,
        merged: m.merged,
        mergeCommitSha: m.mergeCommitSha,
        author: m.author,
        headSha: m.headSha ?? null,
      };
    const open = r.pulls.find((p) => p.number === number);
    return open
      ? {
          number,
          state: 'open',
          merged: false,
          mergeCommitSha: null,
          author: open.author,
          headRef: open.headRef ?? `pr-${number}`,
          headRepo: open.headRepo ?? repo.fullName,
        }
      : null;
  }

  async listReviews(repo: RepoRef, pr: number): Promise<ReviewView[]> {
    const r = this.repo(repo.fullName);
    return [...(r.merged.find((p) => p.number === pr)?.reviews ?? r.pulls.find((p) => p.number === pr)?.reviews ?? [])];
  }

  async resolveCommit(repo: RepoRef, ref: string): Promise<string | null> {
    const r = this.repo(repo.fullName);
    if (ref === 'main' || ref === 'HEAD') return r.history.at(-1)!;
    if (r.branches[ref]) return r.branches[ref].head;
    return r.history.includes(ref) || Object.values(r.branches).some((b) => b.head === ref) ? ref : null;
  }

  blockerReads = 0;
  async listBlockers(repo: RepoRef, number: number): Promise<string[] | null> {
    this.blockerReads++;
    return this.repo(repo.fullName).issues.find((i) => i.number === number)?.blockers ?? [];
  }

  mergeQueueReads = 0;
  async requiresMergeQueue(repo: RepoRef, branch: string): Promise<boolean | null> {
    this.mergeQueueReads++;
    return branch === 'main' ? Boolean(this.repo(repo.fullName).mergeQueue) : false;
  }

  async readBranchRules(repo: RepoRef, branch: string): Promise<BranchRules | null> {
    const r = this.repo(repo.fullName);
    if (branch !== 'main') return null;
    return { requiredChecks: r.requiredChecks ?? [], mergeQueue: r.mergeQueue ? { mergeMethod: 'SQUASH' } : null };
  }

  mergeQueueFullReads = 0;
  async readMergeQueue(repo: RepoRef, branch: string): Promise<MergeQueueRead | null> {
    this.mergeQueueFullReads++;
    const r = this.repo(repo.fullName);
    if (branch !== 'main' || !r.mergeQueue) return null;
    return { entries: [...(r.queued ?? [])], groups: [...(r.groups ?? [])] };
  }

  enqueued: { repo: string; number: number; headSha: string }[] = [];
  async enqueuePullRequest(repo: RepoRef, number: number, headSha: string): Promise<EnqueueResult> {
    this.enqueued.push({ repo: repo.fullName, number, headSha });
    const r = this.repo(repo.fullName);
    if (r.enqueueRefusal) return { ok: false, ...r.enqueueRefusal };
    if (!r.mergeQueue) return { ok: false, status: 422, message: 'The base branch has no merge queue' };
    const pull = r.pulls.find((p) => p.number === number);
    if (!pull) return { ok: false, status: 404, message: `#${number} is not a pull request here` };
    if (pull.headSha !== headSha) return { ok: false, status: 422, message: 'The head of the pull request moved' };
    if ((r.queued ??= []).some((e) => e.pr === number))
      return { ok: false, status: 422, message: 'The pull request is already queued' };
    r.queued.push({ pr: number, headSha });
    return { ok: true };
  }

  /** LD04: GitHub builds a merge group for each queued PR that has none: on the tip, or the group ahead of it. */
  buildMergeGroups(fullName: string): MergeGroup[] {
    const r = this.repo(fullName);
    const groups = (r.groups ??= []);
    let parent = r.history.at(-1)!;
    for (const e of r.queued ?? []) {
      let g = groups.find((x) => x.pr === e.pr && x.headSha === e.headSha);
      if (!g || g.parent !== parent) {
        if (g) groups.splice(groups.indexOf(g), 1);
        g = { pr: e.pr, headSha: e.headSha, sha: `g${e.pr}.${e.headSha.slice(-6)}-${parent}`, parent };
        groups.push(g);
        this.landCommits.set(g.sha, { parent, head: e.headSha });
        r.files.set(g.sha, { ...(r.files.get(parent) ?? {}) });
      }
      parent = g.sha;
    }
    return groups;
  }

  /** LD04: the queue merges the bottom group: the branch moves to its commit, and its PR is merged there. */
  landMergeGroup(fullName: string): string {
    const r = this.repo(fullName);
    const g = r.groups?.find((x) => x.parent === r.history.at(-1));
    if (!g) throw new Error('no merge group on the tip');
    const moved = this.fastForwardMain(r, g.sha);
    if (!moved.ok) throw new Error(moved.message);
    r.queued = (r.queued ?? []).filter((e) => e.pr !== g.pr);
    r.groups = r.groups!.filter((x) => x !== g);
    return g.sha;
  }

  /** LD04: the queue drops a PR (its group failed its required checks): its group and those above go. */
  dequeue(fullName: string, pr: number): void {
    const r = this.repo(fullName);
    const at = (r.queued ?? []).findIndex((e) => e.pr === pr);
    const above = new Set((r.queued ?? []).slice(at).map((e) => e.pr));
    r.queued = (r.queued ?? []).filter((e) => e.pr !== pr);
    r.groups = (r.groups ?? []).filter((g) => !above.has(g.pr));
  }

  /** LD02: the default branch is at the newest commit of its history (a merge adds one). */
  async readBranchTip(repo: RepoRef, branch: string): Promise<string | null> {
    const r = this.repo(repo.fullName);
    return branch === 'main' ? (r.history.at(-1) ?? null) : (r.branches[branch]?.head ?? null);
  }

  async isBranchProtected(repo: RepoRef, branch: string): Promise<boolean | null> {
    const r = this.repo(repo.fullName);
    return branch === 'main' ? false : (r.branches[branch]?.protected ?? null);
  }

  /** A branch off the default branch's head with one commit of its own (the files as there, changed as given); returns that commit. */
  branch(fullName: string, name: string, opts: { protected: boolean; files?: Record<string, string> }): string {
    const r = this.repo(fullName);
    const head = `b-${name.replace(/\W/g, '-')}-${Object.keys(r.branches).length + 1}`;
    r.files.set(head, { ...r.files.get(r.history.at(-1)!), ...opts.files });
    r.branches[name] = { head, protected: opts.protected, base: r.history.at(-1)! };
    return head;
  }

  async isAncestor(repo: RepoRef, ancestor: string, commit: string): Promise<boolean | null> {
    const r = this.repo(repo.fullName);
    const h = r.history;
    // A branch's own commit comes after the default branch's commit it branched from.
    const off = Object.values(r.branches).find((b) => b.head === commit);
    if (off) return ancestor === commit || (h.includes(ancestor) ? h.indexOf(ancestor) <= h.indexOf(off.base) : null);
    const [a, c] = [h.indexOf(ancestor), h.indexOf(commit)];
    return a < 0 || c < 0 ? null : a <= c;
  }

  async listFiles(repo: RepoRef, commit: string, dir: string): Promise<string[]> {
    return Object.keys(this.repo(repo.fullName).files.get(commit) ?? {})
      .filter((p) => p.startsWith(dir))
      .sort();
  }

  fileReads = 0;
  async readFileAt(repo: RepoRef, path: string, commit: string): Promise<string | null> {
    this.fileReads++;
    return this.repo(repo.fullName).files.get(commit)?.[path] ?? null;
  }

  createdIssues: { repo: string; number: number; title: string; body: string; labels: string[] }[] = [];
  async createIssue(repo: RepoRef, issue: { title: string; body: string; labels: string[] }): Promise<number> {
    const r = this.repo(repo.fullName);
    const number =
      1 +
      Math.max(0, ...r.issues.map((i) => i.number), ...r.pulls.map((p) => p.number), ...r.merged.map((p) => p.number));
    r.issues.push({ number, labels: [...issue.labels], open: true, body: issue.body, title: issue.title });
    this.createdIssues.push({ repo: repo.fullName, number, ...issue });
    return number;
  }

  issueUpdates: { repo: string; number: number; change: { body?: string; state?: string; stateReason?: string } }[] =
    [];
  /** Comments and issue closes in the order they were written (what a wake-before-close rule is about). */
  sequence: string[] = [];
  async updateIssue(
    repo: RepoRef,
    number: number,
    change: { body?: string; state?: 'open' | 'closed'; stateReason?: 'completed' | 'not_planned' },
  ): Promise<void> {
    this.issueUpdates.push({ repo: repo.fullName, number, change });
    if (change.state) this.sequence.push(`${change.state} #${number}`);
    const issue = this.repo(repo.fullName).issues.find((i) => i.number === number);
    if (!issue) return;
    if (change.body !== undefined) issue.body = change.body;
    if (change.state) issue.open = change.state === 'open';
    if (change.stateReason) issue.stateReason = change.stateReason;
  }

  edits: { repo: string; commentId: number; body: string }[] = [];
  deletedComments = new Set<number>();
  /** Who reacted to each comment. */
  commentReactions = new Map<number, string[]>();
  async editComment(repo: RepoRef, commentId: number, body: string): Promise<boolean> {
    if (this.deletedComments.has(commentId) || !this.comments.some((c) => c.id === commentId)) return false;
    this.edits.push({ repo: repo.fullName, commentId, body });
    const c = this.comments.find((x) => x.id === commentId)!;
    c.body = body;
    return true;
  }

  commentReads = 0;
  async readComment(_repo: RepoRef, commentId: number): Promise<{ reactors: string[] } | null> {
    this.commentReads++;
    if (this.deletedComments.has(commentId) || !this.comments.some((c) => c.id === commentId)) return null;
    return { reactors: this.commentReactions.get(commentId) ?? [] };
  }

  labelsRemoved: { repo: string; number: number; label: string }[] = [];
  async removeLabel(repo: RepoRef, number: number, label: string): Promise<void> {
    this.labelsRemoved.push({ repo: repo.fullName, number, label });
    const issue = this.repo(repo.fullName).issues.find((i) => i.number === number);
    if (issue) issue.labels = issue.labels.filter((l) => l !== label);
  }

  async getPermission(repo: RepoRef, user: string): Promise<Permission> {
    this.calls.getPermission++;
    return this.repo(repo.fullName).permissions[user] ?? 'none';
  }

  async createComment(repo: RepoRef, number: number, body: string): Promise<number> {
    const id = this.nextId++;
    this.comments.push({ repo: repo.fullName, number, body, id });
    this.sequence.push(`comment #${number}`);
    const pull = this.repos.get(repo.fullName)?.pulls.find((p) => p.number === number);
    if (pull)
      pull.comments.push({
        id,
        issueNumber: number,
        isPull: true,
        author: this.bot,
        authorIsBot: true,
        body,
        createdAt: Date.now(),
        updatedAt: Date.now(),
      });
    return id;
  }

  async addReaction(repo: RepoRef, commentId: number, content: string): Promise<void> {
    this.reactions.push({ repo: repo.fullName, commentId, content });
  }

  async addLabels(repo: RepoRef, number: number, labels: string[]): Promise<void> {
    this.labelsAdded.push({ repo: repo.fullName, number, labels });
    const pull = this.repo(repo.fullName).pulls.find((p) => p.number === number);
    if (pull) pull.labels.push(...labels.filter((l) => !pull.labels.includes(l)));
    const issue = this.repo(repo.fullName).issues.find((i) => i.number === number);
    if (issue) issue.labels.push(...labels.filter((l) => !issue.labels.includes(l)));
  }

  async merge(repo: RepoRef, number: number, sha: string, method: 'merge' | 'squash' | 'rebase'): Promise<MergeResult> {
    this.merges.push({ repo: repo.fullName, number, sha, method });
    this.checkAtMerge.push(
      this.checkRuns.find((c) => c.headSha === sha && c.current.name === 'yoke/lander')?.current.conclusion ?? null,
    );
    const r = this.repo(repo.fullName);
    const pull = r.pulls.find((p) => p.number === number);
    if (r.mergeRefusal) return { ok: false, ...r.mergeRefusal };
    if (r.mergeQueue) return { ok: false, status: 405, message: 'Changes must be made through the merge queue' };
    if (!pull || pull.headSha !== sha)
      return { ok: false, status: 409, message: 'Head branch was modified. Review and try the merge again.' };
    const mergeSha = this.commit(repo.fullName, {});
    this.closeMerged(r, pull, mergeSha);
    return { ok: true, sha: mergeSha };
  }

  /** A PR GitHub merged at this commit: out of the open listing, its closing issues closed. */
  private closeMerged(r: FakeRepo, pull: FakePull, mergeSha: string): void {
    const { number, headSha: sha } = pull;
    r.pulls = r.pulls.filter((p) => p.number !== number);
    r.merged.push({
      number,
      state: 'closed',
      merged: true,
      mergeCommitSha: mergeSha,
      author: pull.author,
      headSha: sha,
      reviews: [...pull.reviews],
    });
    // GitHub closes the issues the PR names with closing keywords.
    for (const n of parseClosingRefs(pull.body)) {
      const issue = r.issues.find((i) => i.number === n);
      if (issue) issue.open = false;
    }
  }

  /** LD03: the commits GitHub's merges API made here, each a branch's commit with a head merged onto it. */
  landCommits = new Map<string, { parent: string; head: string }>();
  /** Whether a head conflicts with a commit it is merged onto (nothing does, unless a test says so). */
  mergeConflicts: (repo: string, onto: string, head: string) => boolean = () => false;
  async mergeIntoBranch(repo: RepoRef, branch: string, head: string, _message: string): Promise<MergeResult> {
    const r = this.repo(repo.fullName);
    const b = r.branches[branch];
    if (!b) return { ok: false, status: 404, message: 'Base does not exist' };
    if (this.mergeConflicts(repo.fullName, b.head, head)) return { ok: false, status: 409, message: 'Merge conflict' };
    const sha = `m${this.landCommits.size + 1}${head.slice(0, 6)}`;
    this.landCommits.set(sha, { parent: b.head, head });
    r.files.set(sha, { ...(r.files.get(b.head) ?? {}) });
    b.head = sha;
    return { ok: true, sha };
  }

  /** Commits a writer pushed onto a branch (`pushToBranch`): each with its parents. */
  pushed = new Map<string, string[]>();
  /** A writer with push access adds a commit on top of a branch, as `git push` would. */
  pushToBranch(fullName: string, branch: string, files: Record<string, string> = {}): string {
    const r = this.repo(fullName);
    const b = r.branches[branch]!;
    const sha = `x${this.pushed.size + 1}${b.head.slice(0, 6)}`;
    this.pushed.set(sha, [b.head]);
    r.files.set(sha, { ...(r.files.get(b.head) ?? {}), ...files });
    b.head = sha;
    return sha;
  }

  async commitParents(repo: RepoRef, sha: string): Promise<string[] | null> {
    const land = this.landCommits.get(sha);
    if (land) return [land.parent, land.head];
    const pushed = this.pushed.get(sha);
    if (pushed) return pushed;
    const history = this.repo(repo.fullName).history;
    const i = history.indexOf(sha);
    return i < 0 ? null : history.slice(i - 1, i);
  }

  pushTokens: { repo: string; token: string }[] = [];
  async mintPushToken(repo: RepoRef): Promise<{ token: string; expiresAt: string }> {
    const token = `ghs_push_${this.pushTokens.length + 1}`;
    this.pushTokens.push({ repo: repo.fullName, token });
    return { token, expiresAt: new Date(Date.now() + 3600_000).toISOString() };
  }

  openedPulls: { repo: string; head: string; base: string; title: string; body: string }[] = [];
  async openPull(repo: RepoRef, pull: { head: string; base: string; title: string; body: string }): Promise<number> {
    this.openedPulls.push({ repo: repo.fullName, ...pull });
    return 1000 + this.openedPulls.length;
  }

  async dispatchWorkflow(repo: RepoRef, workflow: string, ref: string, inputs: Record<string, string>): Promise<void> {
    this.dispatches.push({ repo: repo.fullName, workflow, ref, inputs });
  }

  workflowRuns = new Map<string, WorkflowRunView>();

  async findWorkflowRun(_repo: RepoRef, _workflow: string, runId: string): Promise<FoundWorkflowRun> {
    const run = this.workflowRuns.get(runId);
    return run ? { kind: 'one', run: { actor: this.bot, triggeringActor: this.bot, ...run } } : { kind: 'none' };
  }

  async getWorkflowRun(_repo: RepoRef, id: number): Promise<WorkflowRunView | null> {
    const w = [...this.workflowRuns.values()].find((r) => r.id === id);
    return w ? { actor: this.bot, triggeringActor: this.bot, ...w } : null;
  }

  /** DP01: deployments as GitHub keeps them; statuses newest first. */
  deployments: {
    id: number;
    repo: string;
    sha: string;
    environment: string;
    payload: Record<string, unknown>;
    requiredContexts: string[];
    statuses: (DeploymentStatusWrite & { creator: string })[];
  }[] = [];
  deploymentRefusal?: { status: number; message: string };
  pinned: { repo: string; branch: string; sha: string }[] = [];
  environments = new Map<string, EnvironmentRules>();
  protectionAnswers: { repo: string; workflowRunId: number; answer: ProtectionAnswer }[] = [];
  /** Workflow runs whose protection request was already answered: GitHub refuses a second answer. */
  answered = new Set<number>();

  async createDeployment(repo: RepoRef, d: DeploymentWrite): Promise<DeploymentCreated> {
    if (this.deploymentRefusal) return { ok: false, ...this.deploymentRefusal };
    const id = this.nextId++;
    this.deployments.push({
      id,
      repo: repo.fullName,
      sha: d.sha,
      environment: d.environment,
      payload: d.payload,
      requiredContexts: d.requiredContexts,
      statuses: [],
    });
    return { ok: true, id };
  }

  async createDeploymentStatus(repo: RepoRef, id: number, s: DeploymentStatusWrite): Promise<void> {
    const d = this.deployments.find((x) => x.id === id && x.repo === repo.fullName);
    if (!d) throw Object.assign(new Error('Not Found'), { status: 404 });
    d.statuses.unshift({ ...s, creator: this.bot });
    // GitHub's auto_inactive: a success makes the environment's earlier successful deployments inactive.
    if (s.state === 'success')
      for (const o of this.deployments)
        if (o !== d && o.repo === d.repo && o.environment === d.environment && o.statuses[0]?.state === 'success')
          o.statuses.unshift({ state: 'inactive', description: '', creator: this.bot });
  }

  async listDeploymentStatuses(repo: RepoRef, id: number): Promise<DeploymentStatusView[]> {
    const d = this.deployments.find((x) => x.id === id && x.repo === repo.fullName);
    return (d?.statuses ?? []).map((s) => ({
      state: s.state,
      creator: s.creator,
      logUrl: s.logUrl ?? null,
      environmentUrl: s.environmentUrl ?? null,
    }));
  }

  async pinBranch(repo: RepoRef, branch: string, sha: string): Promise<void> {
    this.pinned.push({ repo: repo.fullName, branch, sha });
    this.repo(repo.fullName).branches[branch] = { head: sha, protected: false, base: sha };
  }

  async readEnvironmentRules(repo: RepoRef, environment: string): Promise<EnvironmentRules> {
    return this.environments.get(`${repo.fullName}:${environment}`) ?? { exists: false };
  }

  /** What each repository's installation grants (`yoke doctor`); a repository not listed here grants nothing. */
  grants = new Map<string, InstallationGrants>();
  secretNames = new Map<string, string[]>();
  branchPolicies = new Map<string, BranchPolicy>();

  async readInstallation(repo: RepoRef): Promise<InstallationGrants | null> {
    const known = [...this.repos.keys()].find((n) => n.toLowerCase() === repo.fullName.toLowerCase());
    return known
      ? (this.grants.get(known) ?? { id: this.repos.get(known)!.ref.installationId, permissions: {}, events: [] })
      : null;
  }

  async listSecretNames(repo: RepoRef): Promise<string[]> {
    return this.secretNames.get(repo.fullName) ?? [];
  }

  async readBranchPolicy(repo: RepoRef, environment: string): Promise<BranchPolicy | null> {
    if (!this.environments.has(`${repo.fullName}:${environment}`)) return null;
    return this.branchPolicies.get(`${repo.fullName}:${environment}`) ?? { kind: 'all' };
  }

  /** Each PR's inline review comments, oldest first. */
  reviewComments = new Map<string, ReviewCommentView[]>();
  async listReviewComments(repo: RepoRef, pr: number): Promise<ReviewCommentView[]> {
    return this.reviewComments.get(`${repo.fullName}#${pr}`) ?? [];
  }

  /** Runners published into each repository: `repo@sha256`. */
  runnersPublished = new Set<string>();
  async publishRunner(repo: RepoRef, sha256: string, _content: string): Promise<'published' | 'present'> {
    const key = `${repo.fullName}@${sha256}`;
    if (this.runnersPublished.has(key)) return 'present';
    this.runnersPublished.add(key);
    return 'published';
  }

  /** Each workflow run's artifacts (by workflow run id): a name and the zip archive it downloads as. */
  artifacts = new Map<number, { id: number; name: string; zip: Uint8Array; expired?: boolean }[]>();
  /** Downloads that fail (a fault, as a 5xx would be) this many more times. */
  failingDownloads = 0;
  downloads = 0;
  async listRunArtifacts(_repo: RepoRef, workflowRunId: number): Promise<ArtifactView[]> {
    return (this.artifacts.get(workflowRunId) ?? []).map((a) => ({
      id: a.id,
      name: a.name,
      sizeInBytes: a.zip.length,
      expired: a.expired ?? false,
    }));
  }

  async downloadArtifact(_repo: RepoRef, artifactId: number): Promise<Uint8Array | null> {
    this.downloads++;
    if (this.failingDownloads > 0) {
      this.failingDownloads--;
      throw Object.assign(new Error('Server Error'), { status: 502 });
    }
    for (const list of this.artifacts.values()) for (const a of list) if (a.id === artifactId) return a.zip;
    return null;
  }

  branchMoves: { repo: string; branch: string; sha: string }[] = [];
  deletedBranches: { repo: string; branch: string }[] = [];
  async moveBranch(repo: RepoRef, branch: string, sha: string): Promise<RefMove> {
    const r = this.repo(repo.fullName);
    if (branch === 'main') return this.fastForwardMain(r, sha);
    const pull = r.pulls.find((p) => (p.headRef ?? `pr-${p.number}`) === branch);
    const b = r.branches[branch];
    if (!pull && !b) return { ok: false, status: 422, message: 'Reference does not exist' };
    this.branchMoves.push({ repo: repo.fullName, branch, sha });
    if (pull) pull.headSha = sha;
    if (b) b.head = sha;
    return { ok: true };
  }

  /**
   * LD03: the default branch moves only as a fast-forward along the commits the merges API made from where it is
   * (GitHub's refusal otherwise); a PR whose head those commits merged is marked merged at the one that merged it.
   */
  private fastForwardMain(r: FakeRepo, sha: string): RefMove {
    if (r.branchRule) return { ok: false, ...r.branchRule };
    const tip = r.history.at(-1)!;
    const chain: string[] = [];
    for (let at = sha; at !== tip;) {
      const c = this.landCommits.get(at);
      if (!c) return { ok: false, status: 422, message: 'Update is not a fast forward' };
      chain.unshift(at);
      at = c.parent;
    }
    this.branchMoves.push({ repo: r.ref.fullName, branch: 'main', sha });
    for (const c of chain) {
      r.history.push(c);
      const pull = r.pulls.find((p) => p.headSha === this.landCommits.get(c)!.head);
      if (pull) this.closeMerged(r, pull, c);
    }
    return { ok: true };
  }

  async deleteBranch(repo: RepoRef, branch: string): Promise<void> {
    this.deletedBranches.push({ repo: repo.fullName, branch });
    delete this.repo(repo.fullName).branches[branch];
  }

  /** Workflow runs waiting at a protection rule, with the environments each waits on. */
  waitingRuns: { repo: string; run: WorkflowRunView; environments: string[] }[] = [];
  async listWaitingRuns(repo: RepoRef): Promise<WorkflowRunView[]> {
    return this.waitingRuns.filter((w) => w.repo === repo.fullName).map((w) => w.run);
  }

  async listPendingDeployments(repo: RepoRef, workflowRunId: number): Promise<string[]> {
    return this.waitingRuns.find((w) => w.repo === repo.fullName && w.run.id === workflowRunId)?.environments ?? [];
  }

  async reviewProtectionRule(
    repo: RepoRef,
    workflowRunId: number,
    answer: ProtectionAnswer,
  ): Promise<{ ok: true } | { ok: false; status: number | null; message: string }> {
    if (this.answered.has(workflowRunId))
      return { ok: false, status: 422, message: 'No pending deployment protection rule' };
    this.answered.add(workflowRunId);
    this.protectionAnswers.push({ repo: repo.fullName, workflowRunId, answer });
    return { ok: true };
  }

  cancelled: number[] = [];
  async cancelWorkflowRun(_repo: RepoRef, id: number): Promise<void> {
    this.cancelled.push(id);
  }

  async labelledBy(repo: RepoRef, number: number, label: string): Promise<{ login: string; isBot: boolean } | null> {
    const login = this.repo(repo.fullName).issues.find((i) => i.number === number)?.labelledBy?.[label];
    return login ? { login, isBot: login.endsWith('[bot]') } : null;
  }

  async listIssuesUpdatedSince(
    repo: RepoRef,
    since: number,
  ): Promise<{ number: number; labels: string[]; updatedAt: number }[]> {
    return this.repo(repo.fullName)
      .issues.filter((i) => (i.updatedAt ?? 0) >= since)
      .sort((a, b) => (a.updatedAt ?? 0) - (b.updatedAt ?? 0))
      .map((i) => ({ number: i.number, labels: [...i.labels], updatedAt: i.updatedAt ?? 0 }));
  }

  async findOpenIssue(repo: RepoRef, label: string): Promise<number | null> {
    return this.repo(repo.fullName).issues.find((i) => i.open && i.labels.includes(label))?.number ?? null;
  }

  /** Check runs as GitHub would hold them, each with every write it received. */
  checkRuns: { id: number; repo: string; headSha: string; current: CheckRunWrite; writes: CheckRunWrite[] }[] = [];

  async createCheckRun(repo: RepoRef, headSha: string, check: CheckRunWrite): Promise<number> {
    const id = this.nextId++;
    this.checkRuns.push({ id, repo: repo.fullName, headSha, current: check, writes: [check] });
    return id;
  }

  async updateCheckRun(_repo: RepoRef, id: number, check: CheckRunWrite): Promise<void> {
    const c = this.checkRuns.find((r) => r.id === id);
    if (!c) throw new Error(`no check run ${id}`);
    c.current = check;
    c.writes.push(check);
  }
}
