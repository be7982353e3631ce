import { z } from 'zod';
import { classifyGitHubError, unlessMissing } from '../errors.js';
import type { Octokit } from './octokit.js';
import {
  GhIssue,
  GhIssueEvent,
  GhIssueState,
  GhIssueUpdate,
  GhPullDetail,
  GhReview,
  GhReviewComment,
} from './schemas.js';
import type { IssueDetail, MergeResult, PullDetail, RepoRef, ReviewCommentView, ReviewView } from '../types.js';

// Issues and pull requests as GitHubForge reads and changes them: an issue, a
// pull request and its reviews, a comment's reactions, who labelled an issue,
// a merge at a head, a claim PR opened.

const at = (repo: RepoRef) => ({ owner: repo.owner, repo: repo.name });

export async function getIssue(o: Octokit, repo: RepoRef, number: number): Promise<IssueDetail | null> {
  const res = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/issues/{issue_number}', { ...at(repo), issue_number: number }),
  );
  return res && GhIssueState.parse(res.data);
}

/** BU05: `GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by`: the open ones, named. */
export async function addLabels(o: Octokit, repo: RepoRef, number: number, labels: string[]): Promise<void> {
  await o.request('POST /repos/{owner}/{repo}/issues/{issue_number}/labels', {
    ...at(repo),
    issue_number: number,
    labels,
  });
}

export async function listBlockers(o: Octokit, repo: RepoRef, number: number): Promise<string[] | null> {
  const res = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by', {
      ...at(repo),
      issue_number: number,
      per_page: 100,
    }),
  );
  if (!res) return null;
  const here = `/repos/${repo.fullName}`.toLowerCase();
  return z
    .array(z.object({ number: z.number(), state: z.string(), repository_url: z.string() }).passthrough())
    .parse(res.data)
    .filter((i) => i.state === 'open')
    .map((i) => {
      const where = i.repository_url.replace(/^.*\/repos\//, '');
      return i.repository_url.toLowerCase().endsWith(here) ? `#${i.number}` : `${where}#${i.number}`;
    });
}

export async function findOpenIssue(o: Octokit, repo: RepoRef, label: string): Promise<number | null> {
  const { data } = await o.request('GET /repos/{owner}/{repo}/issues', {
    ...at(repo),
    state: 'open',
    labels: label,
    sort: 'created',
    direction: 'asc',
    per_page: 100,
  });
  return (
    z
      .array(GhIssue)
      .parse(data)
      .find((i) => !i.isPull)?.number ?? null
  );
}

export async function getPull(o: Octokit, repo: RepoRef, number: number): Promise<PullDetail | null> {
  const res = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', { ...at(repo), pull_number: number }),
  );
  return res && GhPullDetail.parse(res.data);
}

export async function listReviews(o: Octokit, repo: RepoRef, pr: number): Promise<ReviewView[]> {
  return z.array(GhReview).parse(
    await o.paginate('GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews', {
      ...at(repo),
      pull_number: pr,
      per_page: 100,
    }),
  );
}

export async function listReviewComments(o: Octokit, repo: RepoRef, pr: number): Promise<ReviewCommentView[]> {
  return z.array(GhReviewComment).parse(
    await o.paginate('GET /repos/{owner}/{repo}/pulls/{pull_number}/comments', {
      ...at(repo),
      pull_number: pr,
      sort: 'created',
      direction: 'asc',
      per_page: 100,
    }),
  );
}

export async function readComment(
  o: Octokit,
  repo: RepoRef,
  commentId: number,
): Promise<{ reactors: string[] } | null> {
  const res = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/issues/comments/{comment_id}', { ...at(repo), comment_id: commentId }),
  );
  if (!res) return null;
  const total =
    z.object({ reactions: z.object({ total_count: z.number() }).optional() }).parse(res.data).reactions?.total_count ??
    0;
  // Who reacted is asked only when someone did (an idle notice costs one conditional read).
  if (total === 0) return { reactors: [] };
  const list = await o.paginate('GET /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions', {
    ...at(repo),
    comment_id: commentId,
    per_page: 100,
  });
  return {
    reactors: [
      ...new Set(
        z
          .array(z.object({ user: z.object({ login: z.string() }).nullable() }))
          .parse(list)
          .flatMap((r) => (r.user ? [r.user.login] : [])),
      ),
    ],
  };
}

export async function labelledBy(
  o: Octokit,
  repo: RepoRef,
  number: number,
  label: string,
): Promise<{ login: string; isBot: boolean } | null> {
  const events = z.array(GhIssueEvent).parse(
    await o.paginate('GET /repos/{owner}/{repo}/issues/{issue_number}/events', {
      ...at(repo),
      issue_number: number,
      per_page: 100,
    }),
  );
  const last = events.filter((e) => e.event === 'labeled' && e.label?.name === label && e.actor).at(-1);
  return last?.actor
    ? { login: last.actor.login, isBot: last.actor.type === 'Bot' || last.actor.login.endsWith('[bot]') }
    : null;
}

export async function merge(
  o: Octokit,
  repo: RepoRef,
  number: number,
  sha: string,
  method: 'merge' | 'squash' | 'rebase',
): Promise<MergeResult> {
  try {
    const { data } = await o.request('PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge', {
      ...at(repo),
      pull_number: number,
      sha,
      merge_method: method,
    });
    return { ok: true, sha: z.object({ sha: z.string() }).parse(data).sha };
  } catch (err) {
    const e = classifyGitHubError(err);
    if (e.kind === 'refused') return { ok: false, status: e.status!, message: e.message };
    throw err;
  }
}

export async function openPull(
  o: Octokit,
  repo: RepoRef,
  pull: { head: string; base: string; title: string; body: string },
): Promise<number> {
  const { data } = await o.request('POST /repos/{owner}/{repo}/pulls', { ...at(repo), ...pull });
  return z.object({ number: z.number() }).parse(data).number;
}

/** Issues (not PRs), open or closed, updated at or after `since`, oldest update first, with their labels. */
export async function listIssuesUpdatedSince(
  o: Octokit,
  repo: RepoRef,
  since: number,
): Promise<{ number: number; labels: string[]; updatedAt: number }[]> {
  const data = await o.paginate('GET /repos/{owner}/{repo}/issues', {
    ...at(repo),
    state: 'all',
    since: new Date(since).toISOString(),
    sort: 'updated',
    direction: 'asc',
    per_page: 100,
  });
  return z
    .array(GhIssueUpdate)
    .parse(data)
    .filter((i) => !i.isPull)
    .map(({ number, labels, updatedAt }) => ({ number, labels, updatedAt }));
}

export async function updateIssue(
  o: Octokit,
  repo: RepoRef,
  number: number,
  change: { body?: string; state?: 'open' | 'closed'; stateReason?: 'completed' | 'not_planned' },
): Promise<void> {
  await o.request('PATCH /repos/{owner}/{repo}/issues/{issue_number}', {
    ...at(repo),
    issue_number: number,
    ...(change.body !== undefined ? { body: change.body } : {}),
    ...(change.state ? { state: change.state } : {}),
    ...(change.stateReason ? { state_reason: change.stateReason } : {}),
  });
}
