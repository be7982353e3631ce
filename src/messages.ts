import { makeRefusal, type Refusal } from './kernel/codes/table.js';
import { STUCK_LABEL } from './fleet/repo-facts.js';
import { encodeMarker, type MarkerPayload } from './forge/marker.js';
import type { WorkSpend } from './store/runs.js';
import type { WaitingItem } from './fleet/candidate.js';
import { subjectUrl } from './fleet/links.js';
import { inertBlock, inertInline } from './agent/output.js';
import { redactSecrets } from './kernel/redact.js';

// Every comment yoke writes, and every "To recover" line, comes from here.
// Refusals take their wording from the code table; tests compare whole texts,
// so a change of wording is a deliberate change of this file.

/** A refusal as people read it: what happened, then the command that recovers. */
export function refusalText(r: Refusal): string {
  return `${r.message}\n\n**To recover:** ${r.recovery}`;
}

/** DP03: yoke's answer to a protection-rule request, as GitHub shows it on the waiting workflow run. */
export function protectionComment(why: Refusal): string {
  return why.recovery === 'Nothing to do.' ? `yoke: ${why.message}` : `yoke: ${why.message} To move it: ${why.recovery}`;
}

/** The reply to a comment command: it mentions the commenter once. */
export function commandReply(author: string, text: string): string {
  return `@${author} ${text}`;
}

export function startQueued(issue: number): string {
  return `Queued a manual AFK run for #${issue}; it launches on the next pass with a free slot.`;
}

export function landQueued(pr: number): string {
  return `Queued a lander for #${pr} at its current head; it launches on the next pass with a free slot.`;
}

export function autoLoopSet(repo: string, on: boolean, paused: boolean): string {
  return `The auto loop of ${repo} is ${on ? 'on' : 'off'}.${paused ? ' It stays paused until `/yoke reset`.' : ''}`;
}

export function repoReset(repo: string, failuresCleared: number, wasPaused: boolean): string {
  return `Reset ${repo}: ${failuresCleared} consecutive failures cleared${wasPaused ? ' and the pause lifted' : ''}.`;
}

export interface StatusFacts {
  repo: string;
  autoLoop: boolean;
  pausedSince: number | null;
  failures: number;
  pauseThreshold: number;
  cap: number;
  liveFleetWide: number;
  autoland: boolean;
  fixForward: boolean;
  live: { id: string; kind: string; subject: string; deadline: number }[];
}

export function repoStatusReport(s: StatusFacts): string {
  const paused = s.pausedSince !== null ? ` (paused since ${new Date(s.pausedSince).toISOString()}; recover with \`/yoke reset\`)` : '';
  return [
    `**yoke status for ${s.repo}**`,
    `- auto loop: ${s.autoLoop ? 'on' : 'off'}${paused}`,
    // Failures can go on counting while paused: never "4 of 3".
    s.failures >= s.pauseThreshold
      ? `- consecutive AFK failures: ${s.failures} (it pauses at ${s.pauseThreshold})`
      : `- consecutive AFK failures: ${s.failures}; it pauses at ${s.pauseThreshold}`,
    `- cap: ${s.cap}; live runs fleet-wide: ${s.liveFleetWide}`,
    `- autoland: ${s.autoland ? 'on' : 'off'}; fix-forward: ${s.fixForward ? 'on' : 'off'}`,
    ...s.live.map((r) => `- live: \`${r.id}\` ${r.kind} on ${r.subject}, deadline ${new Date(r.deadline).toISOString()}`),
  ].join('\n');
}

/** SP15: posted on the issue whose AFK failure paused the repository. */
export function pauseNotice(repo: string, failures: number, threshold: number): string {
  const r = makeRefusal('repo_paused', { repo, threshold });
  return `yoke paused ${repo} after ${failures} consecutive AFK failures: the auto loop is stopped and manual starts are refused until someone resets it.\n\n**To recover:** ${r.recovery}`;
}

/** GH01: posted once per reason on the repository's control issue. */
export function disabledNotice(repo: string, reason: string): string {
  return `yoke has disabled ${repo}: ${reason}\n\n**To recover:** ${makeRefusal('repo_disabled', { repo, detail: reason }).recovery}`;
}

