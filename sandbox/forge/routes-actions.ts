import { createHmac } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { HttpError } from '../http-error.js';
import { repoOf, requireWrite, type RouteEnv } from './routes-common.js';
import type { WorkflowRunRecord } from './actions-runner.js';
import { writeZip } from './zip-writer.js';

// GitHub Actions: dispatch a workflow, list and read its runs, cancel one;
// a run's artifacts, listed and downloaded (through a short-lived signed URL,
// as GitHub redirects to blob storage); runs waiting at protection rules.

/** Artifacts are kept 90 days, as GitHub's default retention. */
const RETENTION_MS = 90 * 86_400_000;
/** How long a download URL works, as GitHub's (one minute). */
const DOWNLOAD_URL_MS = 60_000;

function filesOf(dir: string): { name: string; data: Buffer }[] {
  const out: { name: string; data: Buffer }[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else out.push({ name: relative(dir, p), data: readFileSync(p) });
    }
  };
  if (statSync(dir).isDirectory()) walk(dir);
  else out.push({ name: dir.split('/').pop()!, data: readFileSync(dir) });
  return out;
}

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
  const actionsGranted = (ctx: Parameters<Parameters<typeof http.on>[3]>[0]) => {
    const granted = grants(ctx.installationId!).permissions.actions;
    if (ctx.auth === 'installation' && granted !== 'read' && granted !== 'write')
      throw new HttpError(403, 'Resource not accessible by integration');
  };
  const artifactsOf = (repo: string) =>
    runner.runs
      .filter((w) => w.repo === repo)
      .flatMap((w) => Object.entries(w.artifacts).map(([name, a]) => ({ run: w, name, ...a })));
  const artifactJson = (r: Parameters<typeof shapes.workflowRunJson>[0], a: ReturnType<typeof artifactsOf>[number]) => {
    const expires = a.createdAt + RETENTION_MS;
    return {
      id: a.id,
      node_id: `MDg6QXJ0aWZhY3Q${a.id}`,
      name: a.name,
      size_in_bytes: filesOf(a.dir).reduce((n, f) => n + f.data.length, 0),
      url: shapes.apiUrl(`/repos/${r.fullName}/actions/artifacts/${a.id}`),
      archive_download_url: shapes.apiUrl(`/repos/${r.fullName}/actions/artifacts/${a.id}/zip`),
      expired: env.now() >= expires,
      created_at: new Date(a.createdAt).toISOString(),
      expires_at: new Date(expires).toISOString(),
      updated_at: new Date(a.createdAt).toISOString(),
      workflow_run: {
        id: a.run.id,
        repository_id: r.id,
        head_repository_id: r.id,
        head_branch: a.run.ref,
        head_sha: a.run.headSha,
      },
    };
  };
  http.on('GET', '/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    actionsGranted(ctx);
    const w = runner.runs.find((x) => x.repo === r.fullName && x.id === Number(ctx.params.run_id));
    if (!w) throw new HttpError(404, 'Not Found');
    const list = artifactsOf(r.fullName)
      .filter((a) => a.run === w)
      .filter((a) => !ctx.query.get('name') || a.name === ctx.query.get('name'))
      .map((a) => artifactJson(r, a));
    const answer = http.page(ctx, list, `/repos/${r.fullName}/actions/runs/${w.id}/artifacts`);
    return { ...answer, body: { total_count: list.length, artifacts: answer.body } };
  });
  // The archive itself is served where the redirect points, to whoever holds the signed URL (as blob storage does).
  const sign = (id: number, until: number) => createHmac('sha256', env.blobKey).update(`${id}.${until}`).digest('hex');
  http.on('GET', '/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    actionsGranted(ctx);
    const a = artifactsOf(r.fullName).find((x) => x.id === Number(ctx.params.artifact_id));
    if (!a || ctx.params.archive_format !== 'zip') throw new HttpError(404, 'Not Found');
    if (env.now() >= a.createdAt + RETENTION_MS) throw new HttpError(410, 'Artifact has expired');
    const until = env.now() + DOWNLOAD_URL_MS;
    return {
      status: 302,
      headers: { location: `${shapes.url}/_artifacts/${a.id}?until=${until}&sig=${sign(a.id, until)}` },
    };
  });
  http.onBinary('/_artifacts/', (url) => {
    const id = Number(url.pathname.split('/').pop());
    const until = Number(url.searchParams.get('until'));
    if (!(until > env.now()) || url.searchParams.get('sig') !== sign(id, until)) return null;
    const a = runner.runs.flatMap((w) => Object.values(w.artifacts)).find((x) => x.id === id);
    return a ? { contentType: 'application/zip', body: writeZip(filesOf(a.dir)) } : null;
  });
  // DP03 without webhooks: the runs waiting at a protection rule, and what each waits on.
  http.on('GET', '/repos/{owner}/{repo}/actions/runs', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    actionsGranted(ctx);
    const status = ctx.query.get('status');
    const runs = runner.runs
      .filter((w) => w.repo === r.fullName)
      .filter((w) => !status || w.status === status || w.conclusion === status)
      .sort((a, b) => b.id - a.id)
      .map((w) => shapes.workflowRunJson(r, w));
    const answer = http.page(ctx, runs, `/repos/${r.fullName}/actions/runs`);
    return { ...answer, body: { total_count: runs.length, workflow_runs: answer.body } };
  });
  http.on('GET', '/repos/{owner}/{repo}/actions/runs/{run_id}/pending_deployments', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    actionsGranted(ctx);
    const w: WorkflowRunRecord | undefined = runner.runs.find(
      (x) => x.repo === r.fullName && x.id === Number(ctx.params.run_id),
    );
    if (!w) throw new HttpError(404, 'Not Found');
    const body = env.deployments.gates
      .filter((g) => g.repo === r.fullName && g.workflowRunId === w.id && g.pending.size > 0)
      .map((g) => {
        const e = env.deployments.environmentsOf(r).get(g.environment)!;
        return {
          environment: {
            id: e.id,
            node_id: `EN_${e.id}`,
            name: g.environment,
            url: shapes.apiUrl(`/repos/${r.fullName}/environments/${encodeURIComponent(g.environment)}`),
            html_url: `${shapes.url}/${r.fullName}/deployments/activity_log?environments_filter=${encodeURIComponent(g.environment)}`,
          },
          wait_timer: 0,
          wait_timer_started_at: null,
          current_user_can_approve: false,
          reviewers: [],
        };
      });
    return { status: 200, body };
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
