import type { NextPass } from '../../fleet/spawn/next-pass.js';
import { nextPassText } from '../../fleet/notices/messages.js';
import type { Refusal } from '../../kernel/codes/table.js';
import type { DoctorReport } from '../operator/doctor.js';
import { environmentUrl, issueUrl, pullUrl, runUrl, subjectUrl } from '../../fleet/notices/links.js';
import type { WaitingItem } from '../../fleet/candidate.js';
import type { PublicRun } from '../../fleet/notices/report.js';
import type { DeploymentCard, RepoPageData } from './dashboard-data.js';
import type { Timeline } from './timeline.js';
import type { StageState } from '../../store/delivery/deployment-runs.js';
import { keysOf } from '../../kernel/guards.js';
import { DELIVERY_LABELS } from '../../config/delivery.js';

// The pieces of the web dashboard, each a function of data to HTML. Every
// value that came from outside (titles, summaries, names) goes through esc().

export const esc = (s: unknown): string =>
  String(s ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

/** A recovery or message of yoke's own: escaped, then its `code spans` shown as code (never as literal backticks). */
export const prose = (s: unknown): string => esc(s).replace(/`([^`]+)`/g, '<code>$1</code>');

/** A time as the dashboard shows it, always in UTC and saying so: `2026-12-03 17:38:16 UTC`. */
export const time = (ms: number | null): string =>
  ms ? `${new Date(ms).toISOString().replace('T', ' ').slice(0, 19)} UTC` : '';

const link = (href: string | null, text: string): string =>
  href ? `<a href="${esc(href)}">${esc(text)}</a>` : esc(text);

export const repoLink = (repo: string): string => `<a href="/yoke/repos/${esc(repo)}">${esc(repo)}</a>`;

export const subjectLink = (webUrl: string, repo: string, subject: string): string =>
  link(subjectUrl(webUrl, repo, subject), subject);

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

/** Codes that hold back a repository's work as a whole: its waiting rows are one line, listing the work, not one long message per issue. */
const REPO_WIDE = new Set(['repo_paused', 'repo_disabled', 'budget_reserved', 'at_cap']);

/** One row of the waiting table: an item, or every item of one repository and stage held back by the same repository-wide reason. */
export interface WaitingRow {
  item: WaitingItem;
  /** The work the row stands for: one subject, or all those the reason holds back. */
  subjects: { subject: string; title: string | null }[];
}

/** Folds the waiting items a repository-wide reason holds back into one row per repository, stage and reason, in pass order. */
export function groupWaiting(items: readonly WaitingItem[]): WaitingRow[] {
  const rows: WaitingRow[] = [];
  const wide = new Map<string, WaitingRow>();
  for (const w of items) {
    const subjects = w.subject ? [{ subject: w.subject, title: w.title }] : [];
    if (!REPO_WIDE.has(w.code)) {
      rows.push({ item: w, subjects });
      continue;
    }
    const key = `${w.repo}\u0000${w.stage}\u0000${w.code}\u0000${w.message}`;
    const row = wide.get(key);
    if (row) row.subjects.push(...subjects);
    else {
      const fresh = { item: w, subjects };
      wide.set(key, fresh);
      rows.push(fresh);
    }
  }
  return rows;
}

const workCell = (webUrl: string, row: WaitingRow): string => {
  const { item: w, subjects } = row;
  if (!w.subject && !subjects.length) return 'all its work';
  if (subjects.length === 1)
    return `${subjectLink(webUrl, w.repo, subjects[0]!.subject)}${subjects[0]!.title !== null ? ` <span class="title">${esc(subjects[0]!.title)}</span>` : ''}`;
  return `${subjects.length} items: ${subjects.map((x) => subjectLink(webUrl, w.repo, x.subject)).join(', ')}`;
};

export function renderWaiting(items: readonly WaitingItem[], webUrl: string): string {
  if (!items.length) return '<p>Nothing is waiting: every piece of work the last pass found was started.</p>';
  const rows = groupWaiting(items)
    .map((row) => {
      const w = row.item;
      return `<tr data-code="${esc(w.code)}"><td>${repoLink(w.repo)}</td><td>${workCell(webUrl, row)}</td>
