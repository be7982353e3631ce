import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_REPO, MAINTAINER } from '../../sandbox/demo-repo.js';
import { Sandbox } from '../../sandbox/sandbox.js';
import { unclaimedWarnings } from '../helpers/sandbox-log.js';

/** Warnings the tests below provoke, each asserted where it is. */
const CLAIMED_WARNINGS: string[] = [];

// Every route the embedded forge serves, checked against GitHub's published
// OpenAPI description (api.github.com, loaded from its single generated file):
// the route and method exist, the status is documented, response bodies have
// only documented fields of documented types (and, for the schemas the forge
// builds in full, every required field), and request bodies sent to it are
// documented too.

type Schema = Record<string, any>;
const docPath = join(
  dirname(createRequire(import.meta.url).resolve('@octokit/openapi/package.json')),
  'generated',
  'api.github.com.json',
);
let doc: {
  paths: Record<string, Record<string, any>>;
  components: { schemas: Record<string, Schema> };
  'x-webhooks': Record<string, Record<string, any>>;
};

/**
 * Routes whose bodies the forge fills only in part: repositories, pulls,
 * installations and workflow runs run to dozens of required URL fields no
 * client here reads. Their fields are still checked for names and types;
 * every other route must carry every required field.
 */
const PARTIAL_ROUTES = new Set([
  'GET /app',
  'GET /app/installations',
  'POST /app/installations/{installation_id}/access_tokens',
  'GET /installation/repositories',
  'GET /repos/{owner}/{repo}',
  'GET /repos/{owner}/{repo}/contents/{path}',
  'GET /repos/{owner}/{repo}/pulls',
  'POST /repos/{owner}/{repo}/pulls',
  'GET /repos/{owner}/{repo}/pulls/{pull_number}',
  'GET /repos/{owner}/{repo}/collaborators/{username}/permission',
  'GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs',
  'GET /repos/{owner}/{repo}/actions/runs/{run_id}',
  'GET /repos/{owner}/{repo}/commits/{ref}',
  'GET /repos/{owner}/{repo}/compare/{basehead}',
  'GET /repos/{owner}/{repo}/branches/{branch}',
]);

function resolve(s: Schema): { schema: Schema; name: string | null } {
  if (s?.$ref) {
    const name = String(s.$ref).split('/').pop()!;
    return { schema: doc.components.schemas[name]!, name };
  }
  return { schema: s, name: null };
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function check(raw: Schema, value: unknown, at: string, strict: boolean, problems: string[]): void {
  const { schema, name } = resolve(raw);
  if (!schema) return;
  const requireAll = strict;
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) {
    const ok = branches.some((b: Schema) => {
      const p: string[] = [];
      check(b, value, at, requireAll, p);
      return p.length === 0;
    });
    if (!ok) problems.push(`${at}: matches none of the documented alternatives`);
    return;
  }
  if (schema.allOf) {
    const merged: Schema = { type: 'object', properties: {}, required: [] };
    for (const part of schema.allOf) {
      const r = resolve(part).schema;
      Object.assign(merged.properties, r.properties);
      merged.required.push(...(r.required ?? []));
    }
    return check(merged, value, at, requireAll, problems);
  }
  const t = typeOf(value);
  const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (schema.nullable) types.push('null');
  if (types.length && !types.includes(t) && !(t === 'integer' && types.includes('number'))) {
    problems.push(`${at}: ${t}, documented as ${types.join('|')}`);
    return;
  }
  if (schema.enum && value !== null && !schema.enum.includes(value))
    problems.push(`${at}: ${JSON.stringify(value)} is not one of ${schema.enum.join(', ')}`);
  if (t === 'array' && schema.items)
    (value as unknown[]).forEach((v, i) => check(schema.items, v, `${at}[${i}]`, requireAll, problems));
  if (t === 'object' && schema.properties) {
    const obj = value as Record<string, unknown>;
    for (const [k, v] of Object.entries(obj)) {
      if (v === undefined) continue;
      if (!(k in schema.properties)) {
        if (schema.additionalProperties === undefined || schema.additionalProperties === false)
          problems.push(`${at}.${k}: not in the documented ${name ?? 'schema'}`);
        continue;
      }
      check(schema.properties[k], v, `${at}.${k}`, requireAll, problems);
    }
    if (requireAll)
      for (const k of schema.required ?? [])
        if (!(k in obj)) problems.push(`${at}.${k}: required by ${name ?? 'the schema'}, missing`);
  }
}

let sandbox: Sandbox;