export function mergeRefusedNotice(pr: number, sha: string, detail: string): string {
  return `yoke did not merge this PR. ${refusalText(makeRefusal('merge_refused', { number: pr, sha: sha.slice(0, 7), detail }))}`;
}

const MAX_LISTED = 20;

/** The protected files of a change, as a short list in code spans. */
export function protectedFileList(files: readonly string[]): string {
  const shown = files.slice(0, MAX_LISTED).map((f) => `\`${f.replace(/`/g, "'")}\``);
  return files.length > MAX_LISTED ? `${shown.join(', ')} and ${files.length - MAX_LISTED} more` : shown.join(', ');
}

/** TR14: the one comment on a claim PR whose accepted head changes a protected path. */
export function protectedHoldNotice(pr: number, sha: string, files: readonly string[]): string {
  const r = makeRefusal('protected_paths_changed', { number: pr, sha: sha.slice(0, 7), files: protectedFileList(files) });
  return `yoke did not merge this PR. ${r.message}\n\nThese paths are protected by default (\`.github/**\`, \`CLAUDE.md\`, \`AGENTS.md\`, \`.claude/**\`, \`.mcp.json\`, \`.codex/**\`) or by \`protected_paths:\` in \`.github/yoke.yml\`: an agent that could change them unseen could change what yoke checks.\n\n**To recover:** ${r.recovery}`;
}

/** TR14: the same comment once a writer approved the held head. */
export function protectedApprovedNotice(pr: number, sha: string, files: readonly string[], by: string): string {
  return `${by} approved #${pr} at \`${sha.slice(0, 7)}\`, which changes ${protectedFileList(files)}; yoke merges it at that head.`;
}

/** TR24: posted once per edit on an AFK issue whose body changed after yoke saw its label. */
export function issueEditedNotice(repo: string, issue: number, label: string): string {
  return `yoke has not started on this issue. ${refusalText(makeRefusal('issue_edited_since_label', { repo, number: issue, label }))}`;
}

export function fixExhaustedNotice(author: string | null, pr: number, attempts: number): string {
  const r = makeRefusal('fix_attempts_exhausted', { number: pr, attempts });
  return `@${author ?? 'maintainers'} ${r.message} yoke has stopped fixing it and labelled it \`${STUCK_LABEL}\`.\n\n**To recover:** ${r.recovery}`;
}

/** The public record of a lander's verdict: the marker line, then its summary. */
/** What the work has cost so far, as its runs reported it; nothing when none reported a cost. */
export function spendLine(what: string, s: WorkSpend): string | null {
  if (s.runs === 0) return null;
  return `_Spend on ${what} so far: $${s.usd.toFixed(2)} over ${s.runs} run${s.runs === 1 ? '' : 's'} (${s.inputTokens} input and ${s.outputTokens} output tokens)._`;
}

export function verdictComment(payload: MarkerPayload, summary: string | null, spend: string | null = null): string {
  return encodeMarker(payload, summary ?? '') + (spend ? `\n\n${spend}` : '');
}

// Deployment runs

export function trackingIssueTitle(v: { id: string; repo: string; commit: string }): string {
  return `Deployment run ${v.id}: ${v.repo} at ${v.commit.slice(0, 12)}`;
}

const STAGE_MARK: Record<string, string> = { succeeded: '✅', settled: '✅', failed: '❌', running: '⏳', waiting: '⏳', pending: '·', not_entered: '·' };

