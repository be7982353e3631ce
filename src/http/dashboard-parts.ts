import { issueUrl, pullUrl, runUrl, subjectUrl } from '../fleet/links.js';
import type { WaitingItem } from '../fleet/candidate.js';
import type { PublicRun } from '../fleet/report.js';
import type { DeploymentCard } from './dashboard-data.js';
import type { Timeline } from './timeline.js';

// The pieces of the web dashboard, each a function of data to HTML. Every
// value that came from outside (titles, summaries, names) goes through esc().

export const esc = (s: unknown): string =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A recovery or message of yoke's own: escaped, then its `code spans` shown as code (never as literal backticks). */
export const prose = (s: unknown): string => esc(s).replace(/`([^`]+)`/g, '<code>$1</code>');

export const time = (ms: number | null): string => (ms ? new Date(ms).toISOString().replace('T', ' ').slice(0, 19) : '');

const link = (href: string | null, text: string): string => (href ? `<a href="${esc(href)}">${esc(text)}</a>` : esc(text));

export const repoLink = (repo: string): string => `<a href="/yoke/repos/${esc(repo)}">${esc(repo)}</a>`;

export const subjectLink = (webUrl: string, repo: string, subject: string): string => link(subjectUrl(webUrl, repo, subject), subject);

const usd = (n: number): string => `$${n.toFixed(2)}`;

/** The last 24 hours: one row per slot of the cap, one bar per run, coloured by kind and outcome. */
export function renderTimeline(t: Timeline, webUrl: string, focus: string | null): string {
  const W = 1000;
  const ROW = 22;
  const LABEL = 70;
  const rows = Math.max(t.cap, t.slots);
  const x = (ms: number) => LABEL + ((Math.max(ms, t.from) - t.from) / (t.to - t.from)) * (W - LABEL);
  const grid = Array.from({ length: rows }, (_, i) => {
    const over = i >= t.cap;
    return `<g class="row${over ? ' over-cap' : ''}"><rect class="lane" x="${LABEL}" y="${i * ROW}" width="${W - LABEL}" height="${ROW - 2}"></rect><text x="4" y="${i * ROW + 15}">${over ? 'over cap' : `slot ${i + 1}`}</text></g>`;
  }).join('');
  const hours = Array.from({ length: 5 }, (_, i) => {
    const at = t.from + (i * (t.to - t.from)) / 4;
    return `<text class="tick" x="${x(at)}" y="${rows * ROW + 14}">${esc(time(at).slice(11, t.to - t.from < 3600_000 ? 19 : 16))}</text>`;
  }).join('');
  const bars = t.bars
    .map((b) => {
      const left = x(b.start);
      const width = Math.max(2, x(b.end) - left);
      const cls = `bar kind-${b.kind} state-${b.state}${focus && b.repo !== focus ? ' other' : ''}`;
      const label = `${b.run} · ${b.kind} ${b.subject}${b.title !== null ? ` (${b.title})` : ''} of ${b.repo} · ${b.state} · ${time(b.start)} to ${b.state === 'live' ? 'now' : time(b.end)}`;
      const rect = `<rect class="${cls}" x="${left.toFixed(1)}" y="${b.slot * ROW + 2}" width="${width.toFixed(1)}" height="${ROW - 6}" data-run="${esc(b.run)}" data-slot="${b.slot}" data-start="${b.start}" data-end="${b.end}"><title>${esc(label)}</title></rect>`;
      const href = subjectUrl(webUrl, b.repo, b.subject);
      return href ? `<a href="${esc(href)}">${rect}</a>` : rect;
    })
    .join('');
  const legend = ['afk_auto', 'afk_manual', 'fix', 'lander']
    .map((k) => `<span class="key kind-${k}"></span>${k}`)
    .concat(['live', 'failure', 'timeout', 'cancelled'].map((s) => `<span class="key state-${s}"></span>${s}`))
    .join(' ');
  return `<svg id="timeline" viewBox="0 0 ${W} ${rows * ROW + 20}" role="img" aria-label="Runs in the last 24 hours against a cap of ${t.cap}" data-cap="${t.cap}" data-slots="${t.slots}">${grid}${bars}${hours}</svg>
<p class="legend">${legend}. ${t.bars.length} run(s); at most ${t.slots} at once against a cap of ${t.cap}.</p>`;
}

export function renderWaiting(items: readonly WaitingItem[], webUrl: string): string {
  if (!items.length) return '<p>Nothing is waiting: every piece of work the last pass found was started.</p>';
  const rows = items
    .map(
      (w) => `<tr data-code="${esc(w.code)}"><td>${repoLink(w.repo)}</td><td>${w.subject ? `${subjectLink(webUrl, w.repo, w.subject)}${w.title !== null ? ` <span class="title">${esc(w.title)}</span>` : ''}` : 'all its work'}</td>
