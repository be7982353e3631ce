import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Actor } from '../delivery/context.js';
import type { FleetContext } from '../fleet/context.js';
import { makeRefusal } from '../kernel/codes/table.js';
import { Refused } from '../kernel/result.js';
import { credentialOf, readsMetrics, type TokenTable } from './api/credentials.js';
import { serveMetrics, type Metrics } from './operator/metrics.js';
import { deliveryHandlers } from './api/handlers-delivery.js';
import { fleetHandlers, type FleetViews } from './api/handlers-fleet.js';
import { isJsonRoute, type JsonHandlers } from './api/handler.js';
import type { OidcVerifier } from './api/oidc.js';
import { missingPage, webHandlers, type WebHandler, type WebRouteName } from './pages/pages.js';
import { bearerOf, readJson, redirect, sendInternalError, sendRefusal } from './api/responses.js';
import { gateRoute } from './api/route-gate.js';
import { matchRoute } from './api/routes.js';
import { authenticateLiveRun, type RunAuth } from './api/run-report.js';
import { serveJson } from './api/serve-json.js';
import { Sessions } from './api/session.js';
import { errorStack } from '../kernel/error-text.js';

// yoke's HTTP server under /yoke, a plain node:http handler (Probot 14's
// addHandler). Every route is declared once in routes.ts; a request is
// matched there (find-my-way), its credential checked against the route's
// role (TR25), its query and body parsed by the route's schemas
// (serve-json.ts), and then its handler runs: the JSON routes' in
// handlers-fleet.ts and handlers-delivery.ts, the pages', the scripts' and the
// sign-in's in pages.ts. Answers are written by responses.ts; errors are
// {"error":{code,message,recovery}}.

export interface ApiOptions extends FleetViews {
  /** The figures `/yoke/metrics` serves, to an operator or the metrics token (YOKE_METRICS_TOKEN). */
  metrics?: Metrics;
  metricsToken?: string | undefined;
  apiTokens: readonly string[];
  /** TR11: person tokens, each one GitHub login. */
  personTokens?: readonly { login: string; token: string }[];
  oidc: OidcVerifier | null;
  audience: string;
  /** How Actions runs reach yoke (YOKE_RUNS_REACH); `api` unless said. */
  runsReach?: 'api' | 'github';
  /** How long a dashboard sign-in lasts. */
  sessionTtlMs?: number;
  /** Where people read GitHub: the dashboard links there. */
  webUrl?: string;
  /** How often an open dashboard fetches itself again. */
  dashboardRefreshMs?: number;
  /** DX08: the response limit and the hosted cap, and how to wait (injected in tests). */
  dispatch?: { responseLimitMs: number; hostedCapMs: number; sleep?: (ms: number) => Promise<void> };
}

