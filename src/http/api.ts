import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { makeRefusal, type Refusal } from '../kernel/codes/table.js';
import type { FleetContext } from '../fleet/context.js';
import { requestLand, requestStart, resetRepo, setAutoLoop, repoStatus } from '../fleet/controls.js';
import type { Result } from '../kernel/result.js';
import type { PassReport } from '../fleet/pass.js';
import { publicRun } from '../fleet/report.js';
import { buildFleetReport } from './report.js';
import { authenticateLiveRun, grantPush, openClaim, reportRunResult } from './run-report.js';
import type { Actor } from '../delivery/context.js';
import { credentialOf, type TokenTable } from './credentials.js';
import { runnerBundle } from '../agent/bundle.js';
import type { OidcVerifier } from './oidc.js';
import { handleDeliveryRoute } from './api-delivery.js';
import { gateRoute } from './route-gate.js';
import { matchRoute } from './routes.js';
import { DASHBOARD_SCRIPT, renderDashboard, renderDashboardMain, renderSignIn, type DashboardPage } from './dashboard.js';
import { buildDashboardData, parseSpan } from './dashboard-data.js';
import { Sessions, isOperatorToken } from './session.js';
import { esc } from './dashboard-parts.js';

// yoke's HTTP API under /yoke/api, served as a plain node:http handler
// (Probot 14's addHandler). Errors are {"error":{code,message,recovery}}.

export const BODY_LIMIT = 64 * 1024;

/** TR07: nothing yoke serves leaks its URL to the sites it links to. */
const NO_REFERRER = { 'referrer-policy': 'no-referrer' };

export interface ApiOptions {
  fleet: FleetContext;
  /** The last pass's report, for the fleet report. */
  lastPass: () => PassReport | null;
  apiTokens: readonly string[];
  /** TR11: person tokens, each one GitHub login. */
  personTokens?: readonly { login: string; token: string }[];
  oidc: OidcVerifier | null;
  audience: string;
  /** How long a dashboard sign-in lasts. */
  sessionTtlMs?: number;
  /** Where people read GitHub: the dashboard links there. */
  webUrl?: string;
  /** How often an open dashboard fetches itself again. */
  dashboardRefreshMs?: number;
  /** DX08: the response limit and the hosted cap, and how to wait (injected in tests). */
  dispatch?: { responseLimitMs: number; hostedCapMs: number; sleep?: (ms: number) => Promise<void> };
}

const AutoBody = z.object({ enabled: z.boolean() }).strict();

function send(res: ServerResponse, status: number, body: unknown): true {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...NO_REFERRER });
  res.end(JSON.stringify(body));
  return true;
}

const sendRefusal = (res: ServerResponse, r: Refusal): true =>
  send(res, r.status, { error: { code: r.code, message: r.message, recovery: r.recovery } });

const sendControl = (res: ServerResponse, r: Result<string>): true => (r.ok ? send(res, 200, { ok: true, message: r.value }) : sendRefusal(res, r.refusal));

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
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'content-security-policy': PAGE_POLICY, ...NO_REFERRER, ...headers });
  res.end(body);
  return true;
}

/** `/yoke` and `/yoke/dashboard` are the fleet; `/yoke/repos/owner/name` one repository. */
function dashboardPage(path: string): DashboardPage | null {
  if (path === '/yoke' || path === '/yoke/dashboard') return { kind: 'fleet' };
  const m = /^\/yoke\/repos\/([\w.-]+\/[\w.-]+)$/.exec(path);
  return m ? { kind: 'repo', repo: m[1]! } : null;
}