/** The tracking issue's body: stages, members, and what moves the run now. Everything comes from the run's view. */
export function trackingIssueBody(v: TrackingView): string {
  const lines = [
    `yoke keeps this issue current for deployment run \`${v.id}\` of ${v.repo}, pinned at \`${v.commit}\`.`,
    '',
    `**Status:** ${v.status}${v.currentStage ? ` at stage \`${v.currentStage}\`` : ''}${v.creator ? ` · created by @${v.creator}` : ''}${v.supersedes ? ` · takes over \`${v.supersedes}\`` : ''}`,
    '',
    '### Stages',
    ...v.stages.flatMap((s) => [
      `- ${STAGE_MARK[s.state] ?? '·'} \`${s.name}\` (${s.kind}): ${s.state.replace('_', ' ')}${s.current ? ' ← current' : ''}${s.detail ? ` · ${inertInline(s.detail)}` : ''}`,
      ...(s.deployments ?? []).map((d) => `  - deployment [${d.id}](${d.url}) to \`${d.environment}\`: ${d.state.replace('_', ' ')}${d.logUrl ? ` · [log](${d.logUrl})` : ''}`),
    ]),
    '',
    '### Members',
    '| item | claim PR | QA | delivery |',
    '|---|---|---|---|',
    ...v.members.map(
      (m) =>
        `| ${m.item} (#${m.issue}) | #${m.pr} | ${m.removed ? `removed${m.removed.reason ? `: ${escapeCell(m.removed.reason)}` : ''}` : Object.entries(m.stages).map(([s, st]) => `${s}: ${st}`).join(', ') || '—'} | ${m.delivery} |`,
    ),
  ];
  const waits = v.stages.find((s) => s.current)?.waits ?? [];
  if (waits.length || v.next.length) {
    lines.push('', '### Waiting on');
    if (waits.length) for (const w of waits) lines.push(`- ${w.detail}: \`${w.command}\``);
    else for (const c of v.next) lines.push(`- \`${c}\``);
  }
  return lines.join('\n');
}

const escapeCell = (s: string) => s.replace(/[|\n\r]/g, ' ').slice(0, 200);

export interface TrackingView {
  id: string;
  repo: string;
  commit: string;
  status: string;
  creator: string | null;
  supersedes: string | null;
  currentStage: string | null;
  stages: { name: string; kind: string; state: string; current: boolean; detail: string | null; waits: { detail: string; command: string }[]; deployments?: { id: number; environment: string; state: string; logUrl: string | null; url: string }[] }[];
  members: { item: string; issue: number; pr: number; removed: { reason: string | null } | null; stages: Record<string, string>; delivery: string }[];
  next: string[];
}

export function qaAttached(item: string, planId: string, fresh: boolean): string {
  return fresh
    ? `Attached QA plan \`${planId}\` to ${item}. It becomes part of ${item}'s QA when ${item} next enters a QA stage.`
    : `QA plan \`${planId}\` was already attached to ${item}.`;
}

export function qaWaived(subject: string, plan: string, caseId: string, reason: string): string {
  return `Waived case \`${caseId}\` of plan \`${plan}\` for ${subject}: ${reason}`;
}

// QA notices

/** How a notice names its recipient: a person is mentioned, a yoke run or a driver is named. */
export function recipientMention(kind: string, id: string): string {
  if (id.startsWith('run:')) return `yoke run \`${id.slice(4)}\``;
  if (kind === 'driver') return `driver \`${id}\``;
  return `@${id}`;
}

const WHY: Record<string, (repo: string) => string> = {
  holder: () => '',
  driver: () => 'You are driving this deployment run.',
  creator: () => 'You created this deployment run, and it has no live driver to take this.',
  steering: (repo) => `You steer deliveries of ${repo}; neither a live driver nor the run's creator is taking this.`,
};

export interface NoticeFacts {
  kind: string;
  recipient: string;
  repo: string;
  run: string;
  stage: string;
  commit: string;
  subject: string;
  waits: readonly { detail: string; command: string }[];
}

/** A notice: who, what is awaited, the command that moves each wait, and how to hand it back. */
export function qaNotice(f: NoticeFacts): string {
  const why = WHY[f.kind]?.(f.repo) ?? '';
  return [
    `${recipientMention(f.kind, f.recipient)} deployment run \`${f.run}\` is waiting at stage \`${f.stage}\` for ${f.subject}.${why ? ` ${why}` : ''}`,
    '',
    ...f.waits.map((w) => `- ${w.detail}: \`${w.command}\``),
    '',
    `Run QA commands in a checkout of \`${f.commit}\`. To hand this back, comment \`/yoke qa decline\`.`,
  ].join('\n');
}

