import type { Log } from '../../kernel/log.js';
import { errorStack, errorText, unreachableCode } from '../../kernel/error-text.js';
import type { NextPass } from '../spawn/next-pass.js';
import { makeRefusal, type Refusal } from '../../kernel/codes/table.js';
import { refusalText } from '../../kernel/reply.js';
import { STUCK_LABEL } from '../repo-facts.js';
import { encodeMarker, type MarkerPayload } from '../../forge/marker.js';
import type { WorkSpend } from '../../store/fleet/spend.js';
import { inertBlock } from '../../agent/output.js';
import { redactSecrets } from '../../kernel/redact.js';

// Every comment the fleet writes, and its replies to commands and controls.
// Tests compare whole texts, so a change of wording is a deliberate change of
// this file. The dashboard issue's texts: dashboard-messages.ts.

export * from './dashboard-messages.js';

export function startQueued(issue: number, instructions = false, wait: Refusal | null = null): string {
  return `Queued a manual AFK run for #${issue}${instructions ? ' with your instructions' : ''}${queuedThen(wait)}`;
}

/** What becomes of queued work, as the pass would decide it now (fleet/money/queued-wait.ts). */
const queuedThen = (wait: Refusal | null): string =>
  wait
    ? `, and it waits: ${wait.message} To recover: ${wait.recovery}`
    : '; there is a free slot and money for it, so it launches on the next pass.';

/** TR24: the answer to `/yoke start` on an issue whose claim PR is open: its text approved, no new run. */
export function startConfirmed(issue: number, pr: number): string {
  return `Confirmed #${issue} as it reads now. Its claim PR #${pr} is open, so no new run starts: #${pr}'s fix runs work from this text.`;
}

/** TR33: the answer to `/yoke fix`: queued, or waiting for the run live on the PR. */
export function fixQueued(pr: number, liveRun: string | null, wait: Refusal | null = null): string {
  return liveRun
    ? `Run \`${liveRun}\` is live on #${pr}; your instructions go to the fix run after it, with any review that comes meanwhile.`
    : `Queued a fix run for #${pr} with your instructions${queuedThen(wait)}`;
}

