import type { FleetViews } from '../api/handlers-fleet.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { runnerBundle } from '../../agent/bundle.js';
import { credentialOf, type TokenTable } from '../api/credentials.js';
import {
  DASHBOARD_SCRIPT,
  renderDashboard,
  renderDashboardMain,
  renderSignIn,
  type DashboardPage,
} from './dashboard.js';
import { buildDashboardData, dashboardFor, parseSpan, type DashboardData } from './dashboard-data.js';
import { esc, renderDoctorPage, renderPlanPage } from './dashboard-parts.js';
import { pageHtml } from './page-shell.js';
import type { JsonHandlers } from '../api/handler.js';
import { bearerOf, html, readText, redirect, script } from '../api/responses.js';
import { personAccess } from '../api/route-gate.js';
import type { MatchedRoute, RouteName } from '../api/routes.js';
import { isOperatorToken, type Sessions, type SessionWho } from '../api/session.js';

// The routes that answer with a page, a script or a redirect, not JSON: the
// dashboard's pages (fleet, repository, the dry run, the doctor), its script,
// the sign-in and sign-out, and the runner a workflow job fetches. A page
// asks who is looking (a session, or an operator's bearer token) and shows a
// person only the repositories GitHub says their login may read (TR11).

export type WebRouteName = Exclude<RouteName, keyof JsonHandlers>;
export type WebHandler = (req: IncomingMessage, res: ServerResponse, route: MatchedRoute, url: URL) => Promise<true>;

/** What the pages read: the fleet's views, who may sign in, and how the dashboard links and refreshes. */
type Pages = FleetViews & { tokens: TokenTable; sessions: Sessions; webUrl: string; dashboardRefreshMs: number };

const repoOf = (route: MatchedRoute): string => `${route.params.owner}/${route.params.name}`;

/** A page that says no, or says where it leads, to someone signed in. */
const notePage = (title: string, text: string): string =>
  pageHtml({ title: `yoke: ${title}`, signedIn: true, main: `<section><p>${text}</p></section>` });

const operatorsOnly = (command: string, repo: string) =>
  notePage(
    'for operators',
    `This page is for yoke's operators. With your own token, run <code>${esc(command)} ${esc(repo)}</code> instead. <a href="/yoke">Back</a>`,
  );

const notSeen = (repo: string) =>
  notePage('not found', `yoke has not seen a repository named ${esc(repo)}. <a href="/yoke">Back to the fleet</a>`);

const noSuchPage = (path: string) =>
  notePage(
    'not found',
    `yoke has no page at <code>${esc(path)}</code>. The dashboard is at <a href="/yoke">/yoke</a>, a repository's at <code>/yoke/repos/OWNER/REPO</code>.`,
  );

/** Who is looking at a page: the session's, or an operator's bearer token (the CLI's and the tests'). A token in the URL is never accepted: it would sit in logs and histories. */
const viewer = (d: Pick<Pages, 'sessions' | 'tokens'>, req: IncomingMessage): SessionWho | null =>
  d.sessions.who(req) ?? (isOperatorToken(bearerOf(req), d.tokens.operator) ? { role: 'operator' } : null);

/** TR11: the dashboard as a person sees it: the repositories GitHub says their login may read, asked now. */
async function readableBy(d: Pages, data: DashboardData, login: string): Promise<DashboardData> {
  const { mayRead } = personAccess(d.fleet, login);
  const readable = new Set<string>();
  for (const r of data.report.repos) if (await mayRead(r.repo)) readable.add(r.repo);
  return dashboardFor(data, (repo) => readable.has(repo));
}

