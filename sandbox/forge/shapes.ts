import { createHash } from 'node:crypto';
import type { components } from '@octokit/openapi-types';
import { lastPushedAt, revParse } from '../git.js';
import type { WorkflowRunRecord } from './actions-runner.js';
import type { CheckRun, Comment, ForgeRepo, ForgeUser, Issue, IssueEvent, Review, ReviewComment } from './state.js';

// The JSON GitHub would answer with, built from the forge's state and typed
// against GitHub's OpenAPI description (@octokit/openapi-types).

type Schemas = components['schemas'];

export const iso = (ms: number | null): string | null =>
  ms === null ? null : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
export const isoNow = (ms: number): string => iso(ms)!;

export class Shapes {
  constructor(
    private readonly baseUrl: () => string,
    private readonly repoNamed: (fullName: string) => ForgeRepo | undefined,
  ) {}

  get url(): string {
    return this.baseUrl();
  }

  apiUrl(path: string): string {
    return `${this.url}/api/v3${path}`;
  }

  simpleUser(u: ForgeUser): Schemas['simple-user'] {
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

  repoJson(r: ForgeRepo) {
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
      // Stable between changes, as GitHub's are: a moving timestamp would defeat every ETag.
      updated_at: isoNow(r.createdAt),
      // When a branch last moved, as GitHub's: a push changes it, so yoke knows its opt-in file may have.
      pushed_at: isoNow(lastPushedAt(r.gitDir) ?? r.createdAt),
      permissions: { admin: false, maintain: false, push: true, triage: true, pull: true },
    } satisfies Partial<Schemas['full-repository']>;
  }

