import { isOneOf } from '../../kernel/guards.js';
import { createHash } from 'node:crypto';
import { parseClosingRefs, parseYokeRunTrailer } from '../body-text.js';
import { issueDigest } from '../../kernel/issue-digest.js';
import { z } from 'zod';
import { PERMISSIONS } from '../../kernel/permission.js';
import {
  type CommentView,
  type IssueDetail,
  type IssueGraph,
  type IssueView,
  type PullDetail,
  type Permission,
  type PullView,
  type ReviewView,
  type ReviewCommentView,
  type WorkflowRunView,
} from '../types.js';

// GitHub's REST shapes, as far as yoke reads them, each turned into yoke's
// own view in the same step. Fields yoke does not read are not described.

const User = z.object({ login: z.string(), type: z.string().optional() }).nullable().optional();
const Labels = z
  .array(z.union([z.string(), z.object({ name: z.string().optional() })]))
  .transform((labels) => labels.map((l) => (typeof l === 'string' ? l : (l.name ?? ''))).filter(Boolean));

/** TR24: what an issue's body is, for telling whether it changed (not for reading it back). */
export const bodyDigest = (body: string): string =>
  createHash('sha256').update(body.replace(/\r\n/g, '\n')).digest('hex').slice(0, 32);

/** BU05: GitHub's summaries of an issue's dependencies and sub-issues, as an issue object carries them. */
const GraphSummaries = {
  issue_dependencies_summary: z.object({ blocked_by: z.number() }).passthrough().nullable().optional(),
  sub_issues_summary: z.object({ total: z.number(), completed: z.number() }).passthrough().nullable().optional(),
};
const graphOf = (i: {
  issue_dependencies_summary?: { blocked_by: number } | null;
  sub_issues_summary?: { total: number; completed: number } | null;
}): { graph?: IssueGraph } => {
  const blockedBy = i.issue_dependencies_summary?.blocked_by ?? 0;
  const openSubIssues = Math.max(0, (i.sub_issues_summary?.total ?? 0) - (i.sub_issues_summary?.completed ?? 0));
  return blockedBy || openSubIssues ? { graph: { blockedBy, openSubIssues } } : {};
};

export const GhIssue = z
  .object({
    number: z.number(),
    title: z.string(),
    labels: Labels,
    user: User,
    assignee: z.object({ login: z.string() }).nullable().optional(),
    body: z.string().nullable().optional(),
    pull_request: z.unknown().optional(),
    ...GraphSummaries,
  })
  .transform((i): IssueView & { isPull: boolean } => ({
    number: i.number,
    title: i.title,
    labels: i.labels,
    author: i.user?.login ?? 'ghost',
    assignee: i.assignee?.login ?? null,
    bodyDigest: bodyDigest(i.body ?? ''),
    digest: issueDigest(i.title, i.body ?? ''),
    isPull: i.pull_request != null,
    ...graphOf(i),
  }));

/** A git reference: `GET /repos/{owner}/{repo}/git/ref/{ref}`. */
export const GhRef = z.object({ ref: z.string(), object: z.object({ sha: z.string() }) });

export const GhPull = z
  .object({
    number: z.number(),
    title: z.string(),
    body: z.string().nullable().optional(),
    head: z.object({
      sha: z.string(),
      ref: z.string(),
      repo: z.object({ full_name: z.string() }).nullable().optional(),
    }),
    base: z.object({ ref: z.string() }).optional(),
    labels: Labels,
    draft: z.boolean().optional(),
    user: User,
  })
  .transform((p): PullView => ({
    number: p.number,
    title: p.title,
    body: p.body ?? '',
    headSha: p.head.sha,
    headRef: p.head.ref,
    baseRef: p.base?.ref ?? null,
    headRepo: p.head.repo?.full_name ?? null,
    labels: p.labels,
    draft: p.draft ?? false,
    author: p.user?.login ?? 'ghost',
    closes: parseClosingRefs(p.body ?? ''),
    yokeRun: parseYokeRunTrailer(p.body ?? ''),
  }));