<td>${w.subject || row.subjects.length ? esc(w.stage) : 'every stage'}</td><td><code>${esc(w.code)}</code> ${prose(w.message)}</td><td>${prose(w.recovery)}</td></tr>`;
    })
    .join('\n');
  return `<table class="waiting"><tr><th>repo</th><th>work</th><th>stage</th><th>why not now</th><th>to recover</th></tr>\n${rows}</table>`;
}

/** Why a run that did not succeed ended: yoke's reason, else the first line of what it reported (cut at `max` characters). */
export function reasonOf(r: Pick<PublicRun, 'status' | 'outcome' | 'outcomeReason' | 'summary'>, max = 200): string {
  if (r.status === 'live' || r.outcome === 'success') return r.outcomeReason ?? '';
  const said = r.outcomeReason ?? r.summary?.trim().split('\n')[0] ?? '';
  return said.length > max ? `${said.slice(0, max - 1)}…` : said;
}

/** How a run ended, in words: a lander says what it decided ("rejected", not "success (reject)"). */
export function runResult(r: Pick<PublicRun, 'status' | 'outcome' | 'verdict'>): string {
  if (r.status === 'live') return 'live';
  if (r.outcome === 'success' && r.verdict) return r.verdict === 'accept' ? 'accepted' : 'rejected';
  return r.outcome ?? 'ended';
}

export function renderRuns(runs: readonly PublicRun[], webUrl: string): string {
  if (!runs.length) return '<p>No runs yet.</p>';
  const rows = runs
    .map((r) => {
      const wf = runUrl(webUrl, r);
      const cost = r.cost ? `${usd(r.cost.usd)} <small>${r.cost.inputTokens}/${r.cost.outputTokens} tok</small>` : '';
      const reason = reasonOf(r);
      const took = r.endedAt ? `<br><small>took ${duration(r.endedAt - r.launchedAt)}</small>` : '';
      return `<tr class="state-${esc(r.status === 'live' ? 'live' : (r.outcome ?? 'ended'))}"><td><code>${esc(r.id)}</code></td><td>${repoLink(r.repo)}</td><td>${esc(r.kind)}${r.kind === 'fix' && r.why ? `<br><small class="why">for ${esc(r.why)}</small>` : ''}</td><td class="work">${subjectLink(webUrl, r.repo, r.subject)}${r.title !== null ? ` <span class="title" title="${esc(r.title)}">${esc(r.title)}</span>` : ''}</td>
<td class="outcome"><span class="word">${esc(runResult(r))}</span>${reason ? ` <span class="reason">${esc(reason)}</span>` : ''}</td><td>${wf ? link(wf, 'workflow run') : ''}</td><td class="time">${time(r.launchedAt)}${took}</td><td>${cost}</td></tr>`;
    })
    .join('\n');
  return `<table class="runs"><tr><th>run</th><th>repo</th><th>kind</th><th>work</th><th>outcome</th><th>workflow</th><th>launched</th><th>cost</th></tr>\n${rows}</table>`;
}

/** What each state of a deployment run's stage means, as the card's tooltips and its legend say it. */
export const STAGE_WORDS: Record<StageState | 'pending', string> = {
  pending: 'not reached yet',
  running: 'deploying now',
  succeeded: 'deployed',
  failed: 'the deploy failed; the run stops here',
  frozen:
    "a QA stage the run has entered: each member's QA cases and who answers them are fixed, and the run waits for their verdicts",
  settled: "every member's QA cases passed (or were waived) at this commit: the run goes on to the next stage",
};

/** The words the cards use, said once under them: the stage states, and what "owed" means for a member. */
const deploymentWords = (): string =>
  `<dl class="words">${keysOf(STAGE_WORDS)
    .map((k) => `<dt>${k}</dt><dd>${esc(STAGE_WORDS[k])}</dd>`)
    .join(
      '',
    )}<dt>owed</dt><dd>a member's delivery, from the merge of its claim PR until the run closes it out (its issue carries the label ${DELIVERY_LABELS.owed} until then, ${DELIVERY_LABELS.delivered} after, unless the delivery section names others)</dd></dl>`;

