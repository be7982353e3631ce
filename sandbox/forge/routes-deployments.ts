import { meetsRequiredCheck } from './records.js';
import { parseClosingRefs } from '../../src/forge/body-text.js';
import { git, isAncestor, revParse } from '../git.js';
import { HttpError } from '../http-error.js';
import type { Ctx } from './http.js';
import {
  STATUS_STATES,
  type Deployment,
  type DeploymentStatus,
  type Environment,
  type StatusState,
} from './deployments.js';
import { repoOf, requireWrite, type RouteEnv } from './routes-common.js';
import type { ForgeRepo } from './state.js';
import type { Shapes } from './shapes.js';

// Deployments, deployment statuses, environments and their custom protection
// rules, branches made through the API, and the protection rule's callback,
// as GitHub's REST API serves them (checked against its OpenAPI description).

const SHA = /^[0-9a-f]{40}$/;

export function deploymentJson(shapes: Shapes, r: ForgeRepo, d: Deployment) {
  const url = shapes.apiUrl(`/repos/${r.fullName}/deployments/${d.id}`);
  return {
    url,
    id: d.id,
    node_id: `DE_${d.id}`,
    sha: d.sha,
    ref: d.ref,
    task: d.task,
    payload: d.payload,
    original_environment: d.environment,
    environment: d.environment,
    description: d.description,
    creator: shapes.simpleUser(d.creator),
    created_at: new Date(d.createdAt).toISOString(),
    updated_at: new Date(d.updatedAt).toISOString(),
    statuses_url: `${url}/statuses`,
    repository_url: shapes.apiUrl(`/repos/${r.fullName}`),
    transient_environment: false,
    production_environment: d.environment === 'production',
  };
}

function statusJson(shapes: Shapes, r: ForgeRepo, d: Deployment, s: DeploymentStatus) {
  const deploymentUrl = shapes.apiUrl(`/repos/${r.fullName}/deployments/${d.id}`);
  return {
    url: `${deploymentUrl}/statuses/${s.id}`,
    id: s.id,
    node_id: `DES_${s.id}`,
    state: s.state,
    creator: shapes.simpleUser(s.creator),
    description: s.description,
    environment: d.environment,
    target_url: s.logUrl,
    created_at: new Date(s.createdAt).toISOString(),
    updated_at: new Date(s.createdAt).toISOString(),
    deployment_url: deploymentUrl,
    repository_url: shapes.apiUrl(`/repos/${r.fullName}`),
    environment_url: s.environmentUrl,
    log_url: s.logUrl,
  };
}

function environmentJson(shapes: Shapes, r: ForgeRepo, e: Environment) {
  return {
    id: e.id,
    node_id: `EN_${e.id}`,
    name: e.name,
    url: shapes.apiUrl(`/repos/${r.fullName}/environments/${encodeURIComponent(e.name)}`),
    html_url: `${shapes.url}/${r.fullName}/deployments/activity_log?environments_filter=${encodeURIComponent(e.name)}`,
    created_at: new Date(e.createdAt).toISOString(),
    updated_at: new Date(e.updatedAt).toISOString(),
    protection_rules: [],
    deployment_branch_policy:
      e.branchPolicy.kind === 'all'
        ? null
        : {
            protected_branches: e.branchPolicy.kind === 'protected',
            custom_branch_policies: e.branchPolicy.kind === 'custom',
          },
  };
}

function ruleJson(shapes: Shapes, rule: Environment['rules'][number]) {
  return {
    id: rule.id,
    node_id: `DPR_${rule.id}`,
    enabled: rule.enabled,
    app: {
      id: rule.app.id,
      slug: rule.app.slug,
      integration_url: shapes.apiUrl(`/apps/${rule.app.slug}`),
      node_id: `A_${rule.app.id}`,
    },
  };
}

const text = (v: unknown, field: string, max = 140): string => {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string' || v.length > max)
    throw new HttpError(422, `${field} must be a string of at most ${max} characters`);
  return v;
};