export const GhComment = z
  .object({
    id: z.number(),
    body: z.string().nullable().optional(),
    user: User,
    created_at: z.string(),
    updated_at: z.string().optional(),
    html_url: z.string(),
    issue_url: z.string(),
  })
  .transform((c): CommentView => ({
    id: c.id,
    issueNumber: Number(c.issue_url.split('/').pop()),
    isPull: c.html_url.includes('/pull/'),
    author: c.user?.login ?? 'ghost',
    authorIsBot: c.user?.type === 'Bot',
    body: c.body ?? '',
    createdAt: Date.parse(c.created_at),
    updatedAt: Date.parse(c.updated_at ?? c.created_at),
  }));

/** One file of a PR's change (`GET /repos/{owner}/{repo}/pulls/{pull_number}/files`): its path, and the one it was renamed from. */
export const GhPullFile = z
  .object({ filename: z.string(), previous_filename: z.string().optional() })
  .passthrough()
  .transform((f) => (f.previous_filename ? [f.filename, f.previous_filename] : [f.filename]));

export const GhReview = z
  .object({
    id: z.number().optional(),
    user: User,
    state: z.string(),
    commit_id: z.string().nullable().optional(),
    body: z.string().nullable().optional(),
    submitted_at: z.string().nullable().optional(),
  })
  .transform((r): ReviewView => ({
    author: r.user?.login ?? 'ghost',
    state: r.state,
    commitId: r.commit_id ?? null,
    ...(r.id !== undefined ? { id: r.id } : {}),
    ...(r.body ? { body: r.body } : {}),
    ...(r.submitted_at ? { submittedAt: Date.parse(r.submitted_at) } : {}),
  }));

export const GhReviewComment = z
  .object({
    id: z.number(),
    pull_request_review_id: z.number().nullable().optional(),
    user: User,
    path: z.string(),
    line: z.number().nullable().optional(),
    diff_hunk: z.string(),
    body: z.string(),
    commit_id: z.string(),
  })
  .transform((c): ReviewCommentView => ({
    id: c.id,
    reviewId: c.pull_request_review_id ?? null,
    author: c.user?.login ?? 'ghost',
    path: c.path,
    line: c.line ?? null,
    diffHunk: c.diff_hunk,
    body: c.body,
    commitId: c.commit_id,
  }));

export const GhWorkflowRun = z
  .object({
    id: z.number(),
    status: z.string().nullable().optional(),
    conclusion: z.string().nullable().optional(),
    display_title: z.string().optional(),
    name: z.string().nullable().optional(),
    event: z.string().optional(),
    repository: z.object({ id: z.number() }).optional(),
    actor: z.object({ login: z.string() }).nullable().optional(),
    triggering_actor: z.object({ login: z.string() }).nullable().optional(),
    html_url: z.string().optional(),
    head_sha: z.string().nullable().optional(),
    updated_at: z.string().nullable().optional(),
  })
  .transform((w): WorkflowRunView & { title: string } => ({
    id: w.id,
    status: w.status ?? 'queued',
    conclusion: w.conclusion ?? null,
    repositoryId: w.repository?.id ?? null,
    event: w.event ?? null,
    actor: w.actor?.login ?? null,
    triggeringActor: w.triggering_actor?.login ?? w.actor?.login ?? null,
    title: w.display_title ?? w.name ?? '',
    htmlUrl: w.html_url ?? null,
    headSha: w.head_sha ?? null,
    updatedAt: w.updated_at ? Date.parse(w.updated_at) : null,
  }));

/** A repository as the installation's listing gives it. */
export const GhRepository = z.object({
  name: z.string(),
  full_name: z.string(),
  owner: z.object({ login: z.string() }),
  archived: z.boolean().optional(),
  default_branch: z.string().optional(),
  pushed_at: z.string().nullish(),
});

/** What yoke reads of `GET /repos/{owner}/{repo}`. */
export const GhRepositoryInfo = z.object({ default_branch: z.string() });

/** What yoke reads of one issue or PR by number: is it open, and is it a PR. */
/** One issue event; only `labeled` ones are read (who added a label). */
export const GhIssueEvent = z.object({
  event: z.string(),
  actor: User,
  label: z.object({ name: z.string() }).optional(),
  created_at: z.string().optional(),
});

