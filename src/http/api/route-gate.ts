import { fieldOf } from '../../kernel/guards.js';
import { makeRefusal, type Refusal } from '../../kernel/codes/table.js';
import type { FleetContext } from '../../fleet/context.js';
import type { Permission } from '../../kernel/permission.js';
import type { RepoRef } from '../../forge/types.js';
import type { Actor } from '../../delivery/context.js';
import { permits } from '../../kernel/permission.js';
import type { MatchedRoute } from './routes.js';

// TR25: the check every route passes before its handler runs. An operator
// token may call every route; a run's own credential only the routes that
// name it; a person what GitHub says their login may do on the route's
// repository, asked now (never remembered from an earlier request).

export type GateAnswer =
  | {
      ok: true;
      /** For a listing: whether this credential may see a repository's rows (a person: read access or more). */
      mayRead: (repo: string) => Promise<boolean>;
      /** The route's repository under the name yoke keeps for it, when a person named it in another casing. */
      repo?: string;
    }
  | { ok: false; refusal: Refusal };

/**
 * TR25: the repository a person names, as GitHub compares names (without regard to case): the one yoke
 * keeps, or, for one it has not seen, the app's installation on it as GitHub says. Null when the app
 * cannot see it: the gate then refuses, whatever the route.
 */
async function resolveRepo(deps: Pick<FleetContext, 'store' | 'forge'>, name: string): Promise<RepoRef | null> {
  const [owner, repo, extra] = name.split('/');
  if (!owner || !repo || extra !== undefined) return null;
  const known = await deps.store.repos.find(name);
  if (known?.installationId != null) {
    const [o = '', r = ''] = known.fullName.split('/');
    return { owner: o, name: r, fullName: known.fullName, installationId: known.installationId };
  }
  const installed = await deps.forge.readInstallation({ owner, name: repo, fullName: name, installationId: 0 });
  return installed ? { owner, name: repo, fullName: name, installationId: installed.id } : null;
}

/** A person's permission on each repository, as GitHub says it now: asked once per repository per request (null for one the app cannot see). */
export function personAccess(
  deps: Pick<FleetContext, 'store' | 'forge'>,
  login: string,
): {
  permissionOn: (repo: string) => Promise<{ ref: RepoRef; permission: Permission } | null>;
  mayRead: (repo: string) => Promise<boolean>;
} {
  const asked = new Map<string, Promise<{ ref: RepoRef; permission: Permission } | null>>();
  const permissionOn = (repo: string) => {
    const key = repo.toLowerCase();
    if (!asked.has(key))
      asked.set(
        key,
        resolveRepo(deps, repo).then(async (ref) =>
          ref ? { ref, permission: await deps.forge.getPermission(ref, login) } : null,
        ),
      );
    return asked.get(key)!;
  };
  const mayRead = async (repo: string) => {
    const p = await permissionOn(repo);
    return p !== null && permits(p.permission, 'read');
  };
  return { permissionOn, mayRead };
}

/** The repository a route acts on, by name, or null when the route names none yoke knows (its handler refuses it). */
async function routeRepo(
  deps: Pick<FleetContext, 'store' | 'forge'>,
  route: MatchedRoute,
  body: () => Promise<unknown>,
): Promise<string | null> {
  const p = route.params;
  switch (route.def.repo) {
    case 'path':
      return `${p.owner}/${p.name}`;
    case 'deployment-run':
      return (await deps.store.deploymentRuns.get(p.run!))?.repo ?? null;
    case 'yoke-run':
      return (await deps.store.runs.get(p.run!))?.repo ?? null;
    case 'body': {
      const repo = fieldOf(await body(), 'repo');
      return typeof repo === 'string' ? repo : null;
    }
    default:
      return null;
  }
}

export async function gateRoute(
  deps: Pick<FleetContext, 'store' | 'forge'>,
  route: MatchedRoute,
  actor: Actor,
  body: () => Promise<unknown>,
): Promise<GateAnswer> {
  const all = { ok: true as const, mayRead: async () => true };
  const { def } = route;
  if (def.role === 'public' || actor.role === 'operator') return all;
  if (actor.role === 'run')
    return def.run ? all : { ok: false, refusal: makeRefusal('run_role_forbidden', { run: actor.runId }) };
  if (def.role === 'operator' || def.role === 'run-report')
    return { ok: false, refusal: makeRefusal('operator_token_required', { what: def.what }) };
  const { permissionOn, mayRead } = personAccess(deps, actor.login);
  if (def.repo === 'listing') return { ok: true, mayRead };
  const repo = await routeRepo(deps, route, body);
  // A route whose run or body names no repository: its handler refuses it, and shows nothing.
  if (repo === null) return { ok: true, mayRead };
  const access = await permissionOn(repo);
  // Fail closed: a repository the app cannot see is refused as one that is not there, whoever asks.
  if (access === null) return { ok: false, refusal: makeRefusal('repo_not_installed', { repo }) };
  const need = def.role;
  if (!permits(access.permission, need))
    return {
      ok: false,
      refusal: makeRefusal('permission_required', {
        what: def.what,
        repo: access.ref.fullName,
        login: actor.login,
        permission: access.permission,
        need,
      }),
    };
  return { ok: true, mayRead, repo: access.ref.fullName };
}
