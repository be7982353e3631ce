import type { FleetReport } from '../fleet/report.js';
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
    if (repo.disabledReason) out.push({ repo: repo.repo, what: `${repo.repo} is disabled: ${repo.disabledReason}`, command: repo.recovery ?? '' });
    else if (repo.paused) out.push({ repo: repo.repo, what: `${repo.repo} is paused after ${repo.consecutiveFailures} AFK failures: no new work starts`, command: repo.recovery ?? '' });
  }
  for (const d of r.deliveries) {
    for (const w of d.waits) out.push({ repo: d.repo, what: `deployment run ${d.id} waits at ${d.stage ?? 'its end'}: ${w.detail}`, command: w.command });
    for (const f of d.flags) out.push({ repo: d.repo, what: f.message, command: f.recovery });
  }
  for (const run of r.recentRuns) {
    if ((run.outcome !== 'failure' && run.outcome !== 'timeout') || (run.endedAt ?? 0) < now - DAY_MS) continue;
    const what = `${run.kind} run ${run.id} on ${run.subject} ${run.outcome === 'timeout' ? 'ran out of time' : 'failed'}: ${reasonOf(run)}`;
    out.push({ repo: run.repo, what, command: run.kind === 'fix' ? `see the failed-run comment on ${run.subject.replace('pr#', '#')}, or push a fix yourself` : `comment \`/yoke start\` on ${run.subject.replace('issue#', '#')} to try again now` });
  }
  return out;
}
