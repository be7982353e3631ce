import { createHash, createHmac, createPublicKey, randomBytes, randomUUID, verify as verifySignature, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { components } from '@octokit/openapi-types';
import { parseClosingRefs } from '../forge/types.js';
import { ActionsRunner, type WorkflowRunRecord } from './actions-runner.js';
import { createBareRepo, readFileAt, revParse, squashMerge } from './git.js';
import { HttpError } from './http-error.js';
import { OidcIssuer } from './oidc-issuer.js';

// The embedded forge: the part of GitHub's REST API that yoke (and the demo
// agent) use, on loopback, over real git repositories on disk. Responses are
// typed with @octokit/openapi-types and carry ETags (304 on a match),
// pagination links and rate-limit headers. It plays GitHub Actions too.

type Schemas = components['schemas'];

export interface ForgeUser {
  login: string;
  id: number;
  type: 'User' | 'Bot';
}

interface Label {
  name: string;
  color: string;
}

interface Issue {
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
  pull: null | {
    headRef: string;
    headSha: string;
    baseRef: string;
    draft: boolean;
    merged: boolean;
    mergedAt: number | null;
    mergeCommitSha: string | null;
  };
}

interface Comment {
  id: number;
  issueNumber: number;
  user: ForgeUser;
  body: string;
  createdAt: number;
  updatedAt: number;
  reactions: { id: number; content: string; user: ForgeUser; createdAt: number }[];
}

interface Review {
  id: number;
  pr: number;
  user: ForgeUser;
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED';
  body: string;
  commitId: string;
  submittedAt: number;
}

export interface ForgeRepo {
  id: number;
  owner: ForgeUser;
  name: string;
  fullName: string;
  defaultBranch: string;
  gitDir: string;
  installationId: number;
  collaborators: Record<string, 'admin' | 'maintain' | 'write' | 'triage' | 'read'>;
  issues: Map<number, Issue>;
  nextNumber: number;
  comments: Comment[];
  reviews: Review[];
  labels: Map<string, Label>;
  createdAt: number;
}

export interface ForgeOptions {
  dataDir: string;
  /** The app's public key (PEM) that app JWTs must verify against. */
  appId: number;
  appSlug: string;
  appPublicKey: string;
  /** Extra environment for the workflow runs the forge starts. */
  runnerEnv?: Record<string, string>;
  now?: () => number;
}

interface Ctx {
  params: Record<string, string>;
  query: URLSearchParams;
  body: Record<string, unknown>;
  actor: ForgeUser | null;
  auth: 'app' | 'installation' | 'user' | 'workflow' | 'none';
  installationId: number | null;
  accept: string;
}

type Answer = { status: number; body?: unknown; headers?: Record<string, string>; raw?: string };
type Handler = (ctx: Ctx) => Answer | Promise<Answer>;

export interface RouteDef {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  auth: 'app' | 'repo' | 'none';
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z'));
const isoNow = (ms: number): string => iso(ms)!;

export class EmbeddedForge {
  readonly repos = new Map<string, ForgeRepo>();
  readonly users = new Map<string, ForgeUser>();
  readonly routes: (RouteDef & { re: RegExp; keys: string[]; handler: Handler })[] = [];
  /** Every response served, for tests that check shapes against GitHub's description. */
  readonly served: { method: string; route: string; status: number; body: unknown; request: unknown }[] = [];
  recordResponses = false;
  /** Where webhooks go, signed as GitHub signs them. Deliveries that fail are dropped: yoke's poll catches up. */
  webhook: { url: string; secret: string } | null = null;
  readonly deliveries: { id: string; event: string; action: string; status: number }[] = [];
  /** Test hooks: run just before GitHub would act. */
  readonly hooks: { beforeMerge?: (repo: ForgeRepo, pr: number) => void } = {};
  readonly runner: ActionsRunner;
  readonly oidc: OidcIssuer;
  private server: Server | null = null;
  private appKey: KeyObject;
  private tokens = new Map<string, { kind: 'installation' | 'user' | 'workflow'; user: ForgeUser; installationId: number | null; expiresAt: number; repo?: string }>();
  private seq = 1000;
  private rate = new Map<string, number>();
  url = '';
  readonly now: () => number;

  constructor(readonly opts: ForgeOptions) {
    this.now = opts.now ?? (() => Date.now());
    this.appKey = createPublicKey(opts.appPublicKey);
    this.oidc = new OidcIssuer('http://placeholder');
    this.runner = new ActionsRunner({
      forge: this,
      workDir: join(opts.dataDir, 'runner'),
      extraEnv: opts.runnerEnv ?? {},
    });
    this.user(`${opts.appSlug}[bot]`, 'Bot');
    this.defineRoutes();
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
    return this.user(`${this.opts.appSlug}[bot]`, 'Bot');
  }

  /** A personal access token for a user (maintainers, the demo agent on the command launcher). */
  personalToken(login: string): string {
    const token = `ghp_${randomBytes(12).toString('hex')}`;
    this.tokens.set(token, { kind: 'user', user: this.user(login), installationId: null, expiresAt: Number.MAX_SAFE_INTEGER });
    return token;
  }

  /** The GITHUB_TOKEN of one workflow run. */
  workflowToken(repo: string): string {
    const token = `ghs_wf${randomBytes(12).toString('hex')}`;
    this.tokens.set(token, { kind: 'workflow', user: this.user('github-actions[bot]', 'Bot'), installationId: null, expiresAt: this.now() + 6 * 3600_000, repo });
    return token;
  }

  createRepo(fullName: string, opts: { files: Record<string, string>; installationId: number; defaultBranch?: string; collaborators?: ForgeRepo['collaborators'] }): ForgeRepo {
    const [ownerLogin, name] = fullName.split('/') as [string, string];
    const gitDir = join(this.opts.dataDir, 'git', `${fullName}.git`);
    const branch = opts.defaultBranch ?? 'main';
    createBareRepo(gitDir, branch, opts.files, 'Initial commit');
    const repo: ForgeRepo = {
      id: this.nextId(),
      owner: this.user(ownerLogin),
      name,
      fullName,
      defaultBranch: branch,
      gitDir,
      installationId: opts.installationId,
      collaborators: { [ownerLogin]: 'admin', ...opts.collaborators },
      issues: new Map(),
      nextNumber: 1,
      comments: [],
      reviews: [],
      labels: new Map(),
      createdAt: this.now(),
    };
    this.repos.set(fullName, repo);
    return repo;
  }

  createIssue(repo: ForgeRepo, by: ForgeUser, title: string, body: string, labels: string[] = []): Issue {
    const t = this.now();
    const issue: Issue = { number: repo.nextNumber++, title, body, user: by, state: 'open', stateReason: null, labels: [], createdAt: t, updatedAt: t, closedAt: null, pull: null };
    for (const l of labels) this.addLabel(repo, issue, l);
    repo.issues.set(issue.number, issue);
    return issue;
  }

  addComment(repo: ForgeRepo, issue: Issue, by: ForgeUser, body: string): Comment {
    const t = this.now();
    const c: Comment = { id: this.nextId(), issueNumber: issue.number, user: by, body, createdAt: t, updatedAt: t, reactions: [] };
    repo.comments.push(c);
    issue.updatedAt = t;
    this.emit('issue_comment', 'created', repo, by, { issue: this.issueJson(repo, issue), comment: this.commentJson(repo, c) });
    return c;
  }

  /** Sends a webhook delivery (fire and forget), with the headers GitHub sends. */
  emit(event: string, action: string, repo: ForgeRepo, sender: ForgeUser, fields: Record<string, unknown>): void {
    const hook = this.webhook;
    if (!hook) return;
    const payload = JSON.stringify({ action, ...fields, repository: this.repoJson(repo), installation: { id: repo.installationId, node_id: `IN_${repo.installationId}` }, sender: this.simpleUser(sender) });
    const id = randomUUID();
    const record = { id, event, action, status: 0 };
    this.deliveries.push(record);
    fetch(hook.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': event,
        'x-github-delivery': id,
        'x-hub-signature-256': `sha256=${createHmac('sha256', hook.secret).update(payload).digest('hex')}`,
        'user-agent': 'GitHub-Hookshot/yoke-sandbox',
      },
      body: payload,
    }).then(
      (res) => (record.status = res.status),
      () => (record.status = -1),
    );
  }

  private addLabel(repo: ForgeRepo, issue: Issue, name: string): void {
    if (!repo.labels.has(name)) repo.labels.set(name, { name, color: 'ededed' });
    if (!issue.labels.includes(name)) issue.labels.push(name);
    issue.updatedAt = this.now();
  }

  /** Follows pushes: a PR's head is its branch; a moved branch is an update. */
  private syncPulls(repo: ForgeRepo): void {
    for (const issue of repo.issues.values()) {
      if (!issue.pull || issue.state !== 'open') continue;
      const sha = revParse(repo.gitDir, `refs/heads/${issue.pull.headRef}`);
      if (sha && sha !== issue.pull.headSha) {
        issue.pull.headSha = sha;
        issue.updatedAt = this.now();
      }
    }
  }

  // ---- JSON shapes (typed against GitHub's OpenAPI description) ----

  private apiUrl(path: string): string {
    return `${this.url}/api/v3${path}`;
  }

  private simpleUser(u: ForgeUser): Schemas['simple-user'] {
    const api = this.apiUrl(`/users/${u.login}`);
    return {
      login: u.login,
      id: u.id,
      node_id: `U_${u.id}`,
      avatar_url: `${this.url}/avatars/${u.login}`,
      gravatar_id: '',
      url: api,
      html_url: `${this.url}/${u.login}`,
      followers_url: `${api}/followers`,
      following_url: `${api}/following{/other_user}`,
      gists_url: `${api}/gists{/gist_id}`,
      starred_url: `${api}/starred{/owner}{/repo}`,
      subscriptions_url: `${api}/subscriptions`,
      organizations_url: `${api}/orgs`,
      repos_url: `${api}/repos`,
      events_url: `${api}/events{/privacy}`,
      received_events_url: `${api}/received_events`,
      type: u.type,
      site_admin: false,
    };
  }

  private repoJson(r: ForgeRepo) {
    return {
      id: r.id,
      node_id: `R_${r.id}`,
      name: r.name,
      full_name: r.fullName,
      owner: this.simpleUser(r.owner),
      private: true,
      html_url: `${this.url}/${r.fullName}`,
      description: 'yoke sandbox demo repository',
      fork: false,
      url: this.apiUrl(`/repos/${r.fullName}`),
      default_branch: r.defaultBranch,
      archived: false,
      disabled: false,
      visibility: 'private',
      open_issues_count: [...r.issues.values()].filter((i) => i.state === 'open').length,
      created_at: isoNow(r.createdAt),
      updated_at: isoNow(this.now()),
      pushed_at: isoNow(this.now()),
      permissions: { admin: false, maintain: false, push: true, triage: true, pull: true },
    } satisfies Partial<Schemas['full-repository']>;
  }

  private labelJson(r: ForgeRepo, name: string) {
    const l = r.labels.get(name) ?? { name, color: 'ededed' };
    return {
      id: Number.parseInt(createHash('sha1').update(name).digest('hex').slice(0, 8), 16),
      node_id: `LA_${name}`,
      url: this.apiUrl(`/repos/${r.fullName}/labels/${encodeURIComponent(name)}`),
      name: l.name,
      color: l.color,
      default: false,
      description: '',
    } satisfies Schemas['label'];
  }

  private issueJson(r: ForgeRepo, i: Issue) {
    const base = `/repos/${r.fullName}/issues/${i.number}`;
    return {
      id: r.id * 100_000 + i.number,
      node_id: `I_${r.id}_${i.number}`,
      url: this.apiUrl(base),
      repository_url: this.apiUrl(`/repos/${r.fullName}`),
      labels_url: this.apiUrl(`${base}/labels{/name}`),
      comments_url: this.apiUrl(`${base}/comments`),
      events_url: this.apiUrl(`${base}/events`),
      html_url: `${this.url}/${r.fullName}/${i.pull ? 'pull' : 'issues'}/${i.number}`,
      number: i.number,
      state: i.state,
      state_reason: i.stateReason,
      title: i.title,
      body: i.body,
      user: this.simpleUser(i.user),
      labels: i.labels.map((l) => this.labelJson(r, l)),
      assignee: null,
      assignees: [],
      milestone: null,
      locked: false,
      active_lock_reason: null,
      comments: r.comments.filter((c) => c.issueNumber === i.number).length,
      created_at: isoNow(i.createdAt),
      updated_at: isoNow(i.updatedAt),
      closed_at: iso(i.closedAt),
      author_association: this.association(r, i.user),
      ...(i.pull
        ? {
            pull_request: {
              url: this.apiUrl(`/repos/${r.fullName}/pulls/${i.number}`),
              html_url: `${this.url}/${r.fullName}/pull/${i.number}`,
              diff_url: `${this.url}/${r.fullName}/pull/${i.number}.diff`,
              patch_url: `${this.url}/${r.fullName}/pull/${i.number}.patch`,
              merged_at: iso(i.pull.mergedAt),
            },
            draft: i.pull.draft,
          }
        : {}),
    } satisfies Schemas['issue'];
  }

  private association(r: ForgeRepo, u: ForgeUser): Schemas['author-association'] {
    if (u.login === r.owner.login) return 'OWNER';
    return r.collaborators[u.login] ? 'COLLABORATOR' : 'NONE';
  }

  private pullJson(r: ForgeRepo, i: Issue) {
    const p = i.pull!;
    return { ...this.pullFields(r, i), head: this.branchJson(r, p.headRef, p.headSha), base: this.branchJson(r, p.baseRef, revParse(r.gitDir, `refs/heads/${p.baseRef}`) ?? '') };
  }

  private branchJson(r: ForgeRepo, ref: string, sha: string) {
    return {
      ...({ label: `${r.owner.login}:${ref}`, ref, sha, user: this.simpleUser(r.owner) } satisfies Partial<Schemas['pull-request']['head']>),
      repo: this.repoJson(r),
    };
  }

  private pullFields(r: ForgeRepo, i: Issue) {
    const p = i.pull!;
    return {
      url: this.apiUrl(`/repos/${r.fullName}/pulls/${i.number}`),
      id: r.id * 100_000 + i.number,
      node_id: `PR_${r.id}_${i.number}`,
      html_url: `${this.url}/${r.fullName}/pull/${i.number}`,
      diff_url: `${this.url}/${r.fullName}/pull/${i.number}.diff`,
      patch_url: `${this.url}/${r.fullName}/pull/${i.number}.patch`,
      issue_url: this.apiUrl(`/repos/${r.fullName}/issues/${i.number}`),
      number: i.number,
      state: i.state,
      locked: false,
      title: i.title,
      user: this.simpleUser(i.user),
      body: i.body,
      labels: i.labels.map((l) => this.labelJson(r, l)),
      milestone: null,
      created_at: isoNow(i.createdAt),
      updated_at: isoNow(i.updatedAt),
      closed_at: iso(i.closedAt),
      merged_at: iso(p.mergedAt),
      merge_commit_sha: p.mergeCommitSha,
      assignee: null,
      assignees: [],
      requested_reviewers: [],
      requested_teams: [],
      author_association: this.association(r, i.user),
      draft: p.draft,
      merged: p.merged,
    } satisfies Partial<Omit<Schemas['pull-request'], 'head' | 'base'>>;
  }

  private commentJson(r: ForgeRepo, c: Comment) {
    return {
      id: c.id,
      node_id: `IC_${c.id}`,
      url: this.apiUrl(`/repos/${r.fullName}/issues/comments/${c.id}`),
      html_url: `${this.url}/${r.fullName}/${r.issues.get(c.issueNumber)?.pull ? 'pull' : 'issues'}/${c.issueNumber}#issuecomment-${c.id}`,
      issue_url: this.apiUrl(`/repos/${r.fullName}/issues/${c.issueNumber}`),
      body: c.body,
      user: this.simpleUser(c.user),
      created_at: isoNow(c.createdAt),
      updated_at: isoNow(c.updatedAt),
      author_association: this.association(r, c.user),
    } satisfies Schemas['issue-comment'];
  }

  private reviewJson(r: ForgeRepo, v: Review) {
    return {
      id: v.id,
      node_id: `PRR_${v.id}`,
      user: this.simpleUser(v.user),
      body: v.body,
      state: v.state,
      html_url: `${this.url}/${r.fullName}/pull/${v.pr}#pullrequestreview-${v.id}`,
      pull_request_url: this.apiUrl(`/repos/${r.fullName}/pulls/${v.pr}`),
      _links: { html: { href: `${this.url}/${r.fullName}/pull/${v.pr}` }, pull_request: { href: this.apiUrl(`/repos/${r.fullName}/pulls/${v.pr}`) } },
      submitted_at: isoNow(v.submittedAt),
      commit_id: v.commitId,
      author_association: this.association(r, v.user),
    } satisfies Schemas['pull-request-review'];
  }

  workflowRunJson(r: ForgeRepo, w: WorkflowRunRecord) {
    return {
      id: w.id,
      name: w.workflowName,
      node_id: `WFR_${w.id}`,
      head_branch: w.ref,
      head_sha: w.headSha,
      path: `.github/workflows/${w.workflow}`,
      display_title: w.displayTitle,
      run_number: w.runNumber,
      event: 'workflow_dispatch',
      status: w.status,
      conclusion: w.conclusion,
      workflow_id: w.workflowId,
      url: this.apiUrl(`/repos/${r.fullName}/actions/runs/${w.id}`),
      html_url: `${this.url}/${r.fullName}/actions/runs/${w.id}`,
      created_at: isoNow(w.createdAt),
      updated_at: isoNow(w.updatedAt),
      run_started_at: iso(w.startedAt) ?? undefined,
      run_attempt: 1,
    } satisfies Partial<Schemas['workflow-run']>;
  }

  // ---- routing ----

  private on(method: RouteDef['method'], path: string, auth: RouteDef['auth'], handler: Handler): void {
    const keys: string[] = [];
    const re = new RegExp(
      '^' +
        path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_m, k: string) => {
          keys.push(k);
          return k === 'path' ? '(.+)' : '([^/]+)';
        }) +
        '$',
    );
    this.routes.push({ method, path, auth, re, keys, handler });
  }

  private repoOf(ctx: Ctx): ForgeRepo {
    const r = this.repos.get(`${ctx.params.owner}/${ctx.params.repo}`);
    if (!r) throw new HttpError(404, 'Not Found');
    if (ctx.auth === 'installation' && ctx.installationId !== r.installationId) throw new HttpError(404, 'Not Found');
    this.syncPulls(r);
    return r;
  }

  private issueOf(r: ForgeRepo, n: string | undefined): Issue {
    const i = r.issues.get(Number(n));
    if (!i) throw new HttpError(404, 'Not Found');
    return i;
  }

  private pullOf(r: ForgeRepo, n: string | undefined): Issue {
    const i = this.issueOf(r, n);
    if (!i.pull) throw new HttpError(404, 'Not Found');
    return i;
  }

  private page<T>(ctx: Ctx, items: T[], path: string): Answer {
    const per = Math.min(100, Math.max(1, Number(ctx.query.get('per_page') ?? 30)));
    const page = Math.max(1, Number(ctx.query.get('page') ?? 1));
    const last = Math.max(1, Math.ceil(items.length / per));
    const headers: Record<string, string> = {};
    const link = (p: number, rel: string) => {
      const q = new URLSearchParams(ctx.query);
      q.set('page', String(p));
      q.set('per_page', String(per));
      return `<${this.apiUrl(path)}?${q}>; rel="${rel}"`;
    };
    const links = [];
    if (page < last) links.push(link(page + 1, 'next'), link(last, 'last'));
    if (page > 1) links.push(link(1, 'first'), link(page - 1, 'prev'));
    if (links.length) headers.link = links.join(', ');
    return { status: 200, body: items.slice((page - 1) * per, page * per), headers };
  }

  private canWrite(r: ForgeRepo, ctx: Ctx): boolean {
    if (ctx.auth === 'installation') return true;
    if (ctx.auth === 'workflow') return true;
    const p = ctx.actor ? r.collaborators[ctx.actor.login] : undefined;
    return p === 'admin' || p === 'maintain' || p === 'write';
  }

  private defineRoutes(): void {
    this.on('GET', '/app', 'app', () => ({
      status: 200,
      body: { id: this.opts.appId, slug: this.opts.appSlug, node_id: `A_${this.opts.appId}`, name: this.opts.appSlug, owner: this.simpleUser(this.user('sandbox')) },
    }));
    this.on('GET', '/app/installations', 'app', (ctx) => {
      const ids = [...new Set([...this.repos.values()].map((r) => r.installationId))].sort((a, b) => a - b);
      return this.page(
        ctx,
        ids.map((id) => {
          const owner = [...this.repos.values()].find((r) => r.installationId === id)!.owner;
          return {
            id,
            account: this.simpleUser(owner),
            app_id: this.opts.appId,
            app_slug: this.opts.appSlug,
            target_id: owner.id,
            target_type: 'Organization',
            repository_selection: 'selected',
            access_tokens_url: this.apiUrl(`/app/installations/${id}/access_tokens`),
            repositories_url: this.apiUrl('/installation/repositories'),
            html_url: `${this.url}/settings/installations/${id}`,
            permissions: { contents: 'write', issues: 'write', pull_requests: 'write', actions: 'write', metadata: 'read' },
            events: ['issue_comment', 'issues', 'pull_request', 'pull_request_review', 'push', 'workflow_run'],
            created_at: isoNow(this.now()),
            updated_at: isoNow(this.now()),
            single_file_name: null,
            suspended_by: null,
            suspended_at: null,
          } satisfies Partial<Schemas['installation']>;
        }),
        '/app/installations',
      );
    });
    this.on('POST', '/app/installations/{installation_id}/access_tokens', 'app', (ctx) => {
      const id = Number(ctx.params.installation_id);
      if (![...this.repos.values()].some((r) => r.installationId === id)) throw new HttpError(404, 'Not Found');
      const token = `ghs_${randomBytes(16).toString('hex')}`;
      const expiresAt = this.now() + 3600_000;
      this.tokens.set(token, { kind: 'installation', user: this.botUser, installationId: id, expiresAt });
      return {
        status: 201,
        body: {
          token,
          expires_at: isoNow(expiresAt),
          permissions: { contents: 'write', issues: 'write', pull_requests: 'write', actions: 'write', metadata: 'read' },
          repository_selection: 'selected',
        } satisfies Partial<Schemas['installation-token']>,
      };
    });
    this.on('GET', '/installation/repositories', 'repo', (ctx) => {
      if (ctx.auth !== 'installation') throw new HttpError(403, 'This endpoint needs an installation access token');
      const repos = [...this.repos.values()].filter((r) => r.installationId === ctx.installationId).map((r) => this.repoJson(r));
      const answer = this.page(ctx, repos, '/installation/repositories');
      return { ...answer, body: { total_count: repos.length, repositories: answer.body } };
    });
    this.on('GET', '/repos/{owner}/{repo}', 'repo', (ctx) => ({ status: 200, body: this.repoJson(this.repoOf(ctx)) }));
    this.on('GET', '/repos/{owner}/{repo}/contents/{path}', 'repo', (ctx) => {
      const r = this.repoOf(ctx);
      const ref = ctx.query.get('ref') ?? r.defaultBranch;
      const path = decodeURIComponent(ctx.params.path!);
      const content = readFileAt(r.gitDir, ref, path);
      if (content === null) throw new HttpError(404, 'Not Found');
      if (ctx.accept.includes('raw')) return { status: 200, raw: content, headers: { 'content-type': 'text/plain; charset=utf-8' } };
      return {
        status: 200,
        body: {
          type: 'file',
          encoding: 'base64',
          size: Buffer.byteLength(content),
          name: path.split('/').pop()!,
          path,
          content: Buffer.from(content).toString('base64'),
          sha: createHash('sha1').update(content).digest('hex'),
          url: this.apiUrl(`/repos/${r.fullName}/contents/${path}`),
          git_url: null,
          html_url: null,
          download_url: null,
          _links: { self: this.apiUrl(`/repos/${r.fullName}/contents/${path}`), git: null, html: null },
        } satisfies Schemas['content-file'],
      };
    });
    this.on('GET', '/repos/{owner}/{repo}/issues', 'repo', (ctx) => {
      const r = this.repoOf(ctx);
      const state = ctx.query.get('state') ?? 'open';
      const labels = (ctx.query.get('labels') ?? '').split(',').filter(Boolean);
      const sort = ctx.query.get('sort') ?? 'created';
      const dir = ctx.query.get('direction') ?? 'desc';
      let items = [...r.issues.values()].filter((i) => state === 'all' || i.state === state).filter((i) => labels.every((l) => i.labels.includes(l)));
      const key = (i: Issue) => (sort === 'updated' ? i.updatedAt : i.createdAt) * 100_000 + i.number;
      items = items.sort((a, b) => (dir === 'asc' ? key(a) - key(b) : key(b) - key(a)));
      return this.page(ctx, items.map((i) => this.issueJson(r, i)), `/repos/${r.fullName}/issues`);
    });
    this.on('POST', '/repos/{owner}/{repo}/issues', 'repo', (ctx) => {
      const r = this.repoOf(ctx);
      const title = String(ctx.body.title ?? '');
      if (!title) throw new HttpError(422, 'Validation Failed: title is missing');
      const issue = this.createIssue(r, ctx.actor!, title, String(ctx.body.body ?? ''), (ctx.body.labels as string[] | undefined) ?? []);
      return { status: 201, body: this.issueJson(r, issue) };
    });
    this.on('GET', '/repos/{owner}/{repo}/issues/{issue_number}', 'repo', (ctx) => {
      const r = this.repoOf(ctx);
      return { status: 200, body: this.issueJson(r, this.issueOf(r, ctx.params.issue_number)) };
    });
    this.on('GET', '/repos/{owner}/{repo}/issues/{issue_number}/comments', 'repo', (ctx) => {
      const r = this.repoOf(ctx);
      const i = this.issueOf(r, ctx.params.issue_number);
      return this.page(ctx, r.comments.filter((c) => c.issueNumber === i.number).map((c) => this.commentJson(r, c)), `/repos/${r.fullName}/issues/${i.number}/comments`);
    });
    this.on('POST', '/repos/{owner}/{repo}/issues/{issue_number}/comments', 'repo', (ctx) => {
      const r = this.repoOf(ctx);
      const i = this.issueOf(r, ctx.params.issue_number);
      const body = String(ctx.body.body ?? '');
      if (!body) throw new HttpError(422, 'Validation Failed: body is missing');
      return { status: 201, body: this.commentJson(r, this.addComment(r, i, ctx.actor!, body)) };
    });
    this.on('GET', '/repos/{owner}/{repo}/issues/comments', 'repo', (ctx) => {
      const r = this.repoOf(ctx);
      const dir = ctx.query.get('direction') ?? 'asc';
      const sorted = [...r.comments].sort((a, b) => (dir === 'desc' ? b.createdAt - a.createdAt || b.id - a.id : a.createdAt - b.createdAt || a.id - b.id));
      return this.page(ctx, sorted.map((c) => this.commentJson(r, c)), `/repos/${r.fullName}/issues/comments`);
    });
    this.on('POST', '/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions', 'repo', (ctx) => {
      const r = this.repoOf(ctx);
      const c = r.comments.find((x) => x.id === Number(ctx.params.comment_id));
      if (!c) throw new HttpError(404, 'Not Found');
      const content = String(ctx.body.content ?? '');
      if (!['+1', '-1', 'laugh', 'confused', 'heart', 'hooray', 'rocket', 'eyes'].includes(content)) throw new HttpError(422, 'Validation Failed: content');
      const reaction = { id: this.nextId(), content, user: ctx.actor!, createdAt: this.now() };
      c.reactions.push(reaction);
      return {
        status: 201,
        body: { id: reaction.id, node_id: `REA_${reaction.id}`, user: this.simpleUser(reaction.user), content: content as Schemas['reaction']['content'], created_at: isoNow(reaction.createdAt) } satisfies Schemas['reaction'],
      };
    });
    this.on('POST', '/repos/{owner}/{repo}/issues/{issue_number}/labels', 'repo', (ctx) => {
      const r = this.repoOf(ctx);
      const i = this.issueOf(r, ctx.params.issue_number);
      if (!this.canWrite(r, ctx)) throw new HttpError(403, 'Resource not accessible by integration');
      for (const l of (ctx.body.labels as string[] | undefined) ?? []) {
        this.addLabel(r, i, l);
        if (i.pull) this.emit('pull_request', 'labeled', r, ctx.actor!, { number: i.number, pull_request: this.pullJson(r, i), label: this.labelJson(r, l) });
        else this.emit('issues', 'labeled', r, ctx.actor!, { issue: this.issueJson(r, i), label: this.labelJson(r, l) });
      }
      return { status: 200, body: i.labels.map((l) => this.labelJson(r, l)) };
    });
    this.on('GET', '/repos/{owner}/{repo}/pulls', 'repo', (ctx) => {
      const r = this.repoOf(ctx);
      const state = ctx.query.get('state') ?? 'open';
      const items = [...r.issues.values()].filter((i) => i.pull && (state === 'all' || i.state === state)).sort((a, b) => b.number - a.number);
      // The listing is GitHub's pull-request-simple: no merge state.
      return this.page(ctx, items.map((i) => ({ ...this.pullJson(r, i), merged: undefined })), `/repos/${r.fullName}/pulls`);
    });
    this.on('POST', '/repos/{owner}/{repo}/pulls', 'repo', (ctx) => {
      const r = this.repoOf(ctx);
      const head = String(ctx.body.head ?? '').replace(/^[^:]+:/, '');
      const base = String(ctx.body.base ?? r.defaultBranch);
      const sha = revParse(r.gitDir, `refs/heads/${head}`);
      if (!sha) throw new HttpError(422, `Validation Failed: head branch ${head} does not exist`);
      if ([...r.issues.values()].some((i) => i.pull && i.state === 'open' && i.pull.headRef === head)) throw new HttpError(422, `A pull request already exists for ${head}.`);
      const issue = this.createIssue(r, ctx.actor!, String(ctx.body.title ?? head), String(ctx.body.body ?? ''));
      issue.pull = { headRef: head, headSha: sha, baseRef: base, draft: Boolean(ctx.body.draft), merged: false, mergedAt: null, mergeCommitSha: null };
      this.emit('pull_request', 'opened', r, ctx.actor!, { number: issue.number, pull_request: this.pullJson(r, issue) });
      return { status: 201, body: this.pullJson(r, issue) };
    });
    this.on('GET', '/repos/{owner}/{repo}/pulls/{pull_number}', 'repo', (ctx) => {
      const r = this.repoOf(ctx);
      return { status: 200, body: this.pullJson(r, this.pullOf(r, ctx.params.pull_number)) };
    });
    this.on('GET', '/repos/{owner}/{repo}/pulls/{pull_number}/reviews', 'repo', (ctx) => {
      const r = this.repoOf(ctx);
      const i = this.pullOf(r, ctx.params.pull_number);
      return this.page(ctx, r.reviews.filter((v) => v.pr === i.number).map((v) => this.reviewJson(r, v)), `/repos/${r.fullName}/pulls/${i.number}/reviews`);
    });
    this.on('POST', '/repos/{owner}/{repo}/pulls/{pull_number}/reviews', 'repo', (ctx) => {
      const r = this.repoOf(ctx);
      const i = this.pullOf(r, ctx.params.pull_number);
      const event = String(ctx.body.event ?? 'COMMENT');
      const state = event === 'APPROVE' ? 'APPROVED' : event === 'REQUEST_CHANGES' ? 'CHANGES_REQUESTED' : 'COMMENTED';
      const v: Review = { id: this.nextId(), pr: i.number, user: ctx.actor!, state, body: String(ctx.body.body ?? ''), commitId: i.pull!.headSha, submittedAt: this.now() };
      r.reviews.push(v);
      i.updatedAt = this.now();
      return { status: 200, body: this.reviewJson(r, v) };
    });
    this.on('PUT', '/repos/{owner}/{repo}/pulls/{pull_number}/merge', 'repo', (ctx) => {
      const r = this.repoOf(ctx);
      const i = this.pullOf(r, ctx.params.pull_number);
      if (!this.canWrite(r, ctx)) throw new HttpError(403, 'Resource not accessible by integration');
      if (i.state !== 'open') throw new HttpError(405, 'Pull Request is not mergeable');
      this.hooks.beforeMerge?.(r, i.number);
      this.syncPulls(r);
      const sha = ctx.body.sha as string | undefined;
      if (sha && sha !== i.pull!.headSha) throw new HttpError(409, 'Head branch was modified. Review and try the merge again.');
      const message = `${String(ctx.body.commit_title ?? i.title)} (#${i.number})`;
      const merged = squashMerge(r.gitDir, i.pull!.baseRef, i.pull!.headSha, message);
      if (!merged.ok) throw new HttpError(405, merged.reason);
      const t = this.now();
      Object.assign(i.pull!, { merged: true, mergedAt: t, mergeCommitSha: merged.sha });
      Object.assign(i, { state: 'closed', closedAt: t, updatedAt: t });
      // Closing keywords close the issues the PR names.
      for (const n of parseClosingRefs(i.body)) {
        const target = r.issues.get(n);
        if (target && !target.pull && target.state === 'open') Object.assign(target, { state: 'closed', stateReason: 'completed', closedAt: t, updatedAt: t });
      }
      return { status: 200, body: { sha: merged.sha, merged: true, message: 'Pull Request successfully merged' } satisfies Schemas['pull-request-merge-result'] };
    });
    this.on('GET', '/repos/{owner}/{repo}/collaborators/{username}/permission', 'repo', (ctx) => {
      const r = this.repoOf(ctx);
      const login = ctx.params.username!;
      const role = r.collaborators[login];
      if (!role && !this.users.has(login)) throw new HttpError(404, 'Not Found');
      const permission = role === 'maintain' ? 'write' : role === 'triage' ? 'read' : (role ?? 'none');
      return {
        status: 200,
        body: { permission, role_name: role ?? 'none', user: { ...this.simpleUser(this.user(login)), role_name: role ?? 'none' } } satisfies Partial<Schemas['repository-collaborator-permission']>,
      };
    });
    this.on('POST', '/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches', 'repo', (ctx) => {
      const r = this.repoOf(ctx);
      if (!this.canWrite(r, ctx)) throw new HttpError(403, 'Resource not accessible by integration');
      const ref = String(ctx.body.ref ?? r.defaultBranch).replace(/^refs\/heads\//, '');
      const inputs = (ctx.body.inputs as Record<string, string> | undefined) ?? {};
      this.runner.dispatch(r, ctx.params.workflow_id!, ref, inputs);
      return { status: 204 };
    });
    this.on('GET', '/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs', 'repo', (ctx) => {
      const r = this.repoOf(ctx);
      const since = /^>=(.+)$/.exec(ctx.query.get('created') ?? '')?.[1];
      const runs = this.runner.runs
        .filter((w) => w.repo === r.fullName && w.workflow === ctx.params.workflow_id)
        .filter((w) => !since || w.createdAt >= Date.parse(since))
        .sort((a, b) => b.id - a.id)
        .map((w) => this.workflowRunJson(r, w));
      const answer = this.page(ctx, runs, `/repos/${r.fullName}/actions/workflows/${ctx.params.workflow_id}/runs`);
      return { ...answer, body: { total_count: runs.length, workflow_runs: answer.body } };
    });
    this.on('GET', '/repos/{owner}/{repo}/actions/runs/{run_id}', 'repo', (ctx) => {
      const r = this.repoOf(ctx);
      const w = this.runner.runs.find((x) => x.repo === r.fullName && x.id === Number(ctx.params.run_id));
      if (!w) throw new HttpError(404, 'Not Found');
      return { status: 200, body: this.workflowRunJson(r, w) };
    });
    this.on('POST', '/repos/{owner}/{repo}/actions/runs/{run_id}/cancel', 'repo', (ctx) => {
      const r = this.repoOf(ctx);
      const w = this.runner.runs.find((x) => x.repo === r.fullName && x.id === Number(ctx.params.run_id));
      if (!w) throw new HttpError(404, 'Not Found');
      if (w.status === 'completed') throw new HttpError(409, 'Cannot cancel a workflow run that is completed.');
      this.runner.cancel(w);
      return { status: 202, body: {} };
    });
  }

  // ---- auth ----

  private authenticate(req: IncomingMessage): Pick<Ctx, 'actor' | 'auth' | 'installationId'> {
    const h = req.headers.authorization ?? '';
    const m = /^(?:token|bearer)\s+(.+)$/i.exec(h);
    if (!m) return { actor: null, auth: 'none', installationId: null };
    const cred = m[1]!.trim();
    const stored = this.tokens.get(cred);
    if (stored) {
      if (stored.expiresAt < this.now()) throw new HttpError(401, 'Bad credentials');
      return { actor: stored.user, auth: stored.kind, installationId: stored.installationId };
    }
    if (cred.split('.').length === 3 && this.verifyAppJwt(cred)) return { actor: null, auth: 'app', installationId: null };
    throw new HttpError(401, 'Bad credentials');
  }

  private verifyAppJwt(jwt: string): boolean {
    const [h, p, s] = jwt.split('.') as [string, string, string];
    try {
      const ok = verifySignature('RSA-SHA256', Buffer.from(`${h}.${p}`), this.appKey, Buffer.from(s, 'base64url'));
      const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as { iss?: string | number; exp?: number };
      const now = Math.floor(this.now() / 1000);
      return ok && String(claims.iss) === String(this.opts.appId) && (claims.exp ?? 0) > now - 30;
    } catch {
      return false;
    }
  }

  // ---- server ----

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://forge.local');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const send = (status: number, body: unknown, headers: Record<string, string> = {}, raw?: string) => {
      res.writeHead(status, headers);
      res.end(raw ?? (body === undefined ? '' : JSON.stringify(body)));
    };

    if (url.pathname === '/_actions/oidc/.well-known/jwks') return send(200, this.oidc.jwks, { 'content-type': 'application/json' });
    if (url.pathname === '/_actions/oidc/token') {
      const answer = this.runner.oidcToken(url, req.headers.authorization ?? '');
      return answer ? send(200, { value: answer }, { 'content-type': 'application/json' }) : send(401, { message: 'Bad credentials' });
    }
    if (!url.pathname.startsWith('/api/v3/')) return send(404, { message: 'Not Found' }, { 'content-type': 'application/json' });
    const path = url.pathname.slice('/api/v3'.length);
    const method = (req.method ?? 'GET').toUpperCase();
    // Literal segments win over parameters (issues/comments is not issue "comments").
    const route = this.routes.filter((r) => r.method === method && r.re.test(path)).sort((a, b) => a.keys.length - b.keys.length)[0];
    const common: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', 'x-github-media-type': 'github.v3; format=json' };
    try {
      if (!route) throw new HttpError(404, 'Not Found');
      const who = this.authenticate(req);
      if (route.auth === 'app' && who.auth !== 'app') throw new HttpError(401, 'A JSON web token could not be decoded');
      if (route.auth === 'repo' && (who.auth === 'none' || who.auth === 'app')) throw new HttpError(401, 'Requires authentication');
      const m = route.re.exec(path)!;
      const params = Object.fromEntries(route.keys.map((k, i) => [k, decodeURIComponent(m[i + 1]!)]));
      let body: Record<string, unknown> = {};
      if (text) {
        try {
          body = JSON.parse(text) as Record<string, unknown>;
        } catch {
          throw new HttpError(400, 'Problems parsing JSON');
        }
      }
      const answer = await route.handler({ params, query: url.searchParams, body, ...who, accept: String(req.headers.accept ?? '') });
      const key = req.headers.authorization ?? 'anon';
      const used = this.rate.get(key) ?? 0;
      const payload = answer.raw ?? (answer.body === undefined ? '' : JSON.stringify(answer.body));
      const etag = `"${createHash('sha1').update(payload).digest('hex')}"`;
      const rateHeaders = (n: number) => ({
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': String(Math.max(0, 5000 - n)),
        'x-ratelimit-used': String(n),
        'x-ratelimit-reset': String(Math.floor(this.now() / 1000) + 3600),
        'x-ratelimit-resource': 'core',
      });
      if (this.recordResponses) this.served.push({ method, route: route.path, status: answer.status, body: answer.raw ?? answer.body, request: text ? body : undefined });
      if (method === 'GET' && answer.status === 200 && req.headers['if-none-match'] === etag) {
        // A 304 does not count against the rate limit.
        res.writeHead(304, { etag, ...rateHeaders(used) });
        res.end();
        return;
      }
      this.rate.set(key, used + 1);
      const headers = { ...common, ...rateHeaders(used + 1), ...(method === 'GET' ? { etag } : {}), ...answer.headers };
      if (answer.status === 204) {
        res.writeHead(204, rateHeaders(used + 1));
        res.end();
        return;
      }
      send(answer.status, answer.body, headers, answer.raw);
    } catch (err) {
      const status = err instanceof HttpError ? err.status : typeof (err as { status?: unknown }).status === 'number' ? (err as { status: number }).status : 500;
      const message = err instanceof Error ? err.message : String(err);
      if (this.recordResponses && route) this.served.push({ method, route: route.path, status, body: { message }, request: undefined });
      if (process.env.YOKE_FORGE_DEBUG) console.error(`forge: ${method} ${url.pathname}${url.search} -> ${status} ${message}`);
      send(status, { message, documentation_url: 'https://docs.github.com/rest', status: String(status) }, common);
    }
  }

  async start(port = 0): Promise<string> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err) => {
        res.writeHead(500);
        res.end(String(err));
      });
    });
    await new Promise<void>((r) => this.server!.listen(port, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    this.oidc.issuer = `${this.url}/_actions/oidc`;
    return this.url;
  }

  async stop(): Promise<void> {
    this.runner.stopAll();
    if (this.server) {
      this.server.closeAllConnections?.();
      await new Promise<void>((r) => this.server!.close(() => r()));
    }
  }
}
