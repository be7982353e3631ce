import { HttpError } from '../http-error.js';
import type { Ctx } from './http.js';
import { repoOf, type RouteEnv } from './routes-common.js';
import { GITHUB_ACTIONS_APP_ID } from './records.js';
import type { CheckRun } from './state.js';

// Checks: an app creates and updates check runs on a commit; anyone who can
// read the repository lists them. As on GitHub, only a GitHub App writes them
// (a job's GITHUB_TOKEN is GitHub Actions' app), and each remembers which.

const STATUSES = ['queued', 'in_progress', 'completed'] as const;
const CONCLUSIONS = [
  'action_required',
  'cancelled',
  'failure',
  'neutral',
  'success',
  'skipped',
  'stale',
  'timed_out',
] as const;

/** The app whose token writes a check run: an installation's, or GitHub Actions' for a job's GITHUB_TOKEN. */
function requireApp(ctx: Ctx, appId: number): number {
  if (ctx.auth === 'installation') return appId;
  if (ctx.auth === 'workflow') return GITHUB_ACTIONS_APP_ID;
  throw new HttpError(403, 'You must authenticate via a GitHub App.');
}

/** Applies the fields of a create or update body GitHub documents, refusing what it would. */
function apply(c: CheckRun, body: Record<string, unknown>, now: number): void {
  if (body.name !== undefined) c.name = String(body.name);
  if (body.status !== undefined) {
    if (!STATUSES.includes(body.status as (typeof STATUSES)[number]))
      throw new HttpError(422, `status is not one of ${STATUSES.join(', ')}`);
    c.status = body.status as CheckRun['status'];
  }
  if (body.conclusion !== undefined) {
    if (!CONCLUSIONS.includes(body.conclusion as (typeof CONCLUSIONS)[number]))
      throw new HttpError(422, `conclusion is not one of ${CONCLUSIONS.join(', ')}`);
    c.conclusion = String(body.conclusion);
    c.status = 'completed';
  }
  if (c.status === 'completed' && !c.conclusion)
    throw new HttpError(422, 'conclusion is required when status is completed');
  if (c.status === 'completed') c.completedAt = body.completed_at ? Date.parse(String(body.completed_at)) : now;
  if (body.external_id !== undefined) c.externalId = String(body.external_id);
  if (body.details_url !== undefined) c.detailsUrl = String(body.details_url);
  const output = body.output as { title?: string; summary?: string } | undefined;
  if (output) {
    if (typeof output.title !== 'string' || typeof output.summary !== 'string')
      throw new HttpError(422, 'output needs a title and a summary');
    if (output.summary.length > 65_535) throw new HttpError(422, 'output.summary is longer than 65535 characters');
    c.title = output.title;
    c.summary = output.summary;
  }
  c.writes++;
}

export function registerCheckRoutes(env: RouteEnv): void {
  const { http, shapes, state } = env;
  http.on('POST', '/repos/{owner}/{repo}/check-runs', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const appId = requireApp(ctx, env.app.id);
    const headSha = String(ctx.body.head_sha ?? '');
    if (!/^[0-9a-f]{7,40}$/.test(headSha) || !ctx.body.name) throw new HttpError(422, 'name and head_sha are required');
    const c: CheckRun = {
      id: state.nextId(),
      headSha,
      name: '',
      status: 'queued',
      conclusion: null,
      externalId: null,
      detailsUrl: null,
      title: null,
      summary: null,
      startedAt: state.now(),
      completedAt: null,
      writes: 0,
      appId,
    };
    apply(c, ctx.body, state.now());
    r.checkRuns.push(c);
    // LD04: a merge group's required check may have just passed or failed.
    for (const branch of r.mergeQueue) env.queues.settle(r, branch);
    return { status: 201, body: shapes.checkRunJson(r, c) };
  });
  http.on('PATCH', '/repos/{owner}/{repo}/check-runs/{check_run_id}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const appId = requireApp(ctx, env.app.id);
    const c = r.checkRuns.find((x) => x.id === Number(ctx.params.check_run_id));
    if (!c) throw new HttpError(404, 'Not Found');
    if (c.appId !== appId) throw new HttpError(403, 'Only the app that created a check run can update it.');
    apply(c, ctx.body, state.now());
    for (const branch of r.mergeQueue) env.queues.settle(r, branch);
    return { status: 200, body: shapes.checkRunJson(r, c) };
  });
  http.on('GET', '/repos/{owner}/{repo}/commits/{ref}/check-runs', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const runs = r.checkRuns.filter((c) => c.headSha === ctx.params.ref).map((c) => shapes.checkRunJson(r, c));
    return { status: 200, body: { total_count: runs.length, check_runs: runs } };
  });
}