function requireApp(ctx: Ctx): void {
  if (ctx.auth !== 'installation') throw new HttpError(403, 'You must authenticate via a GitHub App.');
}

export function registerDeploymentRoutes(env: RouteEnv): void {
  const { http, shapes, state, deployments, app } = env;
  http.on('POST', '/repos/{owner}/{repo}/deployments', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    requireWrite(env, r, ctx);
    const ref = String(ctx.body.ref ?? '');
    const sha = SHA.test(ref) ? revParse(r.gitDir, ref) : revParse(r.gitDir, `refs/heads/${ref}`);
    if (!ref || !sha) throw new HttpError(422, `No ref found for: ${ref}`);
    const contexts = ctx.body.required_contexts;
    if (contexts !== undefined && !(Array.isArray(contexts) && contexts.every((c) => typeof c === 'string')))
      throw new HttpError(422, 'required_contexts must be an array of strings');
    // The forge keeps no commit statuses: a required context has never passed.
    if (Array.isArray(contexts) && contexts.length)
      throw new HttpError(409, `Conflict: Commit status checks failed for ${ref}.`);
    const payload = ctx.body.payload ?? {};
    if (typeof payload !== 'string' && (typeof payload !== 'object' || Array.isArray(payload)))
      throw new HttpError(422, 'payload must be an object or a string');
    const d = deployments.create(r, {
      sha,
      ref,
      task: text(ctx.body.task, 'task') || 'deploy',
      environment: text(ctx.body.environment, 'environment', 255) || 'production',
      description: text(ctx.body.description, 'description') || null,
      payload: payload as Deployment['payload'],
      creator: ctx.actor!,
    });
    return { status: 201, body: deploymentJson(shapes, r, d) };
  });
  http.on('GET', '/repos/{owner}/{repo}/deployments', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const q = (k: string) => ctx.query.get(k);
    const list = deployments.deployments
      .filter(
        (d) =>
          d.repo === r.fullName &&
          (!q('environment') || d.environment === q('environment')) &&
          (!q('sha') || d.sha === q('sha')) &&
          (!q('ref') || d.ref === q('ref')),
      )
      .sort((a, b) => b.id - a.id)
      .map((d) => deploymentJson(shapes, r, d));
    return http.page(ctx, list, `/repos/${r.fullName}/deployments`);
  });
  http.on('POST', '/repos/{owner}/{repo}/deployments/{deployment_id}/statuses', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    requireWrite(env, r, ctx);
    const d = deployments.find(r, Number(ctx.params.deployment_id));
    const st = ctx.body.state as StatusState;
    if (!STATUS_STATES.includes(st) || st === 'waiting')
      throw new HttpError(422, `state is not one of ${STATUS_STATES.filter((s) => s !== 'waiting').join(', ')}`);
    const s = deployments.addStatus(d, {
      state: st,
      description: text(ctx.body.description, 'description'),
      logUrl: text(ctx.body.log_url ?? ctx.body.target_url, 'log_url', 2000),
      environmentUrl: text(ctx.body.environment_url, 'environment_url', 2000),
      creator: ctx.actor!,
      autoInactive: ctx.body.auto_inactive !== false,
    });
    return { status: 201, body: statusJson(shapes, r, d, s) };
  });
  http.on('GET', '/repos/{owner}/{repo}/deployments/{deployment_id}/statuses', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const d = deployments.find(r, Number(ctx.params.deployment_id));
    return http.page(
      ctx,
      d.statuses.map((s) => statusJson(shapes, r, d, s)),
      `/repos/${r.fullName}/deployments/${d.id}/statuses`,
    );
  });
  http.on('GET', '/repos/{owner}/{repo}/environments/{environment_name}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const e = deployments.environmentsOf(r).get(ctx.params.environment_name!);
    if (!e) throw new HttpError(404, 'Not Found');
    return { status: 200, body: environmentJson(shapes, r, e) };
  });
  // GitHub answers 404 unless the environment's policy is a custom list.
  http.on('GET', '/repos/{owner}/{repo}/environments/{environment_name}/deployment-branch-policies', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const e = deployments.environmentsOf(r).get(ctx.params.environment_name!);
    if (!e || e.branchPolicy.kind !== 'custom') throw new HttpError(404, 'Not Found');
    const branch_policies = e.branchPolicy.branches.map((b) => ({
      id: b.id,
      node_id: `DBP_${b.id}`,
      name: b.name,
      type: 'branch' as const,
    }));
    return { status: 200, body: { total_count: branch_policies.length, branch_policies } };
  });
  http.on('GET', '/repos/{owner}/{repo}/environments/{environment_name}/deployment_protection_rules', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const e = deployments.environmentsOf(r).get(ctx.params.environment_name!);
    if (!e) throw new HttpError(404, 'Not Found');
    const rules = e.rules.filter((x) => x.enabled);
    return {
      status: 200,
      body: { total_count: rules.length, custom_deployment_protection_rules: e.rules.map((x) => ruleJson(shapes, x)) },
    };
  });
  // Only the app whose rule a waiting job is held by may answer it, and only once.
  http.on('POST', '/repos/{owner}/{repo}/actions/runs/{run_id}/deployment_protection_rule', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    requireApp(ctx);
    const state = ctx.body.state;
    if (state !== 'approved' && state !== 'rejected') throw new HttpError(422, 'state must be approved or rejected');
    const answered = deployments.answer(
      r,
      Number(ctx.params.run_id),
      String(ctx.body.environment_name ?? ''),
      app.slug,
      state,
      text(ctx.body.comment, 'comment', 1000),
    );
    if (!answered)
      throw new HttpError(
        422,
        `No pending deployment protection rule of ${app.slug} for ${String(ctx.body.environment_name)} in run ${ctx.params.run_id}.`,
      );
    return { status: 204 };
  });
  http.on('POST', '/repos/{owner}/{repo}/git/refs', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    requireWrite(env, r, ctx);
    const ref = String(ctx.body.ref ?? '');
    const sha = String(ctx.body.sha ?? '');
    // GitHub takes any name under refs/ with at least two slashes (yoke keeps its runner under refs/yoke/runner/).
    if (!/^refs\/[\w./-]+$/.test(ref) || ref.split('/').length < 3 || ref.includes('..'))
      throw new HttpError(422, 'Reference name is not valid');
    if (!SHA.test(sha) || !revParse(r.gitDir, sha)) throw new HttpError(422, 'Object does not exist');
    if (ref.startsWith(QUEUE_REFS)) throw new HttpError(422, 'Reference update failed');
    if (revParse(r.gitDir, ref)) throw new HttpError(422, 'Reference already exists');
    git(r.gitDir, ['update-ref', ref, sha]);
    // Push events are for branches and tags only.
    if (/^refs\/(heads|tags)\//.test(ref)) state.pushed(r, ref, null, sha, [], ctx.actor!);
    return { status: 201, body: refJson(shapes, r, ref, sha) };
  });
  http.on('PATCH', '/repos/{owner}/{repo}/git/refs/{ref}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    requireWrite(env, r, ctx);
    const ref = `refs/${ctx.params.ref!}`;
    const sha = String(ctx.body.sha ?? '');
    const before = revParse(r.gitDir, ref);
    if (!before) throw new HttpError(422, 'Reference does not exist');
    if (!SHA.test(sha) || !revParse(r.gitDir, sha)) throw new HttpError(422, 'Object does not exist');
    if (ref.startsWith(QUEUE_REFS)) throw new HttpError(422, 'Reference update failed');
    let ahead = false;
    try {
      git(r.gitDir, ['merge-base', '--is-ancestor', before, sha]);
      ahead = true;
    } catch {
      ahead = false;
    }
    const branch = ref.replace(/^refs\/heads\//, '');
    if (r.protectedBranches.has(branch) && !r.rulesetBypass.has(ctx.actor?.login ?? ''))
      throw new HttpError(
        422,
        `Repository rule violations found for ${ref}.\n\n- Changes must be made through a pull request.`,
      );
    // "Commits must first be pushed to another ref where the checks pass" (a ruleset's required status checks).
    const bypass = r.rulesetBypass.has(ctx.actor?.login ?? '');
    for (const need of bypass ? [] : (r.requiredChecks.get(branch) ?? [])) {
      const passed = r.checkRuns.some(
        (c) =>
          c.headSha === sha && meetsRequiredCheck(c, need) && c.status === 'completed' && c.conclusion === 'success',
      );
      if (!passed)
        throw new HttpError(
          422,
          `Repository rule violations found for ${ref}.\n\n- Required status check "${need.context}" is expected.`,
        );
    }
    if (!ahead && ctx.body.force !== true) throw new HttpError(422, 'Update is not a fast forward');
    git(r.gitDir, ['update-ref', ref, sha]);
    state.pushed(r, ref, before, sha, [], ctx.actor!);
    landedByPush(r, branch, before, sha, state.now());
    return { status: 200, body: refJson(shapes, r, ref, sha) };
  });
  http.on('GET', '/repos/{owner}/{repo}/git/ref/{ref}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const ref = `refs/${ctx.params.ref!}`;
    const sha = /^refs\/[\w./-]+$/.test(ref) && !ref.includes('..') ? revParse(r.gitDir, ref) : null;
    if (!sha) throw new HttpError(404, 'Not Found');
    return { status: 200, body: refJson(shapes, r, ref, sha) };
  });
  http.on('DELETE', '/repos/{owner}/{repo}/git/refs/{ref}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    requireWrite(env, r, ctx);
    const ref = `refs/${ctx.params.ref!}`;
    const before = /^refs\/[\w./-]+$/.test(ref) && !ref.includes('..') ? revParse(r.gitDir, ref) : null;
    if (!before) throw new HttpError(422, 'Reference does not exist');
    if (ref === `refs/heads/${r.defaultBranch}`) throw new HttpError(422, 'Cannot delete the default branch');
    if (ref.startsWith(QUEUE_REFS)) throw new HttpError(422, 'Reference update failed');
    git(r.gitDir, ['update-ref', '-d', ref]);
    return { status: 204 };
  });
}

