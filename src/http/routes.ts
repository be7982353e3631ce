// Every route yoke serves, once, with who may call it (TR25). The handlers
// dispatch as before; before any of them runs, the route's role is checked
// against the credential, and a person's against what GitHub says their
// login may do on the route's repository, asked at the time.

/**
 * Who may call a route:
 * - `public`: anyone (the runner, health, the dashboard's sign-in);
 * - `run-report`: a run's own credential (its OIDC token or run secret), checked by the handler against that run;
 * - `read`, `write`, `maintain`: an operator token, or a person whose GitHub permission on the route's repository is at least that;
 * - `operator`: operator tokens only.
 */
export type RouteRole = 'public' | 'run-report' | 'read' | 'write' | 'maintain' | 'operator';

/**
 * Where a person's permission is asked for: the repository in the path, the deployment run's or yoke run's
 * repository, the body's `repo`, or (a listing) each repository listed, whose rows a person sees only where
 * they may read.
 */
export type RepoFrom = 'path' | 'deployment-run' | 'yoke-run' | 'body' | 'listing' | 'none';

export interface RouteDef {
  method: 'GET' | 'POST';
  /** The path, with `:name` for each parameter (`:owner/:name` for a repository). */
  path: string;
  role: RouteRole;
  repo: RepoFrom;
  /** A live yoke run's own credential may call it too, for the QA of the item it holds. */
  run?: true;
  /** What the route does, in words a refusal can use ("Creating a deployment run"). */
  what: string;
}

const DR = '/yoke/api/deployment-runs/:run';

export const ROUTES: readonly RouteDef[] = [
  { method: 'GET', path: '/yoke', role: 'operator', repo: 'none', what: 'Reading the dashboard' },
  { method: 'GET', path: '/yoke/dashboard', role: 'operator', repo: 'none', what: 'Reading the dashboard' },
  { method: 'GET', path: '/yoke/repos/:owner/:name', role: 'operator', repo: 'none', what: "Reading a repository's dashboard" },
  { method: 'GET', path: '/yoke/dashboard.js', role: 'public', repo: 'none', what: "Loading the dashboard's script" },
  { method: 'POST', path: '/yoke/session', role: 'public', repo: 'none', what: 'Signing in' },
  { method: 'POST', path: '/yoke/session/end', role: 'public', repo: 'none', what: 'Signing out' },
  { method: 'GET', path: '/yoke/api/health', role: 'public', repo: 'none', what: 'Asking whether yoke is up' },
  { method: 'GET', path: '/yoke/runner.mjs', role: 'public', repo: 'none', what: "Fetching yoke's runner" },
  { method: 'POST', path: '/yoke/api/runs/:run/push', role: 'run-report', repo: 'none', what: 'Asking for a push token' },
  { method: 'POST', path: '/yoke/api/runs/:run/claim', role: 'run-report', repo: 'none', what: 'Opening a claim PR' },
  { method: 'POST', path: '/yoke/api/runs/:run/result', role: 'run-report', repo: 'none', what: "Reporting a run's result" },
  { method: 'GET', path: '/yoke/api/fleet', role: 'operator', repo: 'none', what: 'Reading the fleet report' },
  { method: 'GET', path: '/yoke/api/runs', role: 'read', repo: 'listing', what: 'Listing runs' },
  { method: 'GET', path: '/yoke/api/runs/:run', role: 'read', repo: 'yoke-run', what: 'Reading a run' },
  { method: 'GET', path: '/yoke/api/repos/:owner/:name/status', role: 'read', repo: 'path', what: "Reading a repository's status" },
  { method: 'POST', path: '/yoke/api/repos/:owner/:name/auto', role: 'write', repo: 'path', what: 'Switching the auto loop' },
  { method: 'POST', path: '/yoke/api/repos/:owner/:name/reset', role: 'write', repo: 'path', what: 'Resetting a repository' },
  { method: 'POST', path: '/yoke/api/repos/:owner/:name/issues/:number/start', role: 'write', repo: 'path', what: 'Starting work on an issue' },
  { method: 'POST', path: '/yoke/api/repos/:owner/:name/pulls/:number/land', role: 'write', repo: 'path', what: 'Landing a claim PR' },
  { method: 'GET', path: '/yoke/api/deployment-runs', role: 'read', repo: 'listing', what: 'Listing deployment runs' },
  { method: 'POST', path: '/yoke/api/deployment-runs', role: 'write', repo: 'body', what: 'Creating a deployment run' },
  { method: 'GET', path: DR, role: 'read', repo: 'deployment-run', what: 'Reading a deployment run' },
  { method: 'GET', path: `${DR}/requests/:request`, role: 'read', repo: 'deployment-run', what: "Reading a gate check's result" },
  { method: 'POST', path: `${DR}/checkin`, role: 'write', repo: 'deployment-run', what: 'Driving a deployment run' },
  { method: 'POST', path: `${DR}/executions/:execution/end`, role: 'write', repo: 'deployment-run', what: 'Ending a plan execution' },
  { method: 'POST', path: `${DR}/executions/:execution/renew`, role: 'write', repo: 'deployment-run', what: 'Renewing a plan execution' },
  { method: 'POST', path: `${DR}/members/:item/remove`, role: 'maintain', repo: 'deployment-run', what: 'Removing a member' },
  { method: 'GET', path: `${DR}/stages/:stage/work`, role: 'read', repo: 'deployment-run', run: true, what: "Reading a stage's QA work" },
  { method: 'POST', path: `${DR}/stages/:stage/dispatch`, role: 'write', repo: 'deployment-run', what: 'Gate-checking a stage' },
  { method: 'POST', path: `${DR}/stages/:stage/verdicts`, role: 'write', repo: 'deployment-run', run: true, what: 'Recording a QA verdict' },
  { method: 'POST', path: `${DR}/stages/:stage/waive`, role: 'maintain', repo: 'deployment-run', what: 'Waiving a QA case' },
  { method: 'POST', path: `${DR}/stages/:stage/deploy`, role: 'write', repo: 'deployment-run', what: 'Reporting a deploy stage' },
  { method: 'POST', path: `${DR}/stages/:stage/executions`, role: 'write', repo: 'deployment-run', what: 'Starting a plan execution' },
];

const PARAM: Record<string, string> = {
  owner: '[\\w.-]+',
  name: '[\\w.-]+',
  number: '\\d+',
  run: '[\\w-]{1,100}',
  request: '[\\w.:-]{1,100}',
  execution: '[\\w-]{1,40}',
  item: '[\\w-]{1,30}',
  stage: '[\\w-]{1,40}',
};

interface Compiled {
  def: RouteDef;
  re: RegExp;
  names: string[];
}

const COMPILED: Compiled[] = ROUTES.map((def) => {
  const names: string[] = [];
  const re = def.path.replace(/[.]/g, '\\.').replace(/:(\w+)/g, (_m, n: string) => {
    names.push(n);
    return `(${PARAM[n] ?? '[^/]+'})`;
  });
  return { def, re: new RegExp(`^${re}$`), names };
});

export interface MatchedRoute {
  def: RouteDef;
  params: Record<string, string>;
}

/** The route a request is for, with its parameters; null when yoke serves no such route. */
export function matchRoute(method: string, path: string): MatchedRoute | null {
  for (const c of COMPILED) {
    if (c.def.method !== method) continue;
    const m = c.re.exec(path);
    if (m) return { def: c.def, params: Object.fromEntries(c.names.map((n, i) => [n, m[i + 1]!])) };
  }
  return null;
}