/** What the server answers with: built once, by createApiHandler. */
interface Server {
  fleet: FleetContext;
  tokens: TokenTable;
  runAuth: RunAuth;
  handlers: JsonHandlers;
  web: Record<WebRouteName, WebHandler>;
  missingPage: (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<true>;
}

/** A browser's navigation asks for HTML; the CLI and scripts ask for JSON or say nothing. */
const wantsPage = (req: IncomingMessage): boolean => /\btext\/html\b/.test(req.headers.accept ?? '');

/** TR11: who calls a route that needs a credential: a token's holder, or a live run named by X-Yoke-Run (which reaches only its QA). */
async function callerOf(s: Server, req: IncomingMessage, res: ServerResponse): Promise<Actor | true> {
  const actor = credentialOf(bearerOf(req), s.tokens);
  if (actor) return actor;
  const runHeader = req.headers['x-yoke-run'];
  if (typeof runHeader === 'string' && /^[\w-]{1,100}$/.test(runHeader)) {
    const live = await authenticateLiveRun(s.fleet, s.runAuth, runHeader, bearerOf(req));
    if (!live.ok) return sendRefusal(res, live.refusal);
    return { role: 'run', runId: runHeader };
  }
  return sendRefusal(res, makeRefusal('unauthorized'));
}

async function serve(s: Server, req: IncomingMessage, res: ServerResponse, url: URL): Promise<true> {
  const route = matchRoute(req.method ?? 'GET', url.pathname.replace(/\/+$/, ''));
  let bodyOnce: Promise<unknown> | null = null;
  const body = () => (bodyOnce ??= readJson(req));
  // No such page: a browser's GET outside the API gets a page (the sign-in, or one saying so), never JSON.
  if (!route && (req.method ?? 'GET') === 'GET' && !url.pathname.startsWith('/yoke/api/') && wantsPage(req))
    return s.missingPage(req, res, url);
  // No such route: said only to a caller with a credential (anyone else is unauthorized first).
  if (!route) {
    const caller = await callerOf(s, req, res);
    return caller === true ? true : sendRefusal(res, makeRefusal('not_found'));
  }
  const name = route.name;
  if (!isJsonRoute(name)) return s.web[name](req, res, route, url);
  // Public routes, and a run's own reports, which check the run's credential against that run.
  if (route.def.role === 'public' || route.def.role === 'run-report')
    return serveJson(s.handlers, {
      req,
      res,
      route: { ...route, name },
      url,
      actor: null,
      mayRead: async () => true,
      body,
    });
  const actor = await callerOf(s, req, res);
  if (actor === true) return true;
  // TR25: every route declares its role; a person may do what GitHub says their login may on its repository.
  const gate = await gateRoute(s.fleet, route, actor, body);
  if (!gate.ok) return sendRefusal(res, gate.refusal);
  // A repository named in another casing is served as the one yoke keeps (GitHub's names are one, whatever the case).
  const [owner, repoName] = gate.repo && route.def.repo === 'path' ? gate.repo.split('/') : [];
  const params = owner && repoName ? { ...route.params, owner, name: repoName } : route.params;
  return serveJson(s.handlers, {
    req,
    res,
    route: { ...route, name, params },
    url,
    actor,
    mayRead: gate.mayRead,
    body,
  });
}

export function createApiHandler(opts: ApiOptions) {
  const { fleet } = opts;
  const tokens: TokenTable = { operator: opts.apiTokens, people: opts.personTokens ?? [] };
  const sessions = new Sessions(
    { ttlMs: opts.sessionTtlMs ?? 12 * 3600_000, secure: opts.audience.startsWith('https:') },
    () => fleet.clock.now(),
  );
  const runAuth = { oidc: opts.oidc, audience: opts.audience, reach: opts.runsReach ?? ('api' as const) };
  const dispatch = opts.dispatch ?? { responseLimitMs: 25_000, hostedCapMs: 100_000 };
  const handlers: JsonHandlers = {
    ...fleetHandlers({ fleet, runAuth, lastPass: opts.lastPass, nextPass: opts.nextPass, doctor: opts.doctor }),
    ...deliveryHandlers(fleet, {
      ...dispatch,
      sleep: dispatch.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))),
    }),
  };
  const web = webHandlers({
    fleet,
    tokens,
    sessions,
    lastPass: opts.lastPass,
    nextPass: opts.nextPass,
    doctor: opts.doctor,
    webUrl: opts.webUrl ?? 'https://github.com',
    dashboardRefreshMs: opts.dashboardRefreshMs ?? 10_000,
  });

  const server: Server = { fleet, tokens, runAuth, handlers, web, missingPage: missingPage({ sessions, tokens }) };
  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const url = new URL(req.url ?? '/', 'http://yoke.local');
    const path = url.pathname.replace(/\/+$/, '');
    // The server's root is the dashboard, never a blank 404.
    if (path === '' && (req.method ?? 'GET') === 'GET') return redirect(res, 302, '/yoke');
    if (path !== '/yoke' && !path.startsWith('/yoke/')) return false;
    if (path === '/yoke/metrics' && opts.metrics) {
      // Operators' (or the metrics token's) only: the figures name repositories and what they spend.
      if (!readsMetrics(bearerOf(req), tokens, opts.metricsToken)) return sendRefusal(res, makeRefusal('unauthorized'));
      return serveMetrics(opts.metrics, res);
    }
    try {
      return await serve(server, req, res, url);
    } catch (err) {
      // A body that could not be read (too large, not JSON) is refused as such.
      if (err instanceof Refused) return sendRefusal(res, err.refusal);
      fleet.log.error({ err: errorStack(err), path }, 'API request failed');
      return sendInternalError(res);
    }
  };
}