/** An issue in the `since` listing: its number, labels and when it last changed. */
export const GhIssueUpdate = z
  .object({ number: z.number(), labels: Labels, updated_at: z.string(), pull_request: z.unknown().optional() })
  .transform((i) => ({
    number: i.number,
    labels: i.labels,
    updatedAt: Date.parse(i.updated_at),
    isPull: i.pull_request != null,
  }));

export const GhIssueState = z
  .object({
    number: z.number(),
    state: z.string(),
    state_reason: z.string().nullable().optional(),
    pull_request: z.unknown().optional(),
    locked: z.boolean().optional(),
    labels: Labels.optional(),
    assignee: z.object({ login: z.string() }).nullable().optional(),
    user: User,
    title: z.string().optional(),
    body: z.string().nullable().optional(),
    ...GraphSummaries,
  })
  .transform((i): IssueDetail => ({
    number: i.number,
    state: i.state,
    stateReason: i.state_reason ?? null,
    isPull: i.pull_request != null,
    locked: i.locked ?? false,
    labels: i.labels ?? [],
    assignee: i.assignee?.login ?? null,
    author: i.user?.login ?? null,
    digest: issueDigest(i.title ?? '', i.body ?? ''),
    ...graphOf(i),
  }));

/** One PR by number, merged or not. */
export const GhPullDetail = z
  .object({
    number: z.number(),
    state: z.string(),
    merged: z.boolean().nullable().optional(),
    merged_at: z.string().nullable().optional(),
    merge_commit_sha: z.string().nullable().optional(),
    user: User,
    head: z
      .object({
        ref: z.string(),
        sha: z.string().optional(),
        repo: z.object({ full_name: z.string() }).nullable().optional(),
      })
      .optional(),
  })
  .transform((p): PullDetail => ({
    headRef: p.head?.ref ?? null,
    headSha: p.head?.sha ?? null,
    headRepo: p.head?.repo?.full_name ?? null,
    number: p.number,
    state: p.state,
    merged: Boolean(p.merged ?? p.merged_at),
    mergeCommitSha: p.merge_commit_sha ?? null,
    author: p.user?.login ?? 'ghost',
  }));

export const GhCommit = z.object({ sha: z.string() });
/** A commit as the git database API shows it: its parents in order. */
export const GhGitCommit = z.object({ sha: z.string(), parents: z.array(z.object({ sha: z.string() })) });
export const GhBranch = z.object({
  name: z.string(),
  protected: z.boolean(),
  /** Branch protection's required status checks, each with the app it must come from (`app_id`: null or absent, any). */
  protection: z
    .object({
      required_status_checks: z
        .object({ checks: z.array(z.object({ context: z.string(), app_id: z.number().nullish() })).default([]) })
        .optional(),
    })
    .optional(),
});
/** The rules in force on a branch (`GET /repos/{owner}/{repo}/rules/branches/{branch}`): what a merge there must meet. */
export const GhBranchRules = z.array(
  z.object({
    type: z.string(),
    parameters: z
      .object({
        required_status_checks: z
          .array(z.object({ context: z.string(), integration_id: z.number().nullish() }))
          .optional(),
        merge_method: z.string().optional(),
      })
      .optional(),
  }),
);
export const GhCompare = z.object({ status: z.enum(['ahead', 'behind', 'identical', 'diverged']) });
export const GhTree = z.object({
  tree: z.array(z.object({ path: z.string(), type: z.string() })),
  truncated: z.boolean().optional(),
});

/** The collaborator permission answer: the fine-grained role when GitHub gives one, else the classic level. */
export const GhPermission = z
  .object({ permission: z.string(), role_name: z.string().optional() })
  .transform((p): Permission => {
    if (p.role_name === 'maintain' || p.role_name === 'triage') return p.role_name;
    return isOneOf(PERMISSIONS, p.permission) ? p.permission : 'none';
  });

export const GhBotApp = z.object({ slug: z.string().optional() }).nullable();