export function landQueued(pr: number, wait: Refusal | null = null): string {
  return `Queued a lander for #${pr} at its current head${queuedThen(wait)}`;
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

/** A repository's status, line by line: in Markdown for a comment (`/yoke status`), in plain text for a terminal (`yoke repo status`). */
export function repoStatusReport(s: StatusFacts, style: 'markdown' | 'plain' = 'markdown'): string {
  const md = style === 'markdown';
  const code = (t: string) => (md ? `\`${t}\`` : t);
  const paused =
    s.pausedSince !== null
      ? ` (paused since ${new Date(s.pausedSince).toISOString()}; ${md ? 'recover with `/yoke reset`' : `to recover: ${makeRefusal('repo_paused', { repo: s.repo, threshold: s.pauseThreshold }).recovery}`})`
      : '';
  return [
    md ? `**yoke status for ${s.repo}**` : `yoke status for ${s.repo}`,
    `- auto loop: ${s.autoLoop ? 'on' : 'off'}${paused}`,
    // Failures can go on counting while paused: never "4 of 3".
    s.failures >= s.pauseThreshold
      ? `- consecutive AFK failures: ${s.failures} (it pauses at ${s.pauseThreshold})`
      : `- consecutive AFK failures: ${s.failures}; it pauses at ${s.pauseThreshold}`,
    `- cap: ${s.cap}; live runs fleet-wide: ${s.liveFleetWide}`,
    `- autoland: ${s.autoland ? 'on' : 'off'}; fix-forward: ${s.fixForward ? 'on' : 'off'}`,
    ...s.live.map(
      (r) => `- live: ${code(r.id)} ${r.kind} on ${r.subject}, deadline ${new Date(r.deadline).toISOString()}`,
    ),
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

/** LD04: said when GitHub will not add an accepted claim PR to the merge queue its branch requires (once per accept). */
export function enqueueRefusedNotice(pr: number, branch: string, detail: string): string {
  return `yoke did not merge this PR. ${refusalText(makeRefusal('enqueue_refused', { number: pr, branch, detail }))}`;
}

/** LD03: said once when GitHub refuses to move the base branch to the commit a lander validated (not for a base that moved). */
export function fastForwardRefusedNotice(pr: number, sha: string, branch: string, detail: string): string {
  return `yoke did not land this PR. ${refusalText(makeRefusal('fast_forward_refused', { number: pr, sha: sha.slice(0, 7), branch, detail }))}`;
}

/** LD03: said when the commit a lander judged is not yoke's pinned tree, so it is not landed. */
export function landCommitForgedNotice(pr: number, sha: string, problem: string): string {
  return `yoke did not land this PR. ${refusalText(makeRefusal('land_commit_forged', { number: pr, sha: sha.slice(0, 7), problem }))}`;
}

const MAX_LISTED = 20;

/** The protected files of a change, as a short list in code spans. */
export function protectedFileList(files: readonly string[]): string {
  const shown = files.slice(0, MAX_LISTED).map((f) => `\`${f.replace(/`/g, "'")}\``);
  return files.length > MAX_LISTED ? `${shown.join(', ')} and ${files.length - MAX_LISTED} more` : shown.join(', ');
}

/** TR14: the one comment on a claim PR whose accepted head changes a protected path. */
export function protectedHoldNotice(pr: number, sha: string, files: readonly string[]): string {
  const r = makeRefusal('protected_paths_changed', {
    number: pr,
    sha: sha.slice(0, 7),
    files: protectedFileList(files),
  });
  return `yoke did not merge this PR. ${r.message}\n\nThese paths are protected by default (\`.github/**\`, \`CLAUDE.md\`, \`AGENTS.md\`, \`.claude/**\`, \`.mcp.json\`, \`.codex/**\`) or by \`protected_paths:\` in \`.github/yoke.yml\`: an agent that could change them unseen could change what yoke checks.\n\n**To recover:** ${r.recovery}`;
}

/** TR14: the same comment once a writer approved the held head. */
export function protectedApprovedNotice(pr: number, sha: string, files: readonly string[], by: string): string {
  return `${by} approved #${pr} at \`${sha.slice(0, 7)}\`, which changes ${protectedFileList(files)}; yoke merges it at that head.`;
}

/** TR24: posted once per edit on an AFK issue whose text changed after a writer approved it; `claim`: its open claim PR. */
export function issueEditedNotice(repo: string, issue: number, label: string, claim: number | null = null): string {
  const head = claim === null ? 'yoke has not started on this issue.' : `yoke starts no fix run on #${claim} for now.`;
  return `${head} ${refusalText(makeRefusal('issue_edited_since_label', { repo, number: issue, label, ...(claim === null ? {} : { claim }) }))}`;
}

export function fixExhaustedNotice(
  author: string | null,
  pr: number,
  attempts: number,
  askedBy: string | null = null,
): string {
  const r = askedBy
    ? makeRefusal('fix_asks_exhausted', { number: pr, attempts, by: askedBy })
    : makeRefusal('fix_attempts_exhausted', { number: pr, attempts });
  return `@${author ?? 'maintainers'} ${r.message} yoke has stopped fixing it and labelled it \`${STUCK_LABEL}\`.\n\n**To recover:** ${r.recovery}`;
}

/** TR33: said once, with the verdict that accepts a head, while a change request still stands. */
export function reviewHoldNote(logins: readonly string[]): string {
  const who = logins.map((l) => `@${l}`).join(', ');
  return `${who} requested changes on this PR, so yoke does not merge it until ${logins.length === 1 ? 'that reviewer approves it or dismisses the review' : 'each of them approves it or dismisses their review'}, as GitHub's own rule would.`;
}

/** LD06: under a re-run's accept that reversed a reject of a head accepted before: the check is flaky, and no fix was spent. */
export function flakyNote(rejectRun: string): string {
  return `This head's verdict flipped: a lander accepted it, lander run \`${rejectRun}\` rejected it, and this re-run accepted it again. yoke treats the validation as flaky and spent no fix attempt on it; run \`${rejectRun}\`'s output shows which test failed.`;
}

/** The public record of a lander's verdict: the marker line, then its summary. */
/** What the work has cost so far, as its runs reported it; nothing when none reported a cost. */
export function spendLine(what: string, s: WorkSpend): string | null {
  if (s.runs === 0) return null;
  return `_Spend on ${what} so far: $${s.usd.toFixed(2)} over ${s.runs} run${s.runs === 1 ? '' : 's'} (${s.inputTokens} input and ${s.outputTokens} output tokens)._`;
}

export function verdictComment(
  payload: MarkerPayload,
  summary: string | null,
  /** What the run spent, the base it judged on, and the claim PRs stacked below it. */
  more: { spend?: string | null; base?: string | null; ahead?: readonly number[] } = {},
): string {
  const { spend = null, base = null, ahead = [] } = more;
  return encodeMarker(payload, summary ?? '', base, ahead) + (spend ? `\n\n${spend}` : '');
}

// The claim PR yoke opens for an agent's branch

/** The branch an AFK run's agent delivers to. */
export { claimBranch } from '../../kernel/branches.js';

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
  const quoted = said
    ? `The agent's summary, quoted as it wrote it:\n\n${inertBlock(said)}`
    : '_The agent gave no summary._';
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
  /** TR33: why a fix run started, when people asked for it ("a review by @maint"). */
  askedBy?: string | null;
}

/** The failed-run comment once a later run there succeeded: marked over, so no one acts on its recovery. */
export function runFailureOverNotice(f: {
  kind: 'afk' | 'fix';
  failedRunId: string;
  runId: string;
  link: string | null;
}): string {
  const what = f.kind === 'afk' ? 'AFK run' : 'fix run';
  const run = f.link ? `[\`${f.runId}\`](${f.link})` : `\`${f.runId}\``;
  return `~~yoke's ${what} \`${f.failedRunId}\` failed.~~ That is over: a later ${what}, ${run}, succeeded. Nothing here needs you.`;
}

