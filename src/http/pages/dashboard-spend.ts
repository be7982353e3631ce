import type { BudgetStatus } from '../../fleet/money/budgets.js';
import type { DailySpend, IssueSpend } from '../../store/fleet/spend.js';
import type { FleetPart } from '../../fleet/notices/report.js';
import { esc, repoLink } from './dashboard-parts.js';

// BU06 on the dashboards: spend per day against the daily budget as a chart the page draws (SVG), each
// budget's standing with its runway at the current rate, and the issues that cost the most this week.

const usd = (n: number) => `$${n.toFixed(2)}`;

/** The last `days` UTC days up to `today`, oldest first. */
function lastDays(today: string, days: number): string[] {
  const end = Date.parse(`${today}T00:00:00Z`);
  return Array.from({ length: days }, (_, i) => new Date(end - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

/**
 * The chart: one bar per UTC day of the last seven (what runs reported that day), against the daily budget
 * as a dashed line where one is set. Each bar says its day and figure on hover and to a screen reader.
 */
export function renderSpendChart(spend: readonly DailySpend[], today: string, dailyBudget: number | null): string {
  const W = 560;
  const H = 160;
  const BASE = H - 20;
  const days = lastDays(today, 7);
  const perDay = days.map((d) => spend.filter((s) => s.day === d).reduce((a, s) => a + s.usd, 0));
  const top = Math.max(dailyBudget ?? 0, ...perDay, 0.01) * 1.1;
  const y = (v: number) => BASE - (v / top) * (BASE - 10);
  const slot = W / days.length;
  const bars = days
    .map((d, i) => {
      const v = perDay[i]!;
      const over = dailyBudget !== null && v > dailyBudget;
      return `<g class="day${over ? ' over' : ''}"><title>${d}: ${usd(v)}</title><rect x="${(i * slot + 8).toFixed(1)}" y="${y(v).toFixed(1)}" width="${(slot - 16).toFixed(1)}" height="${(BASE - y(v)).toFixed(1)}"></rect><text x="${(i * slot + slot / 2).toFixed(1)}" y="${H - 5}" text-anchor="middle">${d.slice(5)}</text></g>`;
    })
    .join('');
  const line =
    dailyBudget === null
      ? ''
      : `<g class="budget"><title>daily budget ${usd(dailyBudget)}</title><line x1="0" x2="${W}" y1="${y(dailyBudget).toFixed(1)}" y2="${y(dailyBudget).toFixed(1)}"></line><text x="${W - 4}" y="${(y(dailyBudget) - 4).toFixed(1)}" text-anchor="end">budget ${usd(dailyBudget)}/day</text></g>`;
  const label = `Spend per day over the last 7 days${dailyBudget === null ? '' : ` against a daily budget of ${usd(dailyBudget)}`}`;
  return `<svg id="spend-chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(label)}">${bars}${line}</svg>`;
}

/** Each budget in force: whose, what it holds of its limit, when it starts again, and its runway. */
export function renderBudgets(budgets: readonly BudgetStatus[]): string {
  if (!budgets.length) return '<p>No budget is set: runs are limited by <code>agent.max_usd</code> alone.</p>';
  const rows = budgets
    .map(
      (b) =>
        `<tr><td>${b.repo === null ? 'the fleet' : esc(b.repo)}</td><td>${b.period === 'day' ? 'daily' : 'monthly'}</td><td>${usd(b.heldUsd)} of ${usd(b.limitUsd)}</td><td>${esc(b.until)}</td><td>${esc(b.runway)}</td></tr>`,
    )
    .join('\n');
  return `<table class="budgets"><tr><th>budget</th><th>period</th><th>spent and reserved</th><th>starts again</th><th>runway</th></tr>\n${rows}</table>`;
}

/** BU02: the runs that ended without reporting what they spent, each holding its reservation, and the command that settles it. */
export function renderUnsettled(unsettled: readonly FleetPart['unsettled'][number][]): string {
  if (!unsettled.length) return '';
  const rows = unsettled
    .map(
      (u) =>
        `<tr><td>${esc(u.id)}</td><td>${repoLink(u.repo)}</td><td>${esc(u.kind)}</td><td>${usd(u.reservedUsd)}</td><td><code>yoke runs settle ${esc(u.id)} --usd N</code></td></tr>`,
    )
    .join('\n');
  return `<h3>Unsettled runs</h3><p>These ended without reporting what they spent, so the budgets hold their whole reservations. Once you know what one spent, settle it.</p><table class="unsettled"><tr><th>run</th><th>repository</th><th>kind</th><th>holds</th><th>settle it</th></tr>\n${rows}</table>`;
}

/** The issues whose runs cost the most this week, with where the money went. */
export function renderIssueSpend(issues: readonly IssueSpend[], webUrl: string): string {
  if (!issues.length) return '<p>No issue has a reported cost this week.</p>';
  const rows = issues
    .map(
      (i) =>
        `<tr><td><a href="${esc(`${webUrl}/${i.repo}/issues/${i.issue}`)}">${esc(i.repo)}#${i.issue}</a></td><td>${usd(i.usd)}</td><td>${i.runs}</td><td>${usd(i.byKind.afk)}</td><td>${usd(i.byKind.fix)}</td><td>${usd(i.byKind.lander)}</td><td>${i.inputTokens} / ${i.outputTokens}</td></tr>`,
    )
    .join('\n');
  return `<table class="issue-spend"><tr><th>issue</th><th>cost</th><th>runs</th><th>AFK</th><th>fixes</th><th>landers</th><th>tokens in / out</th></tr>\n${rows}</table>`;
}
