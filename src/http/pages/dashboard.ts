import { keysOf } from '../../kernel/guards.js';
import { autoLoopWords } from '../operator/report.js';
import { needsYou } from './needs-you.js';
import { repoUrl } from '../../fleet/notices/links.js';
import { TIMELINE_SPANS, type DashboardData, type TimelineSpan } from './dashboard-data.js';
import {
  esc,
  time,
  renderDeployments,
  renderLiveRuns,
  renderRepoPage,
  renderRuns,
  renderSpend,
  renderTimeline,
  renderWaiting,
  repoLink,
  prose,
} from './dashboard-parts.js';
import { renderBudgets, renderIssueSpend, renderSpendChart, renderUnsettled } from './dashboard-spend.js';
import type { BudgetStatus } from '../../fleet/money/budgets.js';
import { pageHtml } from './page-shell.js';

// The web dashboard, rendered on the server: the fleet page and one page per
// repository. The page fetches its own <main> again every few seconds
// (DASHBOARD_SCRIPT, served from /yoke/dashboard.js) so it stays current
// without a reload; everything else is plain HTML.

/** Which page: the whole fleet, or one repository. */
export type DashboardPage = { kind: 'fleet' } | { kind: 'repo'; repo: string };

function repoRows(d: DashboardData, only: string | null): string {
  const rows = d.report.repos
    .filter((r) => !only || r.repo === only)
    .map(
      (
        r,
      ) => `<tr class="${r.disabledReason ? 'disabled' : r.paused ? 'paused' : ''}"><td>${repoLink(r.repo)}</td><td>${r.cap}</td><td>${esc(autoLoopWords(r))}</td>
<td>${r.consecutiveFailures}</td><td>${r.disabledReason ? `disabled: ${esc(r.disabledReason)}` : r.paused ? 'paused' : 'ok'}</td><td>${r.live.length}</td><td>${prose(r.recovery ?? '')}</td></tr>`,
    )
    .join('\n');
  return `<table class="repos"><tr><th>repo</th><th>cap</th><th>auto loop</th><th>failures</th><th>state</th><th>live</th><th>to recover</th></tr>\n${rows || '<tr><td colspan="7">No repository has been seen yet.</td></tr>'}</table>`;
}

/** A bare command (what a wait names) reads as code; a sentence of yoke's keeps its own code spans. */
const commandOrProse = (s: string): string =>
  /^(yoke|npx|git|\/yoke) /.test(s) && !s.includes('`') ? `<code>${esc(s)}</code>` : prose(s);

/** What each span shows, in the links' titles; `fit` also says it in its label. */
const SPAN_WORDS: Record<TimelineSpan, string> = {
  fit: 'from the first run of the last 24 hours to now, so short runs stay wide enough to see',
  '24h': 'the last 24 hours',
  '6h': 'the last 6 hours',
  '1h': 'the last hour',
  '10m': 'the last 10 minutes',
};
const spanLinks = (current: TimelineSpan): string =>
  keysOf(TIMELINE_SPANS)
    .map((s) => {
      const label = s === 'fit' ? 'fit (from the first run)' : s;
      return s === current
        ? `<b title="${esc(SPAN_WORDS[s])}">${label}</b>`
        : `<a href="?span=${s}" title="${esc(SPAN_WORDS[s])}">${label}</a>`;
    })
    .join(' · ');

/** The daily budget the chart draws: the repository's on its page, else the fleet's. */
const dailyBudgetOf = (budgets: readonly BudgetStatus[], only: string | null): number | null =>
  budgets.find((b) => b.period === 'day' && b.repo === only)?.limitUsd ??
  budgets.find((b) => b.period === 'day' && b.repo === null)?.limitUsd ??
  null;