<td>${w.subject ? esc(w.stage) : 'every stage'}</td><td><code>${esc(w.code)}</code> ${prose(w.message)}</td><td>${prose(w.recovery)}</td></tr>`,
    )
    .join('\n');
  return `<table class="waiting"><tr><th>repo</th><th>work</th><th>stage</th><th>why not now</th><th>to recover</th></tr>\n${rows}</table>`;
}

/** Why a run that did not succeed ended: yoke's reason, else the first line of what it reported. */
export function reasonOf(r: Pick<PublicRun, 'status' | 'outcome' | 'outcomeReason' | 'summary'>): string {
  if (r.status === 'live' || r.outcome === 'success') return r.outcomeReason ?? '';
  const said = r.outcomeReason ?? r.summary?.trim().split('\n')[0] ?? '';
  return said.length > 200 ? `${said.slice(0, 199)}…` : said;
}

export function renderRuns(runs: readonly PublicRun[], webUrl: string): string {
  if (!runs.length) return '<p>No runs yet.</p>';
  const rows = runs
    .map((r) => {
      const wf = runUrl(webUrl, r);
      const cost = r.cost ? `${usd(r.cost.usd)} <small>${r.cost.inputTokens}/${r.cost.outputTokens} tok</small>` : '';
      return `<tr class="state-${esc(r.status === 'live' ? 'live' : (r.outcome ?? 'ended'))}"><td><code>${esc(r.id)}</code></td><td>${repoLink(r.repo)}</td><td>${esc(r.kind)}</td><td>${subjectLink(webUrl, r.repo, r.subject)}${r.title !== null ? ` <span class="title">${esc(r.title)}</span>` : ''}</td>
<td>${esc(r.status === 'live' ? 'live' : r.outcome)}${r.verdict ? ` (${esc(r.verdict)})` : ''}</td><td>${wf ? link(wf, 'workflow run') : ''}</td><td>${time(r.launchedAt)}</td><td>${time(r.endedAt)}</td><td>${cost}</td><td>${esc(reasonOf(r))}</td></tr>`;
    })
    .join('\n');
  return `<table class="runs"><tr><th>run</th><th>repo</th><th>kind</th><th>work</th><th>outcome</th><th>workflow</th><th>launched</th><th>ended</th><th>cost</th><th>reason</th></tr>\n${rows}</table>`;
}

export function renderDeployments(cards: readonly DeploymentCard[], webUrl: string): string {
  if (!cards.length) return '<p>No deployment run in the last 24 hours.</p>';
  return cards
    .map((d) => {
      const stages = d.stages.map((s) => `<li class="stage state-${esc(s.state)}${s.current ? ' current' : ''}">${esc(s.name)} <small>${esc(s.kind)} · ${esc(s.state)}</small></li>`).join('');
      const members = d.members
        .map((m) => `<li${m.removed ? ' class="removed"' : ''}>${link(issueUrl(webUrl, d.repo, m.issue), `#${m.issue}`)} via ${link(pullUrl(webUrl, d.repo, m.pr), `PR #${m.pr}`)}${m.removed ? ' (removed)' : ''}</li>`)
        .join('');
      const waits = d.waits.map((w) => `<li>${esc(w.detail)} · notice ${esc(w.notice)}<br><code>${esc(w.command)}</code></li>`).join('');
      return `<article class="deployment" id="dr-${esc(d.id)}"><h3><code>${esc(d.id)}</code> of ${repoLink(d.repo)} at <code>${esc(d.commit.slice(0, 12))}</code>: ${esc(d.status)}${d.trackingIssue ? ` · ${link(issueUrl(webUrl, d.repo, d.trackingIssue), `tracking issue #${d.trackingIssue}`)}` : ''}</h3>
<ol class="stages">${stages}</ol><p>Members</p><ul>${members || '<li>none</li>'}</ul>${waits ? `<p>Waiting on</p><ul class="waits">${waits}</ul>` : ''}</article>`;
    })
    .join('\n');
}

export function renderSpend(spend: readonly { repo: string; day: string; usd: number; inputTokens: number; outputTokens: number; runs: number }[]): string {
  if (!spend.length) return '<p>No run has reported a cost in the last 7 days.</p>';
  const rows = spend.map((d) => `<tr><td>${esc(d.day)}</td><td>${repoLink(d.repo)}</td><td>${usd(d.usd)}</td><td>${d.runs}</td><td>${d.inputTokens}</td><td>${d.outputTokens}</td></tr>`).join('\n');
  return `<table class="spend"><tr><th>day (UTC)</th><th>repo</th><th>spent</th><th>runs</th><th>input tokens</th><th>output tokens</th></tr>\n${rows}</table>`;
}