export function createApiHandler(opts: ApiOptions) {
  const { fleet } = opts;
  const tokens: TokenTable = { operator: opts.apiTokens, people: opts.personTokens ?? [] };
  const report = () => buildFleetReport(fleet, opts.lastPass());
  const sessions = new Sessions({ ttlMs: opts.sessionTtlMs ?? 12 * 3600_000, secure: opts.audience.startsWith('https:') }, () => fleet.clock.now());
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
      const page = method === 'GET' ? dashboardPage(path) : null;
      if (page) {
        // A token in the URL is never accepted: it would sit in logs and histories.
        if (!sessions.valid(req) && !isOperatorToken(bearerOf(req), opts.apiTokens)) return html(res, 401, renderSignIn(null));
        const data = await buildDashboardData(fleet, opts.lastPass(), { webUrl: opts.webUrl ?? 'https://github.com', refreshMs: opts.dashboardRefreshMs ?? 10_000, span: parseSpan(url.searchParams.get('span')), ...(page.kind === 'repo' ? { repo: page.repo } : {}) });
        if (page.kind === 'repo' && !data.report.repos.some((r) => r.repo === page.repo)) {
          return html(res, 404, `<!doctype html><meta charset="utf-8"><title>yoke: not found</title><p>yoke has not seen a repository named ${esc(page.repo)}. <a href="/yoke">Back to the fleet</a></p>`);
        }
        return html(res, 200, url.searchParams.get('part') === 'main' ? renderDashboardMain(data, page) : renderDashboard(data, page));
      }
      if (path === '/yoke/dashboard.js' && method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache', ...NO_REFERRER });
        res.end(DASHBOARD_SCRIPT);
        return true;
      }
      if (path === '/yoke/session' && method === 'POST') {
        const token = new URLSearchParams(await readText(req)).get('token');
        if (!isOperatorToken(token, opts.apiTokens)) return html(res, 401, renderSignIn('That is not one of the operator tokens in YOKE_API_TOKENS.'));
        const { cookie } = sessions.open();
        res.writeHead(303, { location: '/yoke', 'set-cookie': cookie, 'cache-control': 'no-store', ...NO_REFERRER });
        res.end();
        return true;
      }
      if (path === '/yoke/session/end' && method === 'POST') {
        res.writeHead(303, { location: '/yoke', 'set-cookie': sessions.close(req), ...NO_REFERRER });
        res.end();
        return true;
      }
      if (path === '/yoke/api/health') return send(res, 200, { ok: true });

      // The runner a workflow job fetches: public, holds no secret; the job checks its sha256 against the dispatch's.
      if (path === '/yoke/runner.mjs' && method === 'GET') {
        const b = await runnerBundle();
        res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'x-yoke-runner-sha256': b.sha256, 'cache-control': 'no-cache', ...NO_REFERRER });
        res.end(b.code);
        return true;
      }
      const runAuth = { oidc: opts.oidc, audience: opts.audience };
      const push = /^\/yoke\/api\/runs\/([\w-]{1,100})\/(push|claim)$/.exec(path);
      if (push && method === 'POST') {
        if (push[2] === 'push') {
          const answer = await grantPush(fleet, runAuth, push[1]!, bearerOf(req));
          return answer.ok ? send(res, 200, { token: answer.value.token, branch: answer.value.branch, expires_at: answer.value.expiresAt }) : sendRefusal(res, answer.refusal);
        }
        const answer = await openClaim(fleet, runAuth, push[1]!, bearerOf(req), await readJson(req));
        return answer.ok ? send(res, 201, { number: answer.value }) : sendRefusal(res, answer.refusal);
      }
      const result = /^\/yoke\/api\/runs\/([\w-]{1,100})\/result$/.exec(path);
      if (result && method === 'POST') {
        const body = await readJson(req);
        const answer = await reportRunResult(fleet, runAuth, { runId: result[1]!, bearer: bearerOf(req), body });
        return answer.ok ? send(res, 200, { ok: true, run: publicRun(answer.value) }) : sendRefusal(res, answer.refusal);
      }

      // TR11: everything else needs a credential with a role; a run's own one (named by X-Yoke-Run) reaches only its QA.
      let actor: Actor | null = credentialOf(bearerOf(req), tokens);
      const runHeader = req.headers['x-yoke-run'];
      if (!actor && typeof runHeader === 'string' && /^[\w-]{1,100}$/.test(runHeader)) {
        const live = await authenticateLiveRun(fleet, runAuth, runHeader, bearerOf(req));
        if (!live.ok) return sendRefusal(res, live.refusal);
        actor = { role: 'run', runId: runHeader };
      }
      if (!actor) return sendRefusal(res, makeRefusal('unauthorized'));
      // TR25: every route declares its role; a person may do what GitHub says their login may on its repository.
      const route = matchRoute(method, path);
      if (!route) return sendRefusal(res, makeRefusal('not_found'));
      let bodyOnce: Promise<unknown> | null = null;
      const body = () => (bodyOnce ??= readJson(req));
      const gate = await gateRoute(fleet, route, actor, body);
      if (!gate.ok) return sendRefusal(res, gate.refusal);

      if (path === '/yoke/api/fleet' && method === 'GET') return send(res, 200, await report());
      const io = {
        mayRead: gate.mayRead,
        readJson: body,
        send: (status: number, body: unknown) => send(res, status, body),
        raw: (status: number, body: string) => {
          res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...NO_REFERRER });
          res.end(body);
          return true as const;
        },
        refuse: (r: Refusal) => sendRefusal(res, r),
      };
      const dispatch = opts.dispatch ?? { responseLimitMs: 25_000, hostedCapMs: 100_000 };
      if (await handleDeliveryRoute(fleet, actor, req, url, io, { ...dispatch, sleep: dispatch.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))) })) return true;
      if (path === '/yoke/api/runs' && method === 'GET') {
        const repo = url.searchParams.get('repo');
        const status = url.searchParams.get('status');
        const STATUSES = ['live', 'success', 'failure', 'timeout', 'cancelled'];
        if (status !== null && !STATUSES.includes(status)) return sendRefusal(res, makeRefusal('validation_failed', { detail: `status is one of ${STATUSES.join(', ')}` }));
        const listed = (await fleet.store.runs.listAll(1000))
          .filter((r) => !repo || r.repo.toLowerCase() === repo.toLowerCase())
          .filter((r) => status === null || (status === 'live' ? r.status === 'live' : r.outcome === status));
        const runs = [];
        for (const r of listed) if (runs.length < 200 && (await gate.mayRead(r.repo))) runs.push(r);
        return send(res, 200, { runs: runs.map(publicRun) });
      }
      const runGet = /^\/yoke\/api\/runs\/([\w-]{1,100})$/.exec(path);
      if (runGet && method === 'GET') {
        const run = await fleet.store.runs.get(runGet[1]!);
        return run ? send(res, 200, publicRun(run)) : sendRefusal(res, makeRefusal('run_unknown', { run: runGet[1]! }));
      }
      const repoRoute = /^\/yoke\/api\/repos\/([\w.-]+)\/([\w.-]+)\/(auto|reset|status|issues\/(\d+)\/start|pulls\/(\d+)\/land)$/.exec(path);
      if (repoRoute) {
        const fullName = `${repoRoute[1]}/${repoRoute[2]}`;
        const action = repoRoute[3]!;
        if (action === 'status' && method === 'GET') return sendControl(res, await repoStatus(fleet, fullName));
        if (method !== 'POST') return sendRefusal(res, makeRefusal('not_found'));
        if (action === 'auto') {
          const parsed = AutoBody.safeParse(await body());
          if (!parsed.success) return sendRefusal(res, makeRefusal('validation_failed', { detail: 'send {"enabled": true} or {"enabled": false}' }));
          return sendControl(res, await setAutoLoop(fleet, fullName, parsed.data.enabled));
        }
        if (action === 'reset') return sendControl(res, await resetRepo(fleet, fullName));
        if (repoRoute[4]) return sendControl(res, await requestStart(fleet, fullName, Number(repoRoute[4]), 'api'));
        if (repoRoute[5]) return sendControl(res, await requestLand(fleet, fullName, Number(repoRoute[5]), 'api'));
      }
      return sendRefusal(res, makeRefusal('not_found'));
    } catch (err) {
      if (err instanceof BodyError) return sendRefusal(res, err.refusal);
      fleet.log.error({ err: err instanceof Error ? err.stack : String(err), path }, 'API request failed');
      return send(res, 500, { error: { code: 'internal_error', message: 'yoke could not complete the request.', recovery: 'Retry; if it persists, see the yoke log.' } });
    }
  };
}