export function renderDeployments(cards: readonly DeploymentCard[], webUrl: string): string {
  if (!cards.length) return '<p>No deployment run in the last 24 hours.</p>';
  const shown = cards
    .map((d) => {
      const deployed = (s: DeploymentCard['stages'][number]) =>
        s.deployment
          ? ` · ${link(environmentUrl(webUrl, d.repo, s.deployment.environment), `deployment ${s.deployment.id}`)} to ${esc(s.deployment.environment)}: ${esc(s.deployment.state)}${s.deployment.logUrl ? ` (${link(s.deployment.logUrl, 'log')})` : ''}`
          : '';
      const stages = d.stages
        .map(
          (s) =>
            `<li class="stage state-${esc(s.state)}${s.current ? ' current' : ''}" title="${esc(STAGE_WORDS[s.state])}">${esc(s.name)} <small>${esc(s.kind)} · ${esc(s.state)}${deployed(s)}</small></li>`,
        )
        .join('');
      const members = d.members
        .map(
          (m) =>
            `<li${m.removed ? ' class="removed"' : ''}>${link(issueUrl(webUrl, d.repo, m.issue), `#${m.issue}`)} via ${link(pullUrl(webUrl, d.repo, m.pr), `PR #${m.pr}`)}${m.removed ? ' (removed)' : ''}</li>`,
        )
        .join('');
      const waits = d.waits
        .map((w) => `<li>${esc(w.detail)} · notice ${esc(w.notice)}<br><code>${esc(w.command)}</code></li>`)
        .join('');
      return `<article class="deployment" id="dr-${esc(d.id)}"><h3><code>${esc(d.id)}</code> of ${repoLink(d.repo)} at <code>${esc(d.commit.slice(0, 12))}</code>: ${esc(d.status)}${d.trackingIssue ? ` · ${link(issueUrl(webUrl, d.repo, d.trackingIssue), `tracking issue #${d.trackingIssue}`)}` : ''}</h3>
<ol class="stages">${stages}</ol><p>Members</p><ul>${members || '<li>none</li>'}</ul>${waits ? `<p>Waiting on</p><ul class="waits">${waits}</ul>` : ''}</article>`;
    })
    .join('\n');
  return shown + deploymentWords();
}

export function renderSpend(
  spend: readonly { repo: string; day: string; usd: number; inputTokens: number; outputTokens: number; runs: number }[],
): string {
  if (!spend.length) return '<p>No run has reported a cost in the last 7 days.</p>';
  const rows = spend
    .map(
      (d) =>
        `<tr><td>${esc(d.day)}</td><td>${repoLink(d.repo)}</td><td>${usd(d.usd)}</td><td>${d.runs}</td><td>${d.inputTokens}</td><td>${d.outputTokens}</td></tr>`,
    )
    .join('\n');
  return `<table class="spend"><tr><th>day (UTC)</th><th>repo</th><th>spent</th><th>runs</th><th>input tokens</th><th>output tokens</th></tr>\n${rows}</table>`;
}

/** "4m 12s", "1h 03m": how long, as a person reads it. */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** The runs holding a slot now: how long each has run and when its deadline falls. */
export function renderLiveRuns(runs: readonly PublicRun[], now: number, webUrl: string): string {
  if (!runs.length) return '<p>No run is live.</p>';
  const rows = [...runs]
    .sort((a, b) => a.launchedAt - b.launchedAt)
    .map((r) => {
      const wf = runUrl(webUrl, r);
      const left = r.budgetDeadline - now;
      const deadline = `${time(r.budgetDeadline).slice(11)} <small>(${left >= 0 ? `in ${duration(left)}` : `${duration(-left)} ago: the reaper ends it`})</small>`;
      return `<tr data-run="${esc(r.id)}"><td><code>${esc(r.id)}</code></td><td>${repoLink(r.repo)}</td><td>${esc(r.kind)}</td><td>${subjectLink(webUrl, r.repo, r.subject)}${r.title !== null ? ` <span class="title">${esc(r.title)}</span>` : ''}</td><td class="elapsed">${duration(now - r.launchedAt)}</td><td class="deadline${left < 0 ? ' flag' : ''}">${deadline}</td><td>${wf ? link(wf, 'workflow run') : ''}</td></tr>`;
    })
    .join('\n');
  return `<table class="live"><tr><th>run</th><th>repo</th><th>kind</th><th>work</th><th>running for</th><th>deadline</th><th>workflow</th></tr>\n${rows}</table>`;
}

