import type { z } from 'zod';

// What a route declares: its method, path, role, repository source, schemas.

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
  /** The path, with `:name` for each parameter (`:owner/:name` for a repository), as find-my-way reads it. */
  path: string;
  role: RouteRole;
  repo: RepoFrom;
  /** A live yoke run's own credential may call it too, for the QA of the item it holds. */
  run?: true;
  /** What the route does, in words a refusal can use ("Creating a deployment run"). */
  what: string;
  /** The JSON body, parsed before the handler runs (after the route's role is checked). */
  body?: z.ZodType;
  /** The query string's parameters, parsed before the handler runs. */
  query?: z.ZodType;
  /** The refusal's detail when the body or query does not parse, instead of zod's (a hint that names the fix). */
  hint?: string;
  /** The JSON answer; null for a page, a script or a redirect, which the web handlers serve. */
  answer: z.ZodType | null;
}

/** A route, typed exactly as written, so each handler's body, query and answer types come from it. */
export const route = <const R extends RouteDef>(r: R): R => r;
