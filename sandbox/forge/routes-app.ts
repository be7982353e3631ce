import type { components } from '@octokit/openapi-types';
import { HttpError } from '../http-error.js';
import { readFileAtAsync } from '../git.js';
import { repoOf, type RouteEnv } from './routes-common.js';
import { isoNow } from './shapes.js';

// The app, its installations, and repository-level reads.

type Schemas = components['schemas'];

export function registerAppRoutes(env: RouteEnv): void {
  const { http, state, shapes, app, grants, installation } = env;
  http.on('GET', '/app', 'app', () => ({
    status: 200,
    body: {
      id: app.id,
      slug: app.slug,
      node_id: `A_${app.id}`,
      name: app.slug,
      owner: shapes.simpleUser(state.user('sandbox')),
    },
  }));
  http.on('GET', '/app/installations', 'app', (ctx) => {
    return http.page(ctx, state.installationIds().map(installation), '/app/installations');
  });
  http.on('POST', '/app/installations/{installation_id}/access_tokens', 'app', (ctx) => {
    const id = Number(ctx.params.installation_id);
    if (!state.installationIds().includes(id)) throw new HttpError(404, 'Not Found');
    // A token carries at most what the installation grants.
    const all = grants(id).permissions;
    const asked = ctx.body.permissions as Record<string, string> | undefined;
    const names = ctx.body.repositories as string[] | undefined;
    if (asked)
      for (const [k, v] of Object.entries(asked))
        if (!all[k] || (v === 'write' && all[k] !== 'write'))
          throw new HttpError(422, `The permissions requested are not granted to this installation.`);
    const mine = [...state.repos.values()].filter((r) => r.installationId === id).map((r) => r.name);
    if (names)
      for (const n of names)
        if (!mine.includes(n))
          throw new HttpError(
            422,
            `There is at least one repository that does not exist or is not accessible to the parent installation.`,
          );
    const scope =
      asked || names ? { repos: names ?? mine, permissions: { metadata: 'read', ...(asked ?? all) } } : undefined;
    const { token, expiresAt } = state.installationToken(id, scope);
    return {
      status: 201,
      body: {
        token,
        expires_at: isoNow(expiresAt),
        permissions: (scope?.permissions ?? all) as never,
        repository_selection: 'selected',
      } satisfies Partial<Schemas['installation-token']>,
    };
  });
  http.on('DELETE', '/installation/token', 'repo', (ctx) => {
    if (ctx.auth !== 'installation' || !ctx.token)
      throw new HttpError(403, 'This endpoint needs an installation access token');
    state.revoke(ctx.token);
    return { status: 204 };
  });
  http.on('GET', '/installation/repositories', 'repo', (ctx) => {
    if (ctx.auth !== 'installation') throw new HttpError(403, 'This endpoint needs an installation access token');
    // One page shaped at a time (a repository's shape reads its refs): ten thousand repositories list quickly.
    const repos = [...state.repos.values()].filter((r) => r.installationId === ctx.installationId);
    const { items, headers } = http.pageOf(ctx, repos, '/installation/repositories');
    const repositories = items.map((r) => shapes.repoJson(r));
    return { status: 200, headers, body: { total_count: repos.length, repositories } };
  });
  // The app (by its JWT) finds its installation on a repository; 404 where it is not installed.
  http.on('GET', '/repos/{owner}/{repo}/installation', 'app', (ctx) => {
    const r = state.repos.get(`${ctx.params.owner}/${ctx.params.repo}`);
    if (!r || r.installationId < 0) throw new HttpError(404, 'Not Found');
    return {
      status: 200,
      body: shapes.installationJson(r.installationId, r.owner, app, r.createdAt, grants(r.installationId)),
    };
  });
  http.on('GET', '/repos/{owner}/{repo}', 'repo', (ctx) => ({ status: 200, body: shapes.repoJson(repoOf(env, ctx)) }));
  http.on('GET', '/repos/{owner}/{repo}/contents/{path}', 'repo', async (ctx) => {
    const r = repoOf(env, ctx);
    const ref = ctx.query.get('ref') ?? r.defaultBranch;
    const path = decodeURIComponent(ctx.params.path!);
    const content = await readFileAtAsync(r.gitDir, ref, path);
    if (content === null) throw new HttpError(404, 'Not Found');
    if (ctx.accept.includes('raw'))
      return { status: 200, raw: content, headers: { 'content-type': 'text/plain; charset=utf-8' } };
    return { status: 200, body: shapes.contentJson(r, path, content) };
  });
  http.on('GET', '/repos/{owner}/{repo}/collaborators/{username}/permission', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const login = ctx.params.username!;
    const role = r.collaborators[login];
    if (!role && !state.users.has(login)) throw new HttpError(404, 'Not Found');
    const permission = role === 'maintain' ? 'write' : role === 'triage' ? 'read' : (role ?? 'none');
    return {
      status: 200,
      body: {
        permission,
        role_name: role ?? 'none',
        user: { ...shapes.simpleUser(state.user(login)), role_name: role ?? 'none' },
      } satisfies Partial<Schemas['repository-collaborator-permission']>,
    };
  });
}