  labelJson(r: ForgeRepo, name: string) {
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

  issueJson(r: ForgeRepo, i: Issue) {
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
      locked: i.locked ?? false,
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

  association(r: ForgeRepo, u: ForgeUser): Schemas['author-association'] {
    if (u.login === r.owner.login) return 'OWNER';
    return r.collaborators[u.login] ? 'COLLABORATOR' : 'NONE';
  }

  pullJson(r: ForgeRepo, i: Issue) {
    const p = i.pull!;
    return {
      ...this.pullFields(r, i),
      head: this.branchJson(this.repoNamed(p.headRepo) ?? r, p.headRef, p.headSha),
      base: this.branchJson(r, p.baseRef, revParse(r.gitDir, `refs/heads/${p.baseRef}`) ?? ''),
    };
  }

  branchJson(r: ForgeRepo, ref: string, sha: string) {
    return {
      ...({ label: `${r.owner.login}:${ref}`, ref, sha, user: this.simpleUser(r.owner) } satisfies Partial<
        Schemas['pull-request']['head']
      >),
      repo: this.repoJson(r),
    };
  }

  pullFields(r: ForgeRepo, i: Issue) {
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

  issueEventJson(r: ForgeRepo, i: Issue, e: IssueEvent): Schemas['labeled-issue-event'] {
    return {
      id: e.id,
      node_id: `LE_${e.id}`,
      url: this.apiUrl(`/repos/${r.fullName}/issues/events/${e.id}`),
      actor: this.simpleUser(e.actor),
      event: e.event,
      commit_id: null,
      commit_url: null,
      created_at: isoNow(e.createdAt),
      performed_via_github_app: null,
      label: { name: e.label, color: r.labels.get(e.label)?.color ?? 'ededed' },
    };
  }

  commentJson(r: ForgeRepo, c: Comment) {
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

  /** GitHub's reactions summary on a comment. */
  reactionRollup(r: ForgeRepo, c: Comment): Schemas['reaction-rollup'] {
    const count = (content: string) => c.reactions.filter((x) => x.content === content).length;
    return {
      url: this.apiUrl(`/repos/${r.fullName}/issues/comments/${c.id}/reactions`),
      total_count: c.reactions.length,
      '+1': count('+1'),
      '-1': count('-1'),
      laugh: count('laugh'),
      confused: count('confused'),
      heart: count('heart'),
      hooray: count('hooray'),
      eyes: count('eyes'),
      rocket: count('rocket'),
    };
  }

  reviewJson(r: ForgeRepo, v: Review) {
    return {
      id: v.id,
      node_id: `PRR_${v.id}`,
      user: this.simpleUser(v.user),
      body: v.body,
      state: v.state,
      html_url: `${this.url}/${r.fullName}/pull/${v.pr}#pullrequestreview-${v.id}`,
      pull_request_url: this.apiUrl(`/repos/${r.fullName}/pulls/${v.pr}`),
      _links: {
        html: { href: `${this.url}/${r.fullName}/pull/${v.pr}` },
        pull_request: { href: this.apiUrl(`/repos/${r.fullName}/pulls/${v.pr}`) },
      },
      submitted_at: isoNow(v.submittedAt),
      commit_id: v.commitId,
      author_association: this.association(r, v.user),
    } satisfies Schemas['pull-request-review'];
  }

  reviewCommentJson(r: ForgeRepo, c: ReviewComment) {
    const self = this.apiUrl(`/repos/${r.fullName}/pulls/comments/${c.id}`);
    const html = `${this.url}/${r.fullName}/pull/${c.pr}#discussion_r${c.id}`;
    const pull = this.apiUrl(`/repos/${r.fullName}/pulls/${c.pr}`);
    return {
      url: self,
      pull_request_review_id: c.reviewId,
      id: c.id,
      node_id: `PRRC_${c.id}`,
      diff_hunk: c.diffHunk,
      path: c.path,
      commit_id: c.commitId,
      original_commit_id: c.commitId,
      user: this.simpleUser(c.user),
      body: c.body,
      created_at: isoNow(c.createdAt),
      updated_at: isoNow(c.createdAt),
      html_url: html,
      pull_request_url: pull,
      author_association: this.association(r, c.user),
      _links: { self: { href: self }, html: { href: html }, pull_request: { href: pull } },
      line: c.line,
      original_line: c.line,
      side: 'RIGHT' as const,
    } satisfies Schemas['pull-request-review-comment'];
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
      actor: this.simpleUser(w.actor),
      triggering_actor: this.simpleUser(w.actor),
      // The fields the forge fills of it; the conformance test checks their names and types.
      repository: this.repoJson(r) as unknown as Schemas['minimal-repository'],
    } satisfies Partial<Schemas['workflow-run']>;
  }

  checkRunJson(r: ForgeRepo, c: CheckRun) {
    return {
      id: c.id,
      node_id: `CR_${c.id}`,
      head_sha: c.headSha,
      external_id: c.externalId,
      url: this.apiUrl(`/repos/${r.fullName}/check-runs/${c.id}`),
      html_url: `${this.url}/${r.fullName}/runs/${c.id}`,
      details_url: c.detailsUrl,
      status: c.status,
      conclusion: c.conclusion as Schemas['check-run']['conclusion'],
      started_at: isoNow(c.startedAt),
      completed_at: iso(c.completedAt),
      output: {
        title: c.title,
        summary: c.summary,
        text: null,
        annotations_count: 0,
        annotations_url: this.apiUrl(`/repos/${r.fullName}/check-runs/${c.id}/annotations`),
      },
      name: c.name,
      check_suite: null,
      app: null,
      pull_requests: [],
    } satisfies Partial<Schemas['check-run']>;
  }

  installationJson(
    id: number,
    owner: ForgeUser,
    app: { id: number; slug: string },
    since: number,
    grant: { permissions: Record<string, string>; events: string[] },
  ) {
    return {
      id,
      account: this.simpleUser(owner),
      app_id: app.id,
      app_slug: app.slug,
      target_id: owner.id,
      target_type: 'Organization',
      repository_selection: 'selected',
      access_tokens_url: this.apiUrl(`/app/installations/${id}/access_tokens`),
      repositories_url: this.apiUrl('/installation/repositories'),
      html_url: `${this.url}/settings/installations/${id}`,
      permissions: grant.permissions as never,
      events: grant.events,
      created_at: isoNow(since),
      updated_at: isoNow(since),
      single_file_name: null,
      suspended_by: null,
      suspended_at: null,
    } satisfies Partial<Schemas['installation']>;
  }

  contentJson(r: ForgeRepo, path: string, content: string) {
    return {
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
    } satisfies Schemas['content-file'];
  }
}
