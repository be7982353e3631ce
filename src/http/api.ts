import type { NextPass } from '../fleet/next-pass.js';
import type { Result } from '../kernel/result.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { issuesText } from '../kernel/issues-text.js';
import type { z } from 'zod';
import { makeRefusal, type Refusal } from '../kernel/codes/table.js';
import type { FleetContext } from '../fleet/context.js';
import type { PassReport } from '../fleet/pass.js';
import { authenticateLiveRun } from './run-report.js';
import type { Actor } from '../delivery/context.js';
import { credentialOf, type TokenTable } from './credentials.js';
import { runnerBundle } from '../agent/bundle.js';
import type { OidcVerifier } from './oidc.js';
import { deliveryHandlers } from './handlers-delivery.js';
import { fleetHandlers } from './handlers-fleet.js';
import { isJsonRoute, type Call, type JsonHandlers, type Reply } from './handler.js';
import { gateRoute, personAccess } from './route-gate.js';
import { matchRoute, type MatchedRoute, type RouteDef, type RouteName } from './routes.js';
import {
  DASHBOARD_SCRIPT,
  renderDashboard,
  renderDashboardMain,
  renderSignIn,
  type DashboardPage,
} from './dashboard.js';
import { buildDashboardData, dashboardFor, parseSpan, type DashboardData } from './dashboard-data.js';
import { Sessions, isOperatorToken, type SessionWho } from './session.js';
import { esc, renderDoctorPage, renderPlanPage } from './dashboard-parts.js';
import type { DoctorReport } from './doctor.js';

// yoke's HTTP server under /yoke, a plain node:http handler (Probot 14's
// addHandler). Every route is declared once in routes.ts; a request is
// matched there (find-my-way), its credential checked against the route's
// role (TR25), its query and body parsed by the route's schemas, and then its
// handler runs: the JSON routes' in handlers-fleet.ts and handlers-delivery.ts,
// the pages', the script's and the sign-in's here. Errors are
// {"error":{code,message,recovery}}.

export const BODY_LIMIT = 64 * 1024;

/** TR07: nothing yoke serves leaks its URL to the sites it links to. */
const NO_REFERRER = { 'referrer-policy': 'no-referrer' };

export interface ApiOptions {
  fleet: FleetContext;
  /** The last pass's report, for the fleet report. */
  lastPass: () => PassReport | null;
  /** The engine's dry run of the next pass, for one repository (`yoke plan`). */
  nextPass: (repo: string) => Promise<Result<NextPass>>;
  /** `yoke doctor`: a repository's set-up, checked. */
  doctor: (repo: string) => Promise<DoctorReport>;
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

function send(res: ServerResponse, status: number, body: unknown): true {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    ...NO_REFERRER,
  });
  res.end(JSON.stringify(body));
  return true;
}

const sendRefusal = (res: ServerResponse, r: Refusal): true =>
  send(res, r.status, { error: { code: r.code, message: r.message, recovery: r.recovery } });

const invalid = (error: z.ZodError, hint: string | undefined): Refusal =>
  makeRefusal('validation_failed', {
    detail: hint ?? issuesText(error, 'body'),
  });

class BodyError extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.message);
  }
}

async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) throw new BodyError(makeRefusal('body_too_large', { limit: BODY_LIMIT }));
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = await readText(req);
  if (!text.trim()) return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new BodyError(makeRefusal('validation_failed', { detail: 'the body is not JSON' }));
  }
}

function bearerOf(req: IncomingMessage): string | null {
  const h = req.headers.authorization;
  const m = h ? /^Bearer\s+(.+)$/i.exec(h) : null;
  return m ? m[1]!.trim() : null;
}

/** The dashboard runs only its own script, loads nothing from elsewhere, and cannot be framed. */
const PAGE_POLICY =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

function html(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): true {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': PAGE_POLICY,
    ...NO_REFERRER,
    ...headers,
  });
  res.end(body);
  return true;
}