/** The part of the page that updates itself: everything under <main>. The fleet page shows every repository; a repository's page shows only its own, with what only it has. */
export function renderDashboardMain(d: DashboardData, page: DashboardPage): string {
  const only = page.kind === 'repo' ? page.repo : null;
  const mine = <T extends { repo: string }>(xs: readonly T[]) => (only ? xs.filter((x) => x.repo === only) : xs);
  const r = d.report;
  const now = Date.parse(r.generatedAt);
  const today = r.generatedAt.slice(0, 10);
  const spentToday = mine(r.spend)
    .filter((s) => s.day === today)
    .reduce((a, s) => a + s.usd, 0);
  const flags = [...mine(r.deliveries).flatMap((x) => x.flags), ...(only ? [] : (r.lastPass?.authFailures ?? []))]
    .map((f) => `<li class="flag">${prose('message' in f ? f.message : f.detail)}<br>${prose(f.recovery)}</li>`)
    .join('');
  const needs = mine(needsYou(r, now));
  const needsList = needs.length
    ? `<ul>${needs.map((n) => `<li>${prose(n.what)}<br><b>To move it:</b> ${commandOrProse(n.command)}</li>`).join('')}</ul>`
    : '<p>Nothing needs you.</p>';
  const live = mine(r.repos).flatMap((x) => x.live);
  const sections = [
    `<section id="needs-you"><h2>Needs you</h2>${needsList}</section>`,
    only
      ? `<h2>${esc(only)} <small><a href="${esc(repoUrl(d.webUrl, only))}">on GitHub</a></small></h2><section id="repos">${repoRows(d, only)}</section>`
      : `<p id="summary">${r.liveCount} live run(s) of a global cap of ${r.globalCap} · spent today (UTC): $${spentToday.toFixed(2)} · as of ${esc(time(now))}</p>`,
    flags ? `<ul class="flags">${flags}</ul>` : '',
    only && d.repoPage
      ? renderRepoPage(d.repoPage, d.webUrl, r.repos.find((x) => x.repo === only)?.disabledReason ?? null)
      : '',
    `<section id="live"><h2>Live runs</h2>${renderLiveRuns(live, now, d.webUrl)}</section>`,
    `<section id="waiting"><h2>Waiting, in the order the next pass takes it</h2>${renderWaiting(mine(r.lastPass?.waiting ?? []), d.webUrl)}</section>`,
    only
      ? ''
      : `<section><h2>Runs against the cap since ${esc(time(d.timeline.from).slice(11))}${d.span === 'fit' ? '' : ` (last ${esc(d.span)})`} <small class="spans">${spanLinks(d.span)}</small></h2>${renderTimeline(d.timeline, d.webUrl, only)}<p class="narrow-only">On a screen this narrow the timeline is too small to read: the recent runs below list the same runs, newest first.</p></section>`,
    only ? '' : `<section id="repos"><h2>Repositories</h2>${repoRows(d, only)}</section>`,
    `<section id="deployments"><h2>Deployment runs</h2>${renderDeployments(mine(d.deployments), d.webUrl)}</section>`,
    `<section id="runs"><h2>Recent runs</h2>${renderRuns(mine(r.recentRuns), d.webUrl)}</section>`,
    `<section id="spend"><h2>Spend</h2>${renderSpendChart(mine(r.spend), today, dailyBudgetOf(r.budgets, only))}${renderBudgets(r.budgets.filter((b) => !only || b.repo === only || b.repo === null))}${renderUnsettled(mine(r.unsettled))}<h3>The costliest issues this week</h3>${renderIssueSpend(mine(r.issueSpend), d.webUrl)}${renderSpend(mine(r.spend))}</section>`,
  ];
  return sections.filter(Boolean).join('\n');
}

export function renderDashboard(d: DashboardData, page: DashboardPage): string {
  return pageHtml({
    title: page.kind === 'repo' ? `yoke: ${page.repo}` : 'yoke fleet',
    ...(page.kind === 'repo' ? { about: page.repo } : {}),
    signedIn: true,
    main: renderDashboardMain(d, page),
    mainAttrs: `data-refresh-ms="${d.refreshMs}"`,
    script: '/yoke/dashboard.js',
  });
}

/** The page's only script: fetch <main> again and swap it in; a lapsed session reloads into the sign-in form. */
export const DASHBOARD_SCRIPT = `'use strict';
(() => {
  const main = document.getElementById('main');
  const every = Number(main.dataset.refreshMs) || 10000;
  const refresh = async () => {
    try {
      const query = new URLSearchParams(location.search);
      query.set('part', 'main');
      const res = await fetch(location.pathname + '?' + query, { credentials: 'same-origin', cache: 'no-store' });
      if (res.status === 401) return location.reload();
      if (res.ok) {
        main.innerHTML = await res.text();
        document.body.dataset.refreshedAt = String(Date.now());
      }
    } catch {
      // Offline for a moment: the next tick tries again.
    }
  };
  setInterval(refresh, every);
})();
`;

/** The sign-in form: the operator token goes in a POST body, never in the URL. */
export function renderSignIn(problem: string | null): string {
  return pageHtml({
    title: 'yoke: sign in',
    signedIn: false,
    main: `<section><h2>Sign in</h2>${problem ? `<p class="problem">${esc(problem)}</p>` : ''}
<form class="sign-in" method="post" action="/yoke/session">
<label>Your yoke token: an operator token (YOKE_API_TOKENS), or your own person token (YOKE_PERSON_TOKENS), which shows the repositories you may read<br><input type="password" name="token" autocomplete="current-password" required></label>
<button>Sign in</button>
</form></section>`,
  });
}
