import type { components } from '@octokit/openapi-types';
import { parseClosingRefs } from '../../src/forge/body-text.js';
import { changedFiles, diffHunkAt, revParse, squashMerge } from '../git.js';
import { HttpError } from '../http-error.js';
import { pullOf, repoOf, requireWorkflowWrite, requireWrite, type RouteEnv } from './routes-common.js';
import type { Review } from './state.js';

// Pull requests, their reviews, and the merge.

type Schemas = components['schemas'];

export function registerPullRoutes(env: RouteEnv): void {
  const { http, state, shapes } = env;
  http.on('GET', '/repos/{owner}/{repo}/pulls', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const wanted = ctx.query.get('state') ?? 'open';
    const items = [...r.issues.values()]
      .filter((i) => i.pull && (wanted === 'all' || i.state === wanted))
      .sort((a, b) => b.number - a.number);
    // The listing is GitHub's pull-request-simple: no merge state.
    return http.page(
      ctx,
      items.map((i) => ({ ...shapes.pullJson(r, i), merged: undefined })),
      `/repos/${r.fullName}/pulls`,
    );
  });
  http.on('POST', '/repos/{owner}/{repo}/pulls', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    requireWorkflowWrite(ctx);
    // `head` is a branch of this repository, or `owner:branch` of a fork.
    const [headOwner, head] = String(ctx.body.head ?? '').includes(':')
      ? (String(ctx.body.head).split(':', 2) as [string, string])
      : [r.owner.login, String(ctx.body.head ?? '')];
    const home = headOwner === r.owner.login ? r : state.repos.get(`${headOwner}/${r.name}`);
    if (!home) throw new HttpError(422, `Validation Failed: ${headOwner} has no fork of ${r.fullName}`);
    const base = String(ctx.body.base ?? r.defaultBranch);
    const sha = revParse(home.gitDir, `refs/heads/${head}`);
    if (!sha) throw new HttpError(422, `Validation Failed: head branch ${head} does not exist`);
    if (
      [...r.issues.values()].some(
        (i) => i.pull && i.state === 'open' && i.pull.headRef === head && i.pull.headRepo === home.fullName,
      )
    ) {
      throw new HttpError(422, `A pull request already exists for ${head}.`);
    }
    const issue = state.openPull(r, ctx.actor!, String(ctx.body.title ?? head), String(ctx.body.body ?? ''), {
      headRef: head,
      headRepo: home.fullName,
      headSha: sha,
      baseRef: base,
      draft: Boolean(ctx.body.draft),
    });
    return { status: 201, body: shapes.pullJson(r, issue) };
  });
  http.on('GET', '/repos/{owner}/{repo}/pulls/{pull_number}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    return { status: 200, body: shapes.pullJson(r, pullOf(r, ctx.params.pull_number)) };
  });
  http.on('GET', '/repos/{owner}/{repo}/pulls/{pull_number}/reviews', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const i = pullOf(r, ctx.params.pull_number);
    return http.page(
      ctx,
      r.reviews.filter((v) => v.pr === i.number).map((v) => shapes.reviewJson(r, v)),
      `/repos/${r.fullName}/pulls/${i.number}/reviews`,
    );
  });
  // GitHub's diff of the PR: from where its head left the base branch to its head; a rename names both paths.
  http.on('GET', '/repos/{owner}/{repo}/pulls/{pull_number}/files', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const i = pullOf(r, ctx.params.pull_number);
    const files = changedFiles(r.gitDir, i.pull!.baseRef, i.pull!.headSha).map(
      (f) =>
        ({
          sha: f.blob,
          filename: f.path,
          status: f.status,
          additions: 0,
          deletions: 0,
          changes: 0,
          blob_url: `${shapes.url}/${r.fullName}/blob/${i.pull!.headSha}/${f.path}`,
          raw_url: `${shapes.url}/${r.fullName}/raw/${i.pull!.headSha}/${f.path}`,
          contents_url: shapes.apiUrl(`/repos/${r.fullName}/contents/${f.path}?ref=${i.pull!.headSha}`),
          ...(f.previous ? { previous_filename: f.previous } : {}),
        }) satisfies Schemas['diff-entry'],
    );
    return http.page(ctx, files, `/repos/${r.fullName}/pulls/${i.number}/files`);
  });
  http.on('GET', '/repos/{owner}/{repo}/pulls/{pull_number}/comments', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const i = pullOf(r, ctx.params.pull_number);
    return http.page(
      ctx,
      r.reviewComments.filter((c) => c.pr === i.number).map((c) => shapes.reviewCommentJson(r, c)),
      `/repos/${r.fullName}/pulls/${i.number}/comments`,
    );
  });
  http.on('POST', '/repos/{owner}/{repo}/pulls/{pull_number}/reviews', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const i = pullOf(r, ctx.params.pull_number);
    requireWorkflowWrite(ctx);
    const event = String(ctx.body.event ?? 'COMMENT');
    if (event === 'APPROVE' && ctx.actor && ctx.actor.login === i.user.login)
      throw new HttpError(422, 'Unprocessable Entity: Can not approve your own pull request');
    const verdict = event === 'APPROVE' ? 'APPROVED' : event === 'REQUEST_CHANGES' ? 'CHANGES_REQUESTED' : 'COMMENTED';
    // Inline comments sit on lines of the PR's diff at its head; GitHub refuses one on a line outside it.
    const inline = (Array.isArray(ctx.body.comments) ? ctx.body.comments : []).map((c: Record<string, unknown>) => {
      const path = String(c.path ?? '');
      const line = Number(c.line);
      const hunk =
        /^[\w./-]+$/.test(path) && Number.isInteger(line) && line > 0
          ? diffHunkAt(r.gitDir, i.pull!.baseRef, i.pull!.headSha, path, line)
          : null;
      if (hunk === null) throw new HttpError(422, 'Unprocessable Entity: "Line could not be resolved"');
      return { path, line, hunk, body: String(c.body ?? '') };
    });
    const v: Review = {
      id: state.nextId(),
      pr: i.number,
      user: ctx.actor!,
      state: verdict,
      body: String(ctx.body.body ?? ''),
      commitId: i.pull!.headSha,
      submittedAt: state.now(),
    };
    r.reviews.push(v);
    for (const c of inline)
      r.reviewComments.push({
        id: state.nextId(),
        reviewId: v.id,
        pr: i.number,
        user: ctx.actor!,
        path: c.path,
        line: c.line,
        body: c.body,
        diffHunk: c.hunk,
        commitId: i.pull!.headSha,
        createdAt: state.now(),
      });
    i.updatedAt = state.now();
    state.reviewed(r, i, v);
    return { status: 200, body: shapes.reviewJson(r, v) };
  });
  http.on('PUT', '/repos/{owner}/{repo}/pulls/{pull_number}/merge', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const i = pullOf(r, ctx.params.pull_number);
    requireWrite(env, r, ctx);
    if (i.state !== 'open') throw new HttpError(405, 'Pull Request is not mergeable');
    if (r.mergeQueue.has(i.pull!.baseRef))
      throw new HttpError(405, 'Repository rule violations found\n\nChanges must be made through the merge queue');
    env.hooks.beforeMerge?.(r, i.number);
    state.syncPulls(r);
    const sha = ctx.body.sha as string | undefined;
    if (sha && sha !== i.pull!.headSha)
      throw new HttpError(409, 'Head branch was modified. Review and try the merge again.');
    const message = `${String(ctx.body.commit_title ?? i.title)} (#${i.number})`;
    const merged = squashMerge(r.gitDir, i.pull!.baseRef, i.pull!.headSha, message);
    if (!merged.ok) throw new HttpError(405, merged.reason);
    const t = state.now();
    Object.assign(i.pull!, { merged: true, mergedAt: t, mergeCommitSha: merged.sha, mergeNamedSha: sha ?? null });
    Object.assign(i, { state: 'closed', closedAt: t, updatedAt: t });
    // Closing keywords close the issues the PR names.
    for (const n of parseClosingRefs(i.body)) {
      const target = r.issues.get(n);
      if (target && !target.pull && target.state === 'open')
        Object.assign(target, { state: 'closed', stateReason: 'completed', closedAt: t, updatedAt: t });
    }
    return {
      status: 200,
      body: {
        sha: merged.sha,
        merged: true,
        message: 'Pull Request successfully merged',
      } satisfies Schemas['pull-request-merge-result'],
    };
  });
}