/** The one comment on an issue (AFK) or claim PR (fix) whose last run failed; edited for each later failure. */
export function runFailedNotice(f: FailedRunFacts): string {
  const what = f.kind === 'afk' ? 'AFK run' : 'fix run';
  const ended = f.outcome === 'timeout' ? 'ran out of time' : 'failed';
  const run = f.link ? `[\`${f.runId}\`](${f.link})` : `\`${f.runId}\``;
  const recovery =
    f.kind === 'afk'
      ? 'yoke starts another run on a later pass, unless the repository pauses at its failure threshold; to start one now, comment `/yoke start`. If the issue cannot be done as written, change it, or take the AFK label off.'
      : f.askedBy
        ? `The changes asked for in ${f.askedBy} are not made. Make them on the PR's branch yourself, or comment \`/yoke fix <what to change>\` to ask again (while fix attempts are left).`
        : 'yoke starts another fix run while fix-forward has attempts left; then the PR is labelled stuck. Push a fix to the branch yourself, or comment `/yoke land` to have the head validated again.';
  // The run's own words: redacted and inert (TR15), so nothing it printed mentions, links or poses as yoke's recovery.
  const quoted = inertBlock(redactSecrets(f.why).trim().split('\n').slice(0, 20).join('\n'));
  const asked = f.askedBy ? `, started for ${f.askedBy},` : '';
  return `yoke's ${what} ${run}${asked} ${ended}${f.failures > 1 ? ` (${f.failures} failed runs here so far)` : ''}:\n\n${quoted}\n\n**To recover:** ${recovery}`;
}

const KIND_WORDS: Record<string, string> = {
  afk_auto: 'AFK run',
  afk_manual: 'AFK run (manual start)',
  lander: 'lander',
  fix: 'fix run',
};

/** `yoke plan OWNER/REPO`: the next pass for one repository, as it would go now, and what it changed (nothing). */
export function nextPassText(p: NextPass): string {
  const usd = (n: number) => `$${n.toFixed(2)}`;
  const titled = (subject: string, title: string | null) => `${subject}${title ? ` "${title}"` : ''}`;
  const lines = [`The next pass for ${p.repo}, if it ran now (nothing was started or changed):`];
  if (p.launches.length === 0) lines.push('- It would launch nothing here.');
  else {
    lines.push('- It would launch, in this order:');
    for (const l of p.launches)
      lines.push(`  ${l.order}. ${KIND_WORDS[l.kind] ?? l.kind} on ${titled(l.subject, l.title)}: ${l.why}`);
  }
  if (p.waiting.length) {
    lines.push('- It would leave waiting:');
    for (const w of p.waiting)
      lines.push(`  - ${w.subject ? `${titled(w.subject, w.title)}: ` : ''}${w.message} ${w.recovery}`);
  }
  lines.push(
    `- Cap: ${p.cap}; ${p.live.fleet} run(s) live fleet-wide (${p.live.here} here)${p.launchesElsewhere ? `, and this pass would launch ${p.launchesElsewhere} in other repositories` : ''}.`,
  );
  if (p.spend)
    lines.push(
      `- Spent today (UTC): ${usd(p.spend.repo)} here${p.spend.repoLimit !== null ? ` of ${usd(p.spend.repoLimit)} (budget.daily_usd)` : ', no daily limit set here'}; ${usd(p.spend.fleet)} fleet-wide${p.spend.fleetLimit !== null ? ` of ${usd(p.spend.fleetLimit)} (YOKE_DAILY_USD)` : ', no fleet limit'}.`,
    );
  else lines.push('- The pass could not read this repository, so its spend and protected paths are not known.');
  if (p.protectedPaths)
    lines.push(
      `- Protected paths (a claim PR that changes one waits for a writer's approval): ${p.protectedPaths.join(', ')}.`,
    );
  return lines.join('\n');
}

/** BU03: said on a claim PR, once a day, when its fix waits for money: which budget, and until when. */
export function fixWaitsForMoneyNotice(pr: number, why: Refusal): string {
  return `The fix of #${pr} waits for money. ${refusalText(why)}`;
}

/** What the log says when GitHub could not be reached at all: where yoke looked, and what sets that. */
export function githubUnreachable(webUrl: string, code: string): string {
  return `GitHub at ${webUrl} could not be reached (${code}): check this machine's network and proxy, and GHE_HOST if yoke works with GitHub Enterprise Server (unset, it is github.com). Nothing is lost: the next tick tries again.`;
}

/** A pass that failed, said in the log: when GitHub could not be reached at all, where yoke looked and what to check. */
export function passFailed(at: { log: Log; webUrl: string }, what: string, err: unknown): void {
  const code = unreachableCode(err);
  if (code) at.log.error({ err: errorText(err), code }, githubUnreachable(at.webUrl, code));
  else at.log.error({ err: errorStack(err) }, what);
}
