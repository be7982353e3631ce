import type { FleetReport } from '../operator/report.js';
import { reasonOf } from './dashboard-parts.js';

// The dashboard's "Needs you": what a maintainer must act on, each with the
// command that moves it, first on the page. Pure: the fleet report in, items out.

export interface NeedsYou {
  repo: string;
  what: string;
  command: string;
}

const DAY_MS = 86_400_000;

export function needsYou(r: FleetReport, now: number): NeedsYou[] {
  const out: NeedsYou[] = [];
  for (const repo of r.repos) {
    if (repo.disabledReason)
      out.push({
        repo: repo.repo,
        what: `${repo.repo} is disabled: ${repo.disabledReason}`,
        command: repo.recovery ?? '',
      });
    else if (repo.paused)
      out.push({
        repo: repo.repo,
        what: `${repo.repo} is paused after ${repo.consecutiveFailures} AFK failures: no new work starts`,
        command: repo.recovery ?? '',
      });
  }
  // DP05: a QA gate GitHub does not enforce is advisory only.
  for (const e of r.environments ?? []) out.push({ repo: e.repo, what: e.message, command: e.recovery });
  // BU02: a run that ended without reporting what it spent holds its reservation until someone settles it.
  for (const u of r.unsettled ?? []) out.push({ repo: u.repo, what: u.message, command: u.recovery });
  // TR14: a claim PR that changes what yoke trusts merges only once a person approves it.
  for (const h of r.held ?? []) out.push({ repo: h.repo, what: `${h.repo}: ${h.message}`, command: h.recovery });
  for (const d of r.deliveries) {
    for (const w of d.waits)
      out.push({
        repo: d.repo,
        what: `deployment run ${d.id} waits at ${d.stage ?? 'its end'}: ${w.detail}`,
        command: w.command,
      });
    for (const f of d.flags) out.push({ repo: d.repo, what: f.message, command: f.recovery });
  }
  // A failed piece of work is one line however often it failed: its latest run, with the count. Runs are newest first.
  // A failure is over once a later run on the same issue or PR succeeded or is under way: nothing waits on anyone then.
  const newest = new Map<string, (typeof r.recentRuns)[number]>();
  for (const run of r.recentRuns)
    if (!newest.has(`${run.repo}\u0000${run.subject}`)) newest.set(`${run.repo}\u0000${run.subject}`, run);
  const over = (run: (typeof r.recentRuns)[number]) => {
    const last = newest.get(`${run.repo}\u0000${run.subject}`)!;
    return last.status === 'live' || last.outcome === 'success';
  };
  const failed = new Map<string, { run: (typeof r.recentRuns)[number]; times: number }>();
  for (const run of r.recentRuns) {
    if (over(run)) continue;
    if ((run.outcome !== 'failure' && run.outcome !== 'timeout') || (run.endedAt ?? 0) < now - DAY_MS) continue;
    const key = `${run.repo}\u0000${run.kind}\u0000${run.subject}`;
    const seen = failed.get(key);
    if (seen) seen.times++;
    else failed.set(key, { run, times: 1 });
  }
  const held = new Set(r.repos.filter((x) => x.paused || x.disabledReason).map((x) => x.repo));
  // One wait, said the same everywhere: work the last pass passed over says what it waits for, not "try again".
  const waits = new Map((r.lastPass?.waiting ?? []).map((w) => [`${w.repo}\u0000${w.subject}`, w]));
  for (const { run, times } of failed.values()) {
    const failedWhat = `${run.kind} run ${run.id} on ${run.subject} ${run.outcome === 'timeout' ? 'ran out of time' : 'failed'}${times > 1 ? ` (${times} runs in the last day)` : ''}: ${reasonOf(run)}`;
    const wait = waits.get(`${run.repo}\u0000${run.subject}`);
    if (wait && !held.has(run.repo)) {
      out.push({
        repo: run.repo,
        what: `${failedWhat} It waits to run again: ${wait.message}`,
        command: wait.recovery,
      });
      continue;
    }
    const what = failedWhat;
    const n = run.subject.replace(/^(issue|pr)#/, '#');
    const again =
      run.kind === 'fix'
        ? `see the failed-run comment on ${n}, or push a fix yourself`
        : `comment \`/yoke start\` on ${n} to try again now`;
    // In a paused or disabled repository nothing starts: that is lifted first (its own line above).
    out.push({
      repo: run.repo,
      what,
      command:
        held.has(run.repo) && run.kind !== 'fix' ? `first lift what holds ${run.repo} (above), then ${again}` : again,
    });
  }
  return out;
}