beforeAll(async () => {
  doc = JSON.parse(readFileSync(docPath, 'utf8'));
  // Recording from the start: some routes (GET /app) are called only once, as yoke starts.
  sandbox = new Sandbox({ launcher: 'actions', failAgent: 0, issues: 1, tickSeconds: 1, recordResponses: true });
  await sandbox.start();
  await sandbox.waitUntil(() => sandbox.done(), 120_000, 'the demo issue to merge');
  // The routes the demo run does not need, called as a client would.
  const api = `${sandbox.forge.url}/api/v3`;
  const call = (method: string, path: string, body?: unknown, accept = 'application/vnd.github+json') =>
    fetch(`${api}${path}`, {
      method,
      headers: { authorization: `token ${sandbox.maintainerToken}`, accept, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const created = (await (
    await call('POST', `/repos/${DEMO_REPO}/issues`, {
      title: 'A new issue',
      body: 'From the conformance test',
      labels: ['question'],
    })
  ).json()) as { number: number };
  await call('POST', `/repos/${DEMO_REPO}/issues/${created.number}/labels`, { labels: ['yoke:afk'] });
  const comment = (await (
    await call('POST', `/repos/${DEMO_REPO}/issues/${created.number}/comments`, { body: 'Any news?' })
  ).json()) as { id: number };
  await call('POST', `/repos/${DEMO_REPO}/issues/comments/${comment.id}/reactions`, { content: 'eyes' });
  // Who reacted to a notice: yoke counts its recipient's reaction only.
  await call('GET', `/repos/${DEMO_REPO}/issues/comments/${comment.id}/reactions`);
  await call('PATCH', `/repos/${DEMO_REPO}/issues/comments/${comment.id}`, { body: 'Any news? (edited)' });
  const pr = [...sandbox.repo.issues.values()].find((i) => i.pull)!;
  await call('GET', `/repos/${DEMO_REPO}/pulls/${pr.number}`);
  // The yoke/lander check runs yoke wrote on the claim PR's head, as the PR's checks tab reads them.
  await call('GET', `/repos/${DEMO_REPO}/commits/${pr.pull!.headSha}/check-runs`);
  await call('POST', `/repos/${DEMO_REPO}/pulls/${pr.number}/reviews`, { event: 'COMMENT', body: 'Looks tidy.' });
  // A review asking for changes, with an inline comment on the first line of a file the PR adds, and the PR's inline comments read back.
  const changed = (await (await call('GET', `/repos/${DEMO_REPO}/pulls/${pr.number}/files`)).json()) as {
    filename: string;
  }[];
  const asked = await call('POST', `/repos/${DEMO_REPO}/pulls/${pr.number}/reviews`, {
    event: 'REQUEST_CHANGES',
    body: 'Please name the helper after what it does.',
    comments: [{ path: changed[0]!.filename, line: 1, body: 'This name.' }],
  });
  expect(asked.status).toBe(200);
  const inline = (await (await call('GET', `/repos/${DEMO_REPO}/pulls/${pr.number}/comments`)).json()) as {
    path: string;
    line: number;
    diff_hunk: string;
  }[];
  expect(inline.map((c) => [c.path, c.line, c.diff_hunk.split('\n')[0]!.startsWith('@@ -0,0 +1')])).toEqual([
    [changed[0]!.filename, 1, true],
  ]);
  await call('GET', `/repos/${DEMO_REPO}/contents/README.md`);
  // yoke reads a repository itself only when the installation's listing lacks its default branch.
  await call('GET', `/repos/${DEMO_REPO}`);
  // TR17: a run's push token revoked by the deliver job once its push is done.
  const push = sandbox.forge.state.installationToken(1, {
    repos: ['demo'],
    permissions: { contents: 'write', metadata: 'read' },
  });
  await fetch(`${api}/installation/token`, {
    method: 'DELETE',
    headers: { authorization: `token ${push.token}`, accept: 'application/vnd.github+json' },
  });
  const wf = sandbox.forge.runner.runs[0]!;
  // yoke reads one workflow run by id only when a run outlives its first liveness check: read it here too.
  await call('GET', `/repos/${DEMO_REPO}/actions/runs/${wf.id}`);
  await call('POST', `/repos/${DEMO_REPO}/actions/runs/${wf.id}/cancel`);
  await call('GET', `/repos/${DEMO_REPO}/collaborators/${MAINTAINER}/permission`);
  await call('POST', `/repos/${DEMO_REPO}/pulls`, { title: 'No such branch', head: 'nope', base: 'main' });
  // What delivery reads and writes: the pinned commit, merge order, the plans' tree, the tracking issue, labels.
  const head = (await (await call('GET', `/repos/${DEMO_REPO}/commits/HEAD`)).json()) as { sha: string };
  await call('GET', `/repos/${DEMO_REPO}/compare/${head.sha}...${head.sha}`);
  await call('GET', `/repos/${DEMO_REPO}/git/trees/${head.sha}?recursive=1`);
  await call('PATCH', `/repos/${DEMO_REPO}/issues/${created.number}`, {
    body: 'Edited body',
    state: 'closed',
    state_reason: 'completed',
  });
  await call('DELETE', `/repos/${DEMO_REPO}/issues/${created.number}/labels/question`);
  // TR05: who added a label (its labeled events), and what changed since (the poll that reconciles qa: labels).
  await call('GET', `/repos/${DEMO_REPO}/issues/${created.number}/events`);
  await call(
    'GET',
    `/repos/${DEMO_REPO}/issues?state=all&since=${new Date(Date.now() - 3600_000).toISOString()}&sort=updated&direction=asc`,
  );
  await call('GET', `/repos/${DEMO_REPO}/issues/comments/${comment.id}`);
  // DP01-DP03: a branch pinned and moved, a deployment with its statuses, an environment and its rules, the protection rule's callback.
  await call('POST', `/repos/${DEMO_REPO}/git/refs`, { ref: 'refs/heads/yoke/deploy/conformance', sha: head.sha });
  await call('PATCH', `/repos/${DEMO_REPO}/git/refs/heads%2Fyoke%2Fdeploy%2Fconformance`, {
    sha: head.sha,
    force: true,
  });
  // LD03: GitHub's merges API, as fast-forward landing builds a lander's commit with it (201, or 409 on a conflict).
  const merged = await call('POST', `/repos/${DEMO_REPO}/merges`, {
    base: 'yoke/deploy/conformance',
    head: pr.pull!.headSha,
    commit_message: 'Merge for the conformance check',
  });
  expect([201, 409]).toContain(merged.status);
  // LD04: a branch's rules, one of them a merge queue, as GitHub's schema for a merge queue rule has them.
  sandbox.repo.mergeQueue.add('yoke/deploy/conformance');
  const rules = (await (
    await call('GET', `/repos/${DEMO_REPO}/rules/branches/yoke%2Fdeploy%2Fconformance?per_page=100`)
  ).json()) as { type: string }[];
  sandbox.repo.mergeQueue.delete('yoke/deploy/conformance');
  expect(rules.map((rule) => rule.type)).toEqual(['merge_queue']);
  // LD04: the merge groups' branches, and a group commit's parents as the git database has them.
  await call('GET', `/repos/${DEMO_REPO}/git/matching-refs/heads%2Fgh-readonly-queue%2Fmain%2F`);
  await call('GET', `/repos/${DEMO_REPO}/git/commits/${head.sha}`);
  // The queue itself is GraphQL's (no REST API): served at /api/graphql, outside the REST description.
  const queue = await fetch(`${sandbox.forge.url}/api/graphql`, {
    method: 'POST',
    headers: { authorization: `token ${sandbox.maintainerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      query:
        'query($owner: String!, $name: String!, $branch: String!) { repository(owner: $owner, name: $name) { mergeQueue(branch: $branch) { entries(first: 100) { nodes { position pullRequest { number headRefOid } } } } } }',
      variables: { owner: DEMO_REPO.split('/')[0], name: DEMO_REPO.split('/')[1], branch: 'main' },
    }),
  });
  expect(await queue.json()).toEqual({ data: { repository: { mergeQueue: null } } });
  const dep = (await (
    await call('POST', `/repos/${DEMO_REPO}/deployments`, {
      ref: head.sha,
      environment: 'staging',
      auto_merge: false,
      required_contexts: [],
      payload: { yoke_deployment_run: 'dr-x' },
      description: 'conformance',
    })
  ).json()) as { id: number };
  await call('POST', `/repos/${DEMO_REPO}/deployments/${dep.id}/statuses`, {
    state: 'success',
    log_url: `${sandbox.forge.url}/${DEMO_REPO}/actions/runs/1`,
    description: 'deployed',
    auto_inactive: true,
  });
  await call('GET', `/repos/${DEMO_REPO}/deployments/${dep.id}/statuses`);
  await call('GET', `/repos/${DEMO_REPO}/deployments?environment=staging`);
  await call('GET', `/repos/${DEMO_REPO}/branches/main`);
  await call('GET', `/repos/${DEMO_REPO}/environments/production`);
  await call('GET', `/repos/${DEMO_REPO}/environments/production/deployment_protection_rules`);
  await call('POST', `/repos/${DEMO_REPO}/actions/runs/${wf.id}/deployment_protection_rule`, {
    environment_name: 'production',
    state: 'approved',
    comment: 'not the app',
  });
  // DP03: a deploy to production by hand: its job waits at yoke's rule, the forge sends deployment_protection_rule, and yoke answers at the callback.
  const waiting = sandbox.forge.runner.runs.length;
  await call('POST', `/repos/${DEMO_REPO}/actions/workflows/deploy.yml/dispatches`, {
    ref: 'main',
    inputs: { environment: 'production' },
  });
  await sandbox.waitUntil(
    () => sandbox.forge.runner.runs[waiting]?.status === 'completed',
    30_000,
    'the hand-started deploy to be answered',
  );
  // yoke doctor: the installation (by the app's JWT), the secrets' names, an environment's branch policy.
  sandbox.forge.deployments.setBranchPolicy(sandbox.repo, 'production', {
    kind: 'custom',
    branches: ['yoke/deploy/*'],
  });
  expect((await sandbox.api('GET', `/yoke/api/repos/${DEMO_REPO}/doctor`)).status).toBe(200);
  await call('GET', `/repos/${DEMO_REPO}/environments/production/deployment-branch-policies`);
  // Runs that reach yoke through GitHub: the runner published with the git data API, a result artifact listed and
  // downloaded (through the redirect), a branch removed, and the runs waiting at a protection rule.
  const blob = (await (
    await call('POST', `/repos/${DEMO_REPO}/git/blobs`, {
      content: Buffer.from('// runner').toString('base64'),
      encoding: 'base64',
    })
  ).json()) as { sha: string };
  const tree = (await (
    await call('POST', `/repos/${DEMO_REPO}/git/trees`, {
      tree: [{ path: 'yoke-runner.mjs', mode: '100644', type: 'blob', sha: blob.sha }],
    })
  ).json()) as { sha: string };
  const commit = (await (
    await call('POST', `/repos/${DEMO_REPO}/git/commits`, { message: 'runner', tree: tree.sha, parents: [] })
  ).json()) as { sha: string };
  await call('POST', `/repos/${DEMO_REPO}/git/refs`, { ref: `refs/yoke/runner/${'a'.repeat(64)}`, sha: commit.sha });
  await call('GET', `/repos/${DEMO_REPO}/git/ref/yoke%2Frunner%2F${'a'.repeat(64)}`);
  await call('DELETE', `/repos/${DEMO_REPO}/git/refs/heads%2Fyoke%2Fdeploy%2Fconformance`);
  const kept = join(sandbox.dataDir, 'conformance-artifact');
  mkdirSync(kept, { recursive: true });
  writeFileSync(join(kept, 'result.json'), '{}');
  wf.artifacts['yoke-result'] = { id: 424242, dir: kept, createdAt: Date.now() };
  await call('GET', `/repos/${DEMO_REPO}/actions/runs/${wf.id}/artifacts`);
  const zip = await call('GET', `/repos/${DEMO_REPO}/actions/artifacts/424242/zip`);
  expect([zip.status, zip.headers.get('content-type')]).toEqual([200, 'application/zip']);
  await call('GET', `/repos/${DEMO_REPO}/actions/runs?status=waiting`);
  await call('GET', `/repos/${DEMO_REPO}/actions/runs/${wf.id}/pending_deployments`);
  await call('PUT', `/repos/${DEMO_REPO}/issues/${created.number}/lock`);
  await call('DELETE', `/repos/${DEMO_REPO}/issues/${created.number}/lock`);
}, 150_000);

afterAll(async () => {
  await sandbox?.stop();
});

/** Routes outside the REST description: GitHub's GraphQL endpoint (LD04: the merge queue has no REST API). */
const NOT_REST = new Set(['POST /graphql']);
const rest = <T extends { method: string }>(r: T & ({ path: string } | { route: string })): boolean =>
  !NOT_REST.has(`${r.method} ${'path' in r ? r.path : r.route}`);

describe('the embedded forge against api.github.com', () => {
  it('serves only routes GitHub documents, with their methods', () => {
    const missing = sandbox.forge.routes
      .filter(rest)
      .filter((r) => !doc.paths[r.path]?.[r.method.toLowerCase()])
      .map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
  });

  it('has exercised every route it serves, in the demo or above', () => {
    const seen = new Set(sandbox.forge.served.map((s) => `${s.method} ${s.route}`));
    expect(sandbox.forge.routes.map((r) => `${r.method} ${r.path}`).filter((r) => !seen.has(r))).toEqual([]);
  });

  it('answers with documented statuses, and bodies of documented fields and types', () => {
    const problems: string[] = [];
    for (const s of sandbox.forge.served.filter(rest)) {
      const op = doc.paths[s.route]![s.method.toLowerCase()];
      const res = op.responses[String(s.status)];
      if (!res) {
        if (s.status >= 400) continue; // GitHub answers any route with 401/404/422 errors of its own shape
        problems.push(`${s.method} ${s.route}: status ${s.status} is not documented`);
        continue;
      }
      const schema = res.content?.['application/json']?.schema;
      if (schema && typeof s.body !== 'string')
        check(
          schema,
          s.body,
          `${s.method} ${s.route} ${s.status}`,
          !PARTIAL_ROUTES.has(`${s.method} ${s.route}`),
          problems,
        );
    }
    // The description's own gap: its shared App Permissions schema has merge_queues (which app.yml asks for),
    // but the copy inlined in the installations listing predates it. GitHub answers with every granted one.
    expect(doc.components.schemas['app-permissions']!.properties.merge_queues).toBeDefined();
    const gap = /^GET \/app\/installations 200\[\d+\]\.permissions\.merge_queues: not in the documented schema$/;
    expect([...new Set(problems)].filter((p) => !gap.test(p))).toEqual([]);
  });

  it('receives request bodies that GitHub documents', () => {
    const problems: string[] = [];
    for (const s of sandbox.forge.served.filter(rest)) {
      if (s.request === undefined) continue;
      const schema = doc.paths[s.route]![s.method.toLowerCase()].requestBody?.content?.['application/json']?.schema;
      if (!schema) problems.push(`${s.method} ${s.route}: takes no documented body`);
      else check(schema, s.request, `${s.method} ${s.route} request`, false, problems);
    }
    expect([...new Set(problems)]).toEqual([]);
  });
});

describe("the embedded forge's webhooks against GitHub's description", () => {
  it('DP04 sends a deployment_protection_rule payload of documented fields and types, with every required one', () => {
    const sent = sandbox.forge.deliveries.filter((d) => d.event === 'deployment_protection_rule');
    expect(sent.length).toBeGreaterThan(0);
    const schema =
      doc['x-webhooks']['deployment-protection-rule-requested']!.post.requestBody.content['application/json'].schema;
    const problems: string[] = [];
    // Repositories and the deployment run to dozens of URL fields no client reads: names and types are checked, and the event's own required fields.
    for (const d of sent) check(schema, JSON.parse(d.payload), 'deployment_protection_rule', false, problems);
    const top = resolve(schema).schema;
    for (const d of sent)
      for (const k of top.required ?? [])
        if (!(k in JSON.parse(d.payload))) problems.push(`deployment_protection_rule.${k}: required, missing`);
    expect([...new Set(problems)]).toEqual([]);
  });
});

describe("the embedded forge's installation webhooks against GitHub's description", () => {
  it('SC10 announces repositories added to an installation as an installation_repositories payload of documented fields, with every required one', async () => {
    const repo = sandbox.forge.createRepo('acme/added-later', { files: { 'README.md': 'new\n' }, installationId: 1 });
    sandbox.forge.state.announceAdded(1, [repo], sandbox.forge.user('acme'));
    await expect
      .poll(() => sandbox.forge.deliveries.filter((d) => d.event === 'installation_repositories').length)
      .toBe(1);
    const [sent] = sandbox.forge.deliveries.filter((d) => d.event === 'installation_repositories');
    const payload = JSON.parse(sent!.payload);
    expect(payload.repositories_added.map((r: { full_name: string }) => r.full_name)).toEqual(['acme/added-later']);
    const schema =
      doc['x-webhooks']['installation-repositories-added']!.post.requestBody.content['application/json'].schema;
    const problems: string[] = [];
    check(schema, payload, 'installation_repositories', false, problems);
    for (const k of resolve(schema).schema.required ?? [])
      if (!(k in payload)) problems.push(`installation_repositories.${k}: required, missing`);
    expect([...new Set(problems)]).toEqual([]);
  });
});

describe('what yoke logged here', () => {
  it('holds no warning or error that no test here claimed', () => {
    expect(unclaimedWarnings(sandbox, CLAIMED_WARNINGS)).toEqual([]);
  });
});
