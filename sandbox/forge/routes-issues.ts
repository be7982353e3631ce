import type { components } from '@octokit/openapi-types';
import { HttpError } from '../http-error.js';
import { issueOf, repoOf, requireTriage, requireWorkflowWrite, requireWrite, type RouteEnv } from './routes-common.js';
import { isoNow } from './shapes.js';
import type { Issue } from './state.js';

// Issues, their comments, reactions and labels.

type Schemas = components['schemas'];
const REACTIONS = ['+1', '-1', 'laugh', 'confused', 'heart', 'hooray', 'rocket', 'eyes'];

export function registerIssueRoutes(env: RouteEnv): void {
  const { http, state, shapes } = env;
  http.on('GET', '/repos/{owner}/{repo}/issues', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const wanted = ctx.query.get('state') ?? 'open';
    const labels = (ctx.query.get('labels') ?? '').split(',').filter(Boolean);
    const sort = ctx.query.get('sort') ?? 'created';
    const dir = ctx.query.get('direction') ?? 'desc';
    // GitHub's timestamps have one-second precision; within a second, the higher number comes first.
    const key = (i: Issue) => Math.floor((sort === 'updated' ? i.updatedAt : i.createdAt) / 1000) * 100_000 + i.number;
    const since = ctx.query.get('since');
    const items = [...r.issues.values()]
      .filter((i) => wanted === 'all' || i.state === wanted)
      .filter((i) => labels.every((l) => i.labels.includes(l)))
      .filter((i) => !since || Math.floor(i.updatedAt / 1000) * 1000 >= Date.parse(since))
      .sort((a, b) => (dir === 'asc' ? key(a) - key(b) : key(b) - key(a)));
    return http.page(
      ctx,
      items.map((i) => shapes.issueJson(r, i)),
      `/repos/${r.fullName}/issues`,
    );
  });
  http.on('POST', '/repos/{owner}/{repo}/issues', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    requireWorkflowWrite(ctx);
    const title = String(ctx.body.title ?? '');
    if (!title) throw new HttpError(422, 'Validation Failed: title is missing');
    const issue = state.createIssue(
      r,
      ctx.actor!,
      title,
      String(ctx.body.body ?? ''),
      (ctx.body.labels as string[] | undefined) ?? [],
    );
    return { status: 201, body: shapes.issueJson(r, issue) };
  });
  http.on('GET', '/repos/{owner}/{repo}/issues/{issue_number}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    return { status: 200, body: shapes.issueJson(r, issueOf(r, ctx.params.issue_number)) };
  });
  http.on('PATCH', '/repos/{owner}/{repo}/issues/{issue_number}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const i = issueOf(r, ctx.params.issue_number);
    // The author may edit an issue's title and body; state and everything else need write access.
    if (i.user.login !== ctx.actor?.login || ctx.body.state !== undefined) requireWrite(env, r, ctx);
    requireWorkflowWrite(ctx);
    const t = state.now();
    if (typeof ctx.body.body === 'string') {
      i.bodyEdits ??= [i.body];
      i.body = ctx.body.body;
      i.bodyEdits.push(i.body);
    }
    if (typeof ctx.body.title === 'string' && ctx.body.title) i.title = ctx.body.title;
    if (ctx.body.state === 'closed' || ctx.body.state === 'open') {
      const closing = ctx.body.state === 'closed' && i.state === 'open';
      i.state = ctx.body.state;
      i.closedAt = ctx.body.state === 'closed' ? (closing ? t : i.closedAt) : null;
      i.stateReason =
        ctx.body.state === 'closed' ? ((ctx.body.state_reason as Issue['stateReason']) ?? 'completed') : null;
    }
    i.updatedAt = t;
    return { status: 200, body: shapes.issueJson(r, i) };
  });
  for (const [method, locked] of [
    ['PUT', true],
    ['DELETE', false],
  ] as const) {
    http.on(method, '/repos/{owner}/{repo}/issues/{issue_number}/lock', 'repo', (ctx) => {
      const r = repoOf(env, ctx);
      const i = issueOf(r, ctx.params.issue_number);
      requireWrite(env, r, ctx);
      i.locked = locked;
      i.updatedAt = state.now();
      return { status: 204, body: undefined };
    });
  }
  http.on('GET', '/repos/{owner}/{repo}/issues/{issue_number}/events', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const i = issueOf(r, ctx.params.issue_number);
    return http.page(
      ctx,
      (i.events ?? []).map((e) => shapes.issueEventJson(r, i, e)),
      `/repos/${r.fullName}/issues/${i.number}/events`,
    );
  });
  http.on('GET', '/repos/{owner}/{repo}/issues/{issue_number}/comments', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const i = issueOf(r, ctx.params.issue_number);
    const comments = r.comments.filter((c) => c.issueNumber === i.number).map((c) => shapes.commentJson(r, c));
    return http.page(ctx, comments, `/repos/${r.fullName}/issues/${i.number}/comments`);
  });
  http.on('POST', '/repos/{owner}/{repo}/issues/{issue_number}/comments', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const i = issueOf(r, ctx.params.issue_number);
    requireWorkflowWrite(ctx);
    const body = String(ctx.body.body ?? '');
    if (!body) throw new HttpError(422, 'Validation Failed: body is missing');
    return { status: 201, body: shapes.commentJson(r, state.addComment(r, i, ctx.actor!, body)) };
  });
  http.on('GET', '/repos/{owner}/{repo}/issues/comments', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const dir = ctx.query.get('direction') ?? 'asc';
    const sorted = [...r.comments].sort((a, b) =>
      dir === 'desc' ? b.createdAt - a.createdAt || b.id - a.id : a.createdAt - b.createdAt || a.id - b.id,
    );
    return http.page(
      ctx,
      sorted.map((c) => shapes.commentJson(r, c)),
      `/repos/${r.fullName}/issues/comments`,
    );
  });
  http.on('GET', '/repos/{owner}/{repo}/issues/comments/{comment_id}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const c = r.comments.find((x) => x.id === Number(ctx.params.comment_id));
    if (!c) throw new HttpError(404, 'Not Found');
    return { status: 200, body: { ...shapes.commentJson(r, c), reactions: shapes.reactionRollup(r, c) } };
  });
  http.on('PATCH', '/repos/{owner}/{repo}/issues/comments/{comment_id}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const c = r.comments.find((x) => x.id === Number(ctx.params.comment_id));
    if (!c) throw new HttpError(404, 'Not Found');
    requireWorkflowWrite(ctx);
    // The comment's author, or anyone with write access (as GitHub allows maintainers to edit comments).
    if (c.user.login !== ctx.actor?.login) requireWrite(env, r, ctx);
    const body = String(ctx.body.body ?? '');
    if (!body) throw new HttpError(422, 'Validation Failed: body is missing');
    state.editComment(r, c, body, ctx.actor!);
    return { status: 200, body: shapes.commentJson(r, c) };
  });
  http.on('GET', '/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const c = r.comments.find((x) => x.id === Number(ctx.params.comment_id));
    if (!c) throw new HttpError(404, 'Not Found');
    const items = c.reactions.map((x) => ({
      id: x.id,
      node_id: `REA_${x.id}`,
      user: shapes.simpleUser(x.user),
      content: x.content,
      created_at: new Date(x.createdAt).toISOString(),
    }));
    return http.page(ctx, items, `/repos/${r.fullName}/issues/comments/${c.id}/reactions`);
  });
  http.on('POST', '/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const c = r.comments.find((x) => x.id === Number(ctx.params.comment_id));
    if (!c) throw new HttpError(404, 'Not Found');
    requireWorkflowWrite(ctx);
    const content = String(ctx.body.content ?? '');
    if (!REACTIONS.includes(content)) throw new HttpError(422, 'Validation Failed: content');
    const reaction = { id: state.nextId(), content, user: ctx.actor!, createdAt: state.now() };
    c.reactions.push(reaction);
    return {
      status: 201,
      body: {
        id: reaction.id,
        node_id: `REA_${reaction.id}`,
        user: shapes.simpleUser(reaction.user),
        content: content as Schemas['reaction']['content'],
        created_at: isoNow(reaction.createdAt),
      } satisfies Schemas['reaction'],
    };
  });
  http.on('POST', '/repos/{owner}/{repo}/issues/{issue_number}/labels', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const i = issueOf(r, ctx.params.issue_number);
    requireTriage(env, r, ctx);
    for (const l of (ctx.body.labels as string[] | undefined) ?? []) state.addLabel(r, i, l, ctx.actor!);
    return { status: 200, body: i.labels.map((l) => shapes.labelJson(r, l)) };
  });
  http.on('DELETE', '/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const i = issueOf(r, ctx.params.issue_number);
    requireTriage(env, r, ctx);
    const name = decodeURIComponent(ctx.params.name!);
    if (!i.labels.includes(name)) throw new HttpError(404, 'Label does not exist');
    i.labels = i.labels.filter((l) => l !== name);
    i.updatedAt = state.now();
    (i.events ??= []).push({
      id: state.nextId(),
      event: 'unlabeled',
      label: name,
      actor: ctx.actor!,
      createdAt: i.updatedAt,
    });
    return { status: 200, body: i.labels.map((l) => shapes.labelJson(r, l)) };
  });
}
