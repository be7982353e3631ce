import { HttpError } from '../http-error.js';
import { repoOf, requireWrite, type RouteEnv } from './routes-common.js';

// GitHub Actions: dispatch a workflow, list and read its runs, cancel one.

export function registerActionsRoutes(env: RouteEnv): void {
  const { http, shapes, runner, grants } = env;
  // Secrets' names (GitHub never returns a value), for an installation granted `secrets`, or a person who may read them.
  const secretsOf = (ctx: Parameters<Parameters<typeof http.on>[3]>[0], names: string[], created: number) => {
    const granted = grants(ctx.installationId!).permissions.secrets;
    if (ctx.auth === 'installation' && granted !== 'read' && granted !== 'write')
      throw new HttpError(403, 'Resource not accessible by integration');
    const secrets = names.sort().map((name) => ({
      name,
      created_at: new Date(created).toISOString(),
      updated_at: new Date(created).toISOString(),
    }));
    return { status: 200, body: { total_count: secrets.length, secrets } };
  };
  http.on('GET', '/repos/{owner}/{repo}/actions/secrets', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    return secretsOf(ctx, Object.keys(r.secrets), r.createdAt);
  });
  http.on('GET', '/repos/{owner}/{repo}/actions/organization-secrets', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    return secretsOf(ctx, [], r.createdAt);
  });
  http.on('POST', '/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    requireWrite(env, r, ctx);
    const ref = String(ctx.body.ref ?? r.defaultBranch).replace(/^refs\/heads\//, '');
    const inputs = (ctx.body.inputs as Record<string, string> | undefined) ?? {};
    runner.dispatch(r, ctx.params.workflow_id!, ref, inputs, ctx.actor!);
    return { status: 204 };
  });
  http.on('GET', '/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const since = /^>=(.+)$/.exec(ctx.query.get('created') ?? '')?.[1];
    const runs = runner.runs
      .filter((w) => w.repo === r.fullName && w.workflow === ctx.params.workflow_id)
      .filter((w) => !since || w.createdAt >= Date.parse(since))
      .sort((a, b) => b.id - a.id)
      .map((w) => shapes.workflowRunJson(r, w));
    const answer = http.page(ctx, runs, `/repos/${r.fullName}/actions/workflows/${ctx.params.workflow_id}/runs`);
    return { ...answer, body: { total_count: runs.length, workflow_runs: answer.body } };
  });
  http.on('GET', '/repos/{owner}/{repo}/actions/runs/{run_id}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const w = runner.runs.find((x) => x.repo === r.fullName && x.id === Number(ctx.params.run_id));
    if (!w) throw new HttpError(404, 'Not Found');
    return { status: 200, body: shapes.workflowRunJson(r, w) };
  });
  http.on('POST', '/repos/{owner}/{repo}/actions/runs/{run_id}/cancel', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const w = runner.runs.find((x) => x.repo === r.fullName && x.id === Number(ctx.params.run_id));
    if (!w) throw new HttpError(404, 'Not Found');
    if (w.status === 'completed') throw new HttpError(409, 'Cannot cancel a workflow run that is completed.');
    runner.cancel(w);
    return { status: 202, body: {} };
  });
}