type WebRouteName = Exclude<RouteName, keyof JsonHandlers>;
type WebHandler = (req: IncomingMessage, res: ServerResponse, route: MatchedRoute, url: URL) => Promise<true>;

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

  /** Who is looking at a page: the session's, or an operator's bearer token (the CLI's and the tests'). */
  const viewer = (req: IncomingMessage): SessionWho | null =>
    sessions.who(req) ?? (isOperatorToken(bearerOf(req), opts.apiTokens) ? { role: 'operator' } : null);
  /** TR11: the dashboard as a person sees it: the repositories GitHub says their login may read, asked now. */
  const readableBy = async (d: DashboardData, login: string): Promise<DashboardData> => {
    const { mayRead } = personAccess(fleet, login);
    const readable = new Set<string>();
    for (const r of d.report.repos) if (await mayRead(r.repo)) readable.add(r.repo);
    return dashboardFor(d, (repo) => readable.has(repo));
  };
  const operatorsOnly = (command: string, params: Record<string, string>) =>
    `<!doctype html><meta charset="utf-8"><title>yoke: for operators</title><p>This page is for yoke's operators. With your own token, run <code>${esc(command)} ${esc(`${params.owner}/${params.name}`)}</code> instead. <a href="/yoke">Back</a></p>`;
  const page =
    (kind: DashboardPage): WebHandler =>
    async (req, res, route, url) => {
      // A token in the URL is never accepted: it would sit in logs and histories.
      const who = viewer(req);
      if (!who) return html(res, 401, renderSignIn(null));
      const p =
        kind.kind === 'repo' ? { kind: 'repo' as const, repo: `${route.params.owner}/${route.params.name}` } : kind;
      const all = await buildDashboardData(fleet, opts.lastPass(), {
        webUrl: opts.webUrl ?? 'https://github.com',
        refreshMs: opts.dashboardRefreshMs ?? 10_000,
        span: parseSpan(url.searchParams.get('span')),
        ...(p.kind === 'repo' ? { repo: p.repo } : {}),
      });
      const data = who.role === 'operator' ? all : await readableBy(all, who.login);
      if (p.kind === 'repo' && !data.report.repos.some((r) => r.repo === p.repo)) {
        return html(
          res,
          404,
          `<!doctype html><meta charset="utf-8"><title>yoke: not found</title><p>yoke has not seen a repository named ${esc(p.repo)}. <a href="/yoke">Back to the fleet</a></p>`,
        );
      }
      return html(
        res,
        200,
        url.searchParams.get('part') === 'main' ? renderDashboardMain(data, p) : renderDashboard(data, p),
      );
    };
  const web: Record<WebRouteName, WebHandler> = {
    dashboard: page({ kind: 'fleet' }),
    dashboardAlias: page({ kind: 'fleet' }),
    repoDashboard: page({ kind: 'repo', repo: '' }),
    // The dry run on its own page, not the repository's: it reads GitHub, so it runs when asked, never on each refresh.
    async repoPlanPage(req, res, route) {
      const who = viewer(req);
      if (!who) return html(res, 401, renderSignIn(null));
      if (who.role !== 'operator') return html(res, 403, operatorsOnly('yoke plan', route.params));
      const repo = `${route.params.owner}/${route.params.name}`;
      const r = await opts.nextPass(repo);
      return html(res, r.ok ? 200 : r.refusal.status, renderPlanPage(repo, r.ok ? r.value : r.refusal));
    },
    async repoDoctorPage(req, res, route) {
      const who = viewer(req);
      if (!who) return html(res, 401, renderSignIn(null));
      if (who.role !== 'operator') return html(res, 403, operatorsOnly('yoke doctor', route.params));
      const report = await opts.doctor(`${route.params.owner}/${route.params.name}`);
      return html(res, 200, renderDoctorPage(report));
    },
    async dashboardScript(_req, res) {
      res.writeHead(200, {
        'content-type': 'text/javascript; charset=utf-8',
        'cache-control': 'no-cache',
        ...NO_REFERRER,
      });
      res.end(DASHBOARD_SCRIPT);
      return true;
    },
    async signIn(req, res) {
      const token = new URLSearchParams(await readText(req)).get('token');
      // TR11: an operator token, or a person's own token (YOKE_PERSON_TOKENS), who then sees the repositories GitHub says they may read.
      const cred = credentialOf(token, tokens);
      if (!cred || (cred.role !== 'operator' && cred.role !== 'person'))
        return html(
          res,
          401,
          renderSignIn('That is neither an operator token (YOKE_API_TOKENS) nor a person token (YOKE_PERSON_TOKENS).'),
        );
      const { cookie } = sessions.open(
        cred.role === 'person' ? { role: 'person', login: cred.login } : { role: 'operator' },
        req,
      );
      res.writeHead(303, { location: '/yoke', 'set-cookie': cookie, 'cache-control': 'no-store', ...NO_REFERRER });
      res.end();
      return true;
    },
    async signOut(req, res) {
      res.writeHead(303, { location: '/yoke', 'set-cookie': sessions.close(req), ...NO_REFERRER });
      res.end();
      return true;
    },
    // The runner a workflow job fetches: public, holds no secret; the job checks its sha256 against the dispatch's.
    async runner(_req, res) {
      const b = await runnerBundle();
      res.writeHead(200, {
        'content-type': 'text/javascript; charset=utf-8',
        'x-yoke-runner-sha256': b.sha256,
        'cache-control': 'no-cache',
        ...NO_REFERRER,
      });
      res.end(b.code);
      return true;
    },
  };

  /** A JSON route: its query and body parsed by its schemas, then its handler, then its reply. */
  async function serveJson(
    req: IncomingMessage,
    res: ServerResponse,
    route: MatchedRoute,
    url: URL,
    actor: Actor | null,
    mayRead: (repo: string) => Promise<boolean>,
    body: () => Promise<unknown>,
  ): Promise<true> {
    const { def } = route;
    const query = def.query
      ? def.query.safeParse(Object.fromEntries(url.searchParams))
      : { success: true as const, data: Object.fromEntries(url.searchParams) };
    if (!query.success) return sendRefusal(res, invalid(query.error, def.hint));
    const parsedBody = def.body ? def.body.safeParse(await body()) : { success: true as const, data: undefined };
    if (!parsedBody.success) return sendRefusal(res, invalid(parsedBody.error, def.hint));
    const call: Call<RouteDef> = {
      params: route.params,
      query: query.data as Record<string, string>,
      body: parsedBody.data as never,
      actor: actor as never,
      headers: req.headers,
      bearer: bearerOf(req),
      readJson: body,
      mayRead,
    };
    const handler = handlers[route.name as keyof JsonHandlers] as unknown as (
      call: Call<RouteDef>,
    ) => Promise<Reply<RouteDef>>;
    const reply = await handler(call);
    if ('refusal' in reply) return sendRefusal(res, reply.refusal);
    if ('recorded' in reply) {
      res.writeHead(reply.status, {
        'content-type': 'application/json; charset=utf-8',
        'cache-control': 'no-store',
        ...NO_REFERRER,
      });
      res.end(reply.recorded);
      return true;
    }
    return send(res, reply.status, reply.json);
  }

  return async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const url = new URL(req.url ?? '/', 'http://yoke.local');
    const path = url.pathname.replace(/\/+$/, '');
    // The server's root is the dashboard, never a blank 404.
    if (path === '' && (req.method ?? 'GET') === 'GET') {
      res.writeHead(302, { location: '/yoke', ...NO_REFERRER });
      res.end();
      return true;
    }
    if (path !== '/yoke' && !path.startsWith('/yoke/')) return false;
    const method = req.method ?? 'GET';
    try {
      const route = matchRoute(method, path);
      let bodyOnce: Promise<unknown> | null = null;
      const body = () => (bodyOnce ??= readJson(req));
      const everyone = async () => true;
      if (route && !isJsonRoute(route.name)) return await web[route.name as WebRouteName](req, res, route, url);
      // Public routes, and a run's own reports, which check the run's credential against that run.
      if (route && (route.def.role === 'public' || route.def.role === 'run-report'))
        return await serveJson(req, res, route, url, null, everyone, body);

      // TR11: everything else needs a credential with a role; a run's own one (named by X-Yoke-Run) reaches only its QA.
      let actor: Actor | null = credentialOf(bearerOf(req), tokens);
      const runHeader = req.headers['x-yoke-run'];
      if (!actor && typeof runHeader === 'string' && /^[\w-]{1,100}$/.test(runHeader)) {
        const live = await authenticateLiveRun(fleet, runAuth, runHeader, bearerOf(req));
        if (!live.ok) return sendRefusal(res, live.refusal);
        actor = { role: 'run', runId: runHeader };
      }
      if (!actor) return sendRefusal(res, makeRefusal('unauthorized'));
      if (!route) return sendRefusal(res, makeRefusal('not_found'));
      // TR25: every route declares its role; a person may do what GitHub says their login may on its repository.
      const gate = await gateRoute(fleet, route, actor, body);
      if (!gate.ok) return sendRefusal(res, gate.refusal);
      // A repository named in another casing is served as the one yoke keeps (GitHub's names are one, whatever the case).
      const named =
        gate.repo && route.def.repo === 'path'
          ? { ...route, params: { ...route.params, owner: gate.repo.split('/')[0]!, name: gate.repo.split('/')[1]! } }
          : route;
      return await serveJson(req, res, named, url, actor, gate.mayRead, body);
    } catch (err) {
      if (err instanceof BodyError) return sendRefusal(res, err.refusal);
      fleet.log.error({ err: err instanceof Error ? err.stack : String(err), path }, 'API request failed');
      return send(res, 500, {
        error: {
          code: 'internal_error',
          message: 'yoke could not complete the request.',
          recovery: 'Retry; if it persists, see the yoke log.',
        },
      });
    }
  };
}