/**
 * GitHub marks a PR merged when its head reaches its base branch by a push (or a ref update): merged at the
 * commit that merged it, and the issues it closes closed.
 */
/** LD04: the merge queue's branches, which only GitHub's queue writes. */
const QUEUE_REFS = 'refs/heads/gh-readonly-queue/';

export function landedByPush(r: ForgeRepo, branch: string, before: string, after: string, t: number): void {
  const parents = git(r.gitDir, ['rev-list', '--reverse', '--parents', `${before}..${after}`])
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' '));
  for (const i of r.issues.values()) {
    if (!i.pull || i.state !== 'open' || i.pull.baseRef !== branch) continue;
    if (!isAncestor(r.gitDir, i.pull.headSha, after)) continue;
    const at = parents.find(([, ...ps]) => ps.includes(i.pull!.headSha))?.[0] ?? after;
    Object.assign(i.pull, { merged: true, mergedAt: t, mergeCommitSha: at, mergeNamedSha: null });
    Object.assign(i, { state: 'closed', closedAt: t, updatedAt: t });
    for (const n of parseClosingRefs(i.body)) {
      const target = r.issues.get(n);
      if (target && !target.pull && target.state === 'open')
        Object.assign(target, { state: 'closed', stateReason: 'completed', closedAt: t, updatedAt: t });
    }
  }
}

function refJson(shapes: Shapes, r: ForgeRepo, ref: string, sha: string) {
  return {
    ref,
    node_id: `REF_${sha.slice(0, 8)}`,
    url: shapes.apiUrl(`/repos/${r.fullName}/git/${ref}`),
    object: { type: 'commit', sha, url: shapes.apiUrl(`/repos/${r.fullName}/git/commits/${sha}`) },
  };
}
