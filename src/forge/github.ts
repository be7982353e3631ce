import type { ProbotOctokit } from 'probot';
import { CONFIG_PATH, parseRepoConfig, type RepoConfigResult } from '../config/repo-config.js';
import { CACHE_HIT_HEADER } from './conditional-cache.js';
import {
  CONTROL_LABEL,
  parseClosingRefs,
  parseYokeRunTrailer,
  type ClaimView,
  type CommentView,
  type Forge,
  type IssueView,
  type MergeResult,
  type Permission,
  type PullView,
  type RepoRef,
  type RepoSnapshot,
  type ReviewView,
  type WorkflowRunView,
} from './types.js';

// The one module that talks to GitHub. Every read is a GET through the
// conditional cache; an unchanged repository is seen through a single probe.

export type Octokit = InstanceType<typeof ProbotOctokit>;

export interface GitHubForgeOptions {
  appOctokit: () => Promise<Octokit>;
  installationOctokit: (installationId: number) => Promise<Octokit>;
  now: () => number;
  botLogin?: string;
}

interface Gh {
  number: number;
  title: string;
  body?: string | null;
  labels: (string | { name?: string })[];
  user: { login: string; type?: string } | null;
  assignee?: { login: string } | null;
  pull_request?: unknown;
  state?: string;
}

interface GhComment {
  id: number;
  body?: string;
  user: { login: string; type?: string } | null;
  created_at: string;
  html_url: string;
  issue_url: string;
}

/** The owner/repo path parameters of a repository. */
const at = (repo: RepoRef) => ({ owner: repo.owner, repo: repo.name });

const labelNames = (labels: Gh['labels']): string[] => labels.map((l) => (typeof l === 'string' ? l : l.name ?? '')).filter(Boolean);

const toIssue = (i: Gh): IssueView => ({
  number: i.number,
  title: i.title,
  labels: labelNames(i.labels),
  author: i.user?.login ?? 'ghost',
  assignee: i.assignee?.login ?? null,
});

function toComment(c: GhComment): CommentView {
  return {
    id: c.id,
    issueNumber: Number(c.issue_url.split('/').pop()),
    isPull: c.html_url.includes('/pull/'),
    author: c.user?.login ?? 'ghost',
    authorIsBot: c.user?.type === 'Bot',
    body: c.body ?? '',
    createdAt: Date.parse(c.created_at),
  };
}

/** GitHub's answer, or null when the thing is not there (404 / 410). */
async function unlessMissing<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (err) {
    const status = (err as { status?: number }).status;
    if (status === 404 || status === 410) return null;
    throw err;
  }
}

interface CachedView {
  probeEtag: string;
  at: number;
  snapshot: Omit<RepoSnapshot, 'config'>;
}

export class GitHubForge implements Forge {
  private octokits = new Map<number, Octokit>();
  private configs = new Map<string, { at: number; result: RepoConfigResult }>();
  private views = new Map<string, CachedView>();
  private login: string | undefined;