export function qaNoticeWithdrawn(kind: string, recipient: string, run: string, group: string): string {
  return `${recipientMention(kind, recipient)} withdrawn: group \`${group}\` of deployment run \`${run}\` closed, so nothing waits on it any more.`;
}

export function qaNoticeResolved(kind: string, recipient: string, run: string, subject: string, stage: string): string {
  return `${recipientMention(kind, recipient)} resolved: ${subject} no longer waits at stage \`${stage}\` of deployment run \`${run}\`.`;
}

export function closeoutNotice(f: { holder: string | null; item: string; issue: number; run: string; stage: string; commit: string; label: string; spend?: string | null }): string {
  const who = f.holder ? `${recipientMention('holder', f.holder)} ` : '';
  const text = `${who}${f.item} is delivered: deployment run \`${f.run}\` accepted it at stage \`${f.stage}\` on \`${f.commit}\`. Issue #${f.issue} is closed as completed and labelled \`${f.label}\`.`;
  return f.spend ? `${text}\n\n${f.spend}` : text;
}

export function qaDeclined(count: number): string {
  return `Declined ${count === 1 ? 'the notice' : `${count} notices`} on this thread. yoke passes ${count === 1 ? 'it' : 'them'} on: to the run's live driver, else its creator, else steering.`;
}

// The dashboard issue (one per repository, labelled yoke:control)

export interface DashboardIssueView {
  repo: string;
  webUrl: string;
  autoLoop: boolean;
  /** Whether the loop's state comes from the opt-in file or a `/yoke auto` command. */
  autoFrom: 'config' | 'command';
  failures: number;
  threshold: number;
  paused: boolean;
  live: { id: string; kind: string; subject: string; title: string | null; workflowUrl: string | null }[];
  waiting: WaitingItem[];
  stuck: { number: number; title: string }[];
  owed: { issue: number; pr: number }[];
  spentToday: number;
  dailyUsd: number | null;
}

export function dashboardIssueTitle(repo: string): string {
  return `yoke dashboard for ${repo}`;
}