/** A dashboard page: the fleet's, or a repository's (404 when yoke has not seen it, or the person may not read it). */
const page =
  (d: Pages, kind: DashboardPage): WebHandler =>
  async (req, res, route, url) => {
    const who = viewer(d, req);
    if (!who) return html(res, 401, renderSignIn(null));
    const p = kind.kind === 'repo' ? { kind: 'repo' as const, repo: repoOf(route) } : kind;
    const all = await buildDashboardData(d.fleet, d.lastPass(), {
      webUrl: d.webUrl,
      refreshMs: d.dashboardRefreshMs,
      span: parseSpan(url.searchParams.get('span')),
      ...(p.kind === 'repo' ? { repo: p.repo } : {}),
    });
    const data = who.role === 'operator' ? all : await readableBy(d, all, who.login);
    if (p.kind === 'repo' && !data.report.repos.some((r) => r.repo === p.repo)) return html(res, 404, notSeen(p.repo));
    return html(
      res,
      200,
      url.searchParams.get('part') === 'main' ? renderDashboardMain(data, p) : renderDashboard(data, p),
    );
  };

/** A page for operators only, which reads GitHub when asked (never on each refresh). */
const operatorPage =
  (
    d: Pages,
    command: string,
    render: (repo: string) => Promise<{ status: number; title: string; main: string }>,
  ): WebHandler =>
  async (req, res, route) => {
    const who = viewer(d, req);
    if (!who) return html(res, 401, renderSignIn(null));
    if (who.role !== 'operator') return html(res, 403, operatorsOnly(command, repoOf(route)));
    const repo = repoOf(route);
    const { status, title, main } = await render(repo);
    return html(res, status, pageHtml({ title: `yoke: ${title}`, about: repo, signedIn: true, main }));
  };

/**
 * A GET of a path under /yoke that is no route and no API call, as a browser
 * asks for a page: the sign-in form to someone not signed in, else a page
 * that says there is none (never JSON, which a browser shows raw).
 */
export function missingPage(d: Pick<Pages, 'sessions' | 'tokens'>) {
  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<true> =>
    viewer(d, req) ? html(res, 404, noSuchPage(url.pathname)) : html(res, 401, renderSignIn(null));
}

export function webHandlers(d: Pages): Record<WebRouteName, WebHandler> {
  return {
    dashboard: page(d, { kind: 'fleet' }),
    dashboardAlias: page(d, { kind: 'fleet' }),
    repoDashboard: page(d, { kind: 'repo', repo: '' }),
    // The dry run on its own page, not the repository's: it reads GitHub, so it runs when asked.
    repoPlanPage: operatorPage(d, 'yoke plan', async (repo) => {
      const r = await d.nextPass(repo);
      return {
        status: r.ok ? 200 : r.refusal.status,
        title: `the next pass for ${repo}`,
        main: renderPlanPage(repo, r.ok ? r.value : r.refusal),
      };
    }),
    repoDoctorPage: operatorPage(d, 'yoke doctor', async (repo) => ({
      status: 200,
      title: `the set-up of ${repo}`,
      main: renderDoctorPage(await d.doctor(repo)),
    })),
    dashboardScript: async (_req, res) => script(res, DASHBOARD_SCRIPT),
    async signIn(req, res) {
      const token = new URLSearchParams(await readText(req)).get('token');
      // TR11: an operator token, or a person's own token (YOKE_PERSON_TOKENS), who then sees the repositories GitHub says they may read.
      const cred = credentialOf(token, d.tokens);
      if (!cred || (cred.role !== 'operator' && cred.role !== 'person'))
        return html(
          res,
          401,
          renderSignIn('That is neither an operator token (YOKE_API_TOKENS) nor a person token (YOKE_PERSON_TOKENS).'),
        );
      const { cookie } = d.sessions.open(
        cred.role === 'person' ? { role: 'person', login: cred.login } : { role: 'operator' },
        req,
      );
      return redirect(res, 303, '/yoke', { 'set-cookie': cookie, 'cache-control': 'no-store' });
    },
    signOut: async (req, res) => redirect(res, 303, '/yoke', { 'set-cookie': d.sessions.close(req) }),
    // The runner a workflow job fetches: public, holds no secret; the job checks its sha256 against the dispatch's.
    async runner(_req, res) {
      const b = await runnerBundle();
      return script(res, b.code, { 'x-yoke-runner-sha256': b.sha256 });
    },
  };
}