/** What only a repository's page shows: its settings as yoke read them, its dashboard issue, its open claim PRs with their check runs and verdicts. */
export function renderRepoPage(p: RepoPageData, webUrl: string, disabledReason: string | null): string {
  const settings = p.settings
    ? `<p>As the last read found them${p.readAt ? ` (unchanged since ${esc(time(p.readAt))})` : ''}, defaults filled in:</p><pre class="settings">${esc(p.settings)}</pre>`
    : `<p>${disabledReason ? `Refused: ${esc(disabledReason)}` : 'Not read yet: the next pass reads <code>.github/yoke.yml</code>.'}</p>`;
  const issue = p.dashboardIssue
    ? `<p>Dashboard issue: ${link(issueUrl(webUrl, p.repo, p.dashboardIssue), `#${p.dashboardIssue}`)}</p>`
    : '<p>No dashboard issue yet: the next pass opens one.</p>';
  const claims = p.claims
    .map((c) => {
      const check = c.check
        ? `${esc(c.check.status)}${c.check.conclusion ? ` · ${esc(c.check.conclusion)}` : ''}${c.check.run ? ` <small>(${esc(c.check.run)})</small>` : ''}`
        : 'not written yet';
      const verdict = c.verdict
        ? `${esc(c.verdict.verdict)} <small>by <code>${esc(c.verdict.run)}</code></small>`
        : 'none for this head';
      return `<tr data-pr="${c.pr}"><td>${link(pullUrl(webUrl, p.repo, c.pr), `PR #${c.pr}`)} <span class="title">${esc(c.title)}</span></td><td>${c.issue ? link(issueUrl(webUrl, p.repo, c.issue), `#${c.issue}`) : ''}</td><td><code>${esc(c.headSha.slice(0, 12))}</code></td><td>${esc(c.author)}</td><td class="check">${check}</td><td class="verdict">${verdict}</td><td class="landing">${esc(c.landing)}</td><td class="cost">$${c.cost.usd.toFixed(2)} over ${c.cost.runs} run(s)</td></tr>`;
    })
    .join('\n');
  // LD05: what is validated together now, bottom of each stack first.
  const stacks = p.stacks.length
    ? `<ul class="stacks">${p.stacks.map((s) => `<li>${s.prs.map((n) => link(pullUrl(webUrl, p.repo, n), `#${n}`)).join(' + ')} on <code>${esc(s.base.slice(0, 12))}</code></li>`).join('')}</ul>`
    : '';
  const plan = `<p><a href="/yoke/repos/${esc(p.repo)}/plan">What would the next pass do?</a> A dry run: it reads GitHub as a pass does, and starts or changes nothing. <a href="/yoke/repos/${esc(p.repo)}/doctor">Check the set-up</a>: the app's permissions, the branch's rules for landing, the workflow, the secret, the public URL and the environments.</p>`;
  return `<section id="settings"><h2>Settings</h2>${settings}${issue}${plan}</section>
<section id="claims"><h2>Open claim PRs</h2>${claims ? `<table class="claims"><tr><th>PR</th><th>issue</th><th>head</th><th>author</th><th>yoke/lander check</th><th>lander verdict</th><th>landing</th><th>cost so far</th></tr>\n${claims}</table>` : '<p>No claim PR is open.</p>'}${stacks ? `<h3>Validated together now</h3>${stacks}` : ''}</section>`;
}

/** `/yoke/repos/OWNER/REPO/plan`'s <main>: the dry run of the next pass (`yoke plan`), or why there is none. */
export function renderPlanPage(repo: string, p: NextPass | Refusal): string {
  const body =
    'code' in p
      ? `<p>${esc(p.message)}</p><p><strong>To recover:</strong> ${esc(p.recovery)}</p>`
      : `<pre class="plan">${esc(nextPassText(p))}</pre>`;
  return `<section><h2>The next pass for ${esc(repo)}</h2>${body}<p><a href="/yoke/repos/${esc(repo)}">Back to ${esc(repo)}</a> · <a href="/yoke/repos/${esc(repo)}/plan">Ask again</a></p></section>`;
}

/** `/yoke/repos/OWNER/REPO/doctor`'s <main>: each check of `yoke doctor`, with the setting that fixes a failed one. */
export function renderDoctorPage(r: DoctorReport): string {
  const rows = r.checks
    .map(
      (c) =>
        `<tr class="${c.state}"><td>${c.state === 'ok' ? 'ok' : c.state === 'failed' ? 'FAILED' : 'skipped'}</td><td class="check">${esc(c.check)}</td><td>${esc(c.text)}${c.fix ? `<br><strong>Fix:</strong> ${esc(c.fix)}` : ''}</td></tr>`,
    )
    .join('\n');
  return `<section><h2>The set-up of ${esc(r.repo)}: ${r.ok ? 'ready' : 'not ready'}</h2><table class="doctor">${rows}</table><p><a href="/yoke/repos/${esc(r.repo)}">Back to ${esc(r.repo)}</a> · <a href="/yoke/repos/${esc(r.repo)}/doctor">Check again</a></p></section>`;
}