/** Markdown that shows an outside text as text: no markup, mention, or reference takes effect. */
const plain = (s: string): string => s.replace(/[\\`*_{}[\]()<>#+\-!|~@&]/g, (c) => `\\${c}`).replace(/\s+/g, ' ');

/** `issue#N` or `pr#N` as a link on GitHub. */
const workLink = (webUrl: string, repo: string, subject: string): string => `[#${subject.split('#')[1]}](${subjectUrl(webUrl, repo, subject)})`;

/** The body yoke keeps current. It has no time in it, so it changes only when what it shows does. */
export function dashboardIssueBody(v: DashboardIssueView): string {
  const auto = v.autoLoop
    ? `**on** (${v.autoFrom === 'config' ? 'from `.github/yoke.yml`' : 'set by `/yoke auto on`'}). To stop starting new work: comment \`/yoke auto off\` here.`
    : `**off** (${v.autoFrom === 'config' ? '`auto: false` in `.github/yoke.yml`' : 'set by `/yoke auto off`'}). To start labelled work again: comment \`/yoke auto on\` here.`;
  const health = v.paused
    ? `**Paused:** ${refusalText(makeRefusal('repo_paused', { repo: v.repo, threshold: v.threshold }))}`
    : `**Failures:** ${v.failures} in a row; ${v.threshold} pause new work.${v.failures ? ' A success clears them, or comment `/yoke reset` here.' : ''}`;
  const live = v.live.length
    ? v.live.map((r) => `- \`${r.id}\` ${r.kind} ${workLink(v.webUrl, v.repo, r.subject)}${r.title ? ` ${plain(r.title)}` : ''}${r.workflowUrl ? ` · [workflow run](${r.workflowUrl})` : ''}`)
    : ['_None._'];
  const waiting = v.waiting.length
    ? v.waiting.map(
        (w) =>
          `- ${w.subject ? `${workLink(v.webUrl, v.repo, w.subject)}${w.title ? ` ${plain(w.title)}` : ''}` : 'All its work'} (${w.stage.replace('_', ' ')}): \`${w.code}\` ${w.message} To recover: ${w.recovery}`,
      )
    : ['_Nothing is waiting: the last pass started everything it found._'];
  const stuck = v.stuck.length
    ? v.stuck.map((p) => `- ${workLink(v.webUrl, v.repo, `pr#${p.number}`)} ${plain(p.title)}: its fix attempts are used up. Repair it by hand, then comment \`/yoke land\` on it.`)
    : ['_None._'];
  const owed = v.owed.length ? v.owed.map((o) => `- ${workLink(v.webUrl, v.repo, `issue#${o.issue}`)}, merged in ${workLink(v.webUrl, v.repo, `pr#${o.pr}`)}`) : ['_None._'];
  const spend = `$${v.spentToday.toFixed(2)} reported today (UTC)${v.dailyUsd !== null ? ` of a daily budget of $${v.dailyUsd.toFixed(2)} (\`budget.daily_usd\`)` : ''}.`;
  return [
    `yoke keeps this issue current for ${v.repo}: it rewrites this text when what it shows changes. Comment \`/yoke status\` for more, or close the issue and set \`dashboard_issue: false\` in \`.github/yoke.yml\` to stop it.`,
    '',
    '### Auto loop',
    auto,
    '',
    health,
    '',
    '### Live runs',
    ...live,
    '',
    '### Waiting, in the order the next pass takes it',
    ...waiting,
    '',
    '### Stuck PRs',
    ...stuck,
    '',
    '### Delivery owed',
    ...owed,
    '',
    '### Spend',
    spend,
  ].join('\n');
}

// The claim PR yoke opens for an agent's branch

/** The branch an AFK run's agent delivers to. */
export const claimBranch = (issue: number, runId: string): string => `yoke/${issue}-${runId}`;

export function claimPullTitle(title: string): string {
  const t = title.replace(/\s+/g, ' ').trim() || 'yoke: agent work';
  return t.length > 200 ? `${t.slice(0, 199)}…` : t;
}

/**
 * The claim PR's body: the closing keyword, what the agent said, and the trailer that binds it to its run (TR04).
 * TR15: the agent's words are redacted and quoted inert, so no mention, link, closing keyword or trailer in them acts.
 */
export function claimPullBody(issue: number, runId: string, summary: string): string {
  const said = redactSecrets(summary).trim().slice(0, 20_000);
  const quoted = said ? `The agent's summary, quoted as it wrote it:\n\n${inertBlock(said)}` : '_The agent gave no summary._';
  return `Closes #${issue}\n\n${quoted}\n\nYoke-Run: ${runId}`;
}

export interface FailedRunFacts {
  kind: 'afk' | 'fix';
  runId: string;
  outcome: 'failure' | 'timeout';
  /** What the run reported, or why it ended without a report. */
  why: string;
  /** How many runs of this kind on this thread have failed so far. */
  failures: number;
  link: string | null;
}

/** The one comment on an issue (AFK) or claim PR (fix) whose last run failed; edited for each later failure. */
export function runFailedNotice(f: FailedRunFacts): string {
  const what = f.kind === 'afk' ? 'AFK run' : 'fix run';
  const ended = f.outcome === 'timeout' ? 'ran out of time' : 'failed';
  const run = f.link ? `[\`${f.runId}\`](${f.link})` : `\`${f.runId}\``;
  const recovery =
    f.kind === 'afk'
      ? 'yoke starts another run on a later pass, unless the repository pauses at its failure threshold; to start one now, comment `/yoke start`. If the issue cannot be done as written, change it, or take the AFK label off.'
      : 'yoke starts another fix run while fix-forward has attempts left; then the PR is labelled stuck. Push a fix to the branch yourself, or comment `/yoke land` to have the head validated again.';
  // The run's own words: redacted and inert (TR15), so nothing it printed mentions, links or poses as yoke's recovery.
  const quoted = inertBlock(redactSecrets(f.why).trim().split('\n').slice(0, 20).join('\n'));
  return `yoke's ${what} ${run} ${ended}${f.failures > 1 ? ` (${f.failures} failed runs here so far)` : ''}:\n\n${quoted}\n\n**To recover:** ${recovery}`;
}