  constructor(private readonly opts: GitHubForgeOptions) {
    this.login = opts.botLogin;
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
      this.login = `${(data as { slug?: string } | null)?.slug ?? 'yoke'}[bot]`;
    }
    return this.login;
  }

  async listInstallations(): Promise<number[]> {
    const app = await this.opts.appOctokit();
    const installs = await app.paginate('GET /app/installations', { per_page: 100 });
    return installs.map((i) => i.id);
  }

  async authenticate(installationId: number): Promise<void> {
    const o = await this.gh(installationId);
    await o.auth({ type: 'installation' });
  }

  async listRepos(installationId: number): Promise<RepoRef[]> {
    const o = await this.gh(installationId);
    const repos = await o.paginate('GET /installation/repositories', { per_page: 100 });
    return repos
      .filter((r) => !r.archived)
      .map((r) => ({ owner: r.owner.login, name: r.name, fullName: r.full_name, installationId }));
  }

  invalidate(fullName: string): void {
    this.configs.delete(fullName);
    this.views.delete(fullName);
  }

  async readConfig(repo: RepoRef, opts: { maxAgeMs: number }): Promise<RepoConfigResult> {
    const cached = this.configs.get(repo.fullName);
    if (cached && this.opts.now() - cached.at < opts.maxAgeMs) return cached.result;
    const o = await this.gh(repo.installationId);
    let result: RepoConfigResult;
    try {
      const { config, files } = await o.config.get({ ...at(repo), path: CONFIG_PATH });
      // GH01: the repo's own file opts it in; an organisation's .github repo only supplies defaults.
      result = files[0]?.config == null ? { state: 'absent' } : parseRepoConfig(config);
    } catch (err) {
      const message = err instanceof Error ? err.message.replace('[@probot/octokit-plugin-config] ', '') : String(err);
      result = { state: 'invalid', reason: `${CONFIG_PATH} could not be read: ${message}` };
    }
    this.configs.set(repo.fullName, { at: this.opts.now(), result });
    return result;
  }

  async readRepo(repo: RepoRef, opts: { claimLabel: string; configMaxAgeMs: number }): Promise<RepoSnapshot> {
    const o = await this.gh(repo.installationId);
    const { owner, name } = repo;
    const config = await this.readConfig(repo, { maxAgeMs: opts.configMaxAgeMs });
    const empty = { repo, defaultBranch: '', config, issues: [], pulls: [], claims: [], recentComments: [] };
    // GH01: a repo without the opt-in file is not read any further.
    if (config.state === 'absent') return empty;
    if (config.state === 'invalid') return { ...empty, issues: await this.controlIssues(o, repo) };
    // The probe: the most recently updated issue or PR. Any comment, label,
    // push or close anywhere in the repo changes it.
    const probe = await o.request('GET /repos/{owner}/{repo}/issues', {
      owner,
      repo: name,
      state: 'all',
      sort: 'updated',
      direction: 'desc',
      per_page: 1,
    });
    const probeEtag = String(probe.headers.etag ?? '');
    const hit = (probe.headers as Record<string, unknown>)[CACHE_HIT_HEADER] === 'hit';
    const view = this.views.get(repo.fullName);
    if (hit && view && view.probeEtag === probeEtag && this.opts.now() - view.at < opts.configMaxAgeMs) {
      return { ...view.snapshot, config };
    }

    const { data: info } = await o.request('GET /repos/{owner}/{repo}', { owner, repo: name });
    const afkLabel = config.state === 'valid' ? config.config.afk_label : 'yoke:afk';
    const rawIssues = (await o.paginate('GET /repos/{owner}/{repo}/issues', {
      owner,
      repo: name,
      state: 'open',
      labels: afkLabel,
      per_page: 100,
    })) as unknown as Gh[];
    const issues = rawIssues.filter((i) => !i.pull_request).map(toIssue);
    const rawPulls = await o.paginate('GET /repos/{owner}/{repo}/pulls', { owner, repo: name, state: 'open', per_page: 100 });
    const pulls: PullView[] = rawPulls.map((p) => ({
      number: p.number,
      title: p.title,
      body: p.body ?? '',
      headSha: p.head.sha,
      headRef: p.head.ref,
      labels: labelNames(p.labels as Gh['labels']),
      draft: p.draft ?? false,
      author: p.user?.login ?? 'ghost',
      closes: parseClosingRefs(p.body ?? ''),
      yokeRun: parseYokeRunTrailer(p.body ?? ''),
    }));
    const claims: ClaimView[] = [];
    for (const pull of pulls) {
      if (!pull.labels.includes(opts.claimLabel) && !pull.yokeRun) continue;
      const comments = (await o.paginate('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
        owner,
        repo: name,
        issue_number: pull.number,
        per_page: 100,
      })) as unknown as GhComment[];
      const reviews = await o.paginate('GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews', {
        owner,
        repo: name,
        pull_number: pull.number,
        per_page: 100,
      });
      claims.push({
        pull,
        comments: comments.map(toComment),
        reviews: reviews.map((r): ReviewView => ({ author: r.user?.login ?? 'ghost', state: r.state, commitId: r.commit_id ?? null })),
      });
    }
    const recent = (await o.request('GET /repos/{owner}/{repo}/issues/comments', {
      owner,
      repo: name,
      sort: 'created',
      direction: 'desc',
      per_page: 100,
    })).data as unknown as GhComment[];
    const snapshot: Omit<RepoSnapshot, 'config'> = {
      repo,
      defaultBranch: info.default_branch,
      issues,
      pulls,
      claims,
      recentComments: recent.map(toComment).reverse(),
    };
    this.views.set(repo.fullName, { probeEtag, at: this.opts.now(), snapshot });
    return { ...snapshot, config };
  }

  /** The open issue labelled yoke:control, where notices about the repo itself go. */
  private async controlIssues(o: Octokit, repo: RepoRef): Promise<IssueView[]> {
    const { data } = await o.request('GET /repos/{owner}/{repo}/issues', {
      ...at(repo),
      state: 'open',
      labels: CONTROL_LABEL,
      per_page: 1,
    });
    return (data as unknown as Gh[]).filter((i) => !i.pull_request).map(toIssue);
  }

  async getIssue(repo: RepoRef, number: number): Promise<{ number: number; state: string; isPull: boolean } | null> {
    const o = await this.gh(repo.installationId);
    const res = await unlessMissing(() => o.request('GET /repos/{owner}/{repo}/issues/{issue_number}', { ...at(repo), issue_number: number }));
    return res && { number: res.data.number, state: res.data.state, isPull: Boolean(res.data.pull_request) };
  }

  async getPermission(repo: RepoRef, user: string): Promise<Permission> {
    const o = await this.gh(repo.installationId);
    const res = await unlessMissing(() =>
      o.request('GET /repos/{owner}/{repo}/collaborators/{username}/permission', { ...at(repo), username: user }),
    );
    if (!res) return 'none';
    const role = (res.data as { role_name?: string }).role_name;
    if (role === 'maintain' || role === 'triage') return role;
    return (res.data.permission as Permission) ?? 'none';
  }

  async createComment(repo: RepoRef, number: number, body: string): Promise<number> {
    const o = await this.gh(repo.installationId);
    const { data } = await o.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
      ...at(repo),
      issue_number: number,
      body,
    });
    return Number(data.id);
  }

  async addReaction(repo: RepoRef, commentId: number, content: '+1' | '-1' | 'eyes' | 'confused' | 'rocket'): Promise<void> {
    const o = await this.gh(repo.installationId);
    await o.request('POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions', {
      ...at(repo),
      comment_id: commentId,
      content,
    });
  }

  async addLabels(repo: RepoRef, number: number, labels: string[]): Promise<void> {
    const o = await this.gh(repo.installationId);
    await o.request('POST /repos/{owner}/{repo}/issues/{issue_number}/labels', { ...at(repo), issue_number: number, labels });
  }

  async merge(repo: RepoRef, number: number, sha: string, method: 'merge' | 'squash' | 'rebase'): Promise<MergeResult> {
    const o = await this.gh(repo.installationId);
    try {
      const { data } = await o.request('PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge', {
        ...at(repo),
        pull_number: number,
        sha,
        merge_method: method,
      });
      return { ok: true, sha: data.sha };
    } catch (err) {
      const e = err as { status?: number; response?: { data?: { message?: string } }; message?: string };
      if (e.status && [403, 405, 409, 422].includes(e.status)) {
        return { ok: false, status: e.status, message: e.response?.data?.message ?? e.message ?? 'refused' };
      }
      throw err;
    }
  }

  async dispatchWorkflow(repo: RepoRef, workflow: string, ref: string, inputs: Record<string, string>): Promise<void> {
    const o = await this.gh(repo.installationId);
    await o.request('POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches', {
      ...at(repo),
      workflow_id: workflow,
      ref,
      inputs,
    });
  }

  async findWorkflowRun(repo: RepoRef, workflow: string, runId: string, since: number): Promise<WorkflowRunView | null> {
    const o = await this.gh(repo.installationId);
    const { data } = await o.request('GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs', {
      ...at(repo),
      workflow_id: workflow,
      event: 'workflow_dispatch',
      created: `>=${new Date(since - 60_000).toISOString().slice(0, 19)}Z`,
      per_page: 100,
    });
    const run = data.workflow_runs.find((r) => (r.display_title ?? r.name ?? '').includes(runId));
    return run ? { id: Number(run.id), status: run.status ?? 'queued', conclusion: run.conclusion ?? null } : null;
  }

  async getWorkflowRun(repo: RepoRef, id: number): Promise<WorkflowRunView | null> {
    const o = await this.gh(repo.installationId);
    const res = await unlessMissing(() => o.request('GET /repos/{owner}/{repo}/actions/runs/{run_id}', { ...at(repo), run_id: id }));
    return res && { id: Number(res.data.id), status: res.data.status ?? 'queued', conclusion: res.data.conclusion ?? null };
  }

  async cancelWorkflowRun(repo: RepoRef, id: number): Promise<void> {
    const o = await this.gh(repo.installationId);
    try {
      await o.request('POST /repos/{owner}/{repo}/actions/runs/{run_id}/cancel', { ...at(repo), run_id: id });
    } catch (err) {
      // 409: the run already completed, which is what cancel wanted.
      if ((err as { status?: number }).status !== 409) throw err;
    }
  }
}
