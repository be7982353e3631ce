import type { Engine } from './engine.js';
import { effectiveCap } from './cap.js';
import type { Run } from '../store/runs.js';

export interface FleetReport {
  generatedAt: string;
  globalCap: number;
  liveCount: number;
  repos: {
    repo: string;
    cap: number;
    autoLoop: boolean | null;
    consecutiveFailures: number;
    paused: boolean;
    disabledReason: string | null;
    live: PublicRun[];
    recovery: string | null;
  }[];
  recentRuns: PublicRun[];
  lastPass: { trigger: string; candidates: number; launched: number; authFailures: { installationId: number; detail: string }[] } | null;
}

export type PublicRun = Omit<Run, 'secretHash'>;

export const publicRun = ({ secretHash: _s, ...rest }: Run): PublicRun => rest;

export function buildFleetReport(engine: Engine): FleetReport {
  const { store, policy, clock } = engine.deps;
  const live = store.runs.listLive();
  const last = engine.lastPass;
  return {
    generatedAt: new Date(clock.now()).toISOString(),
    globalCap: policy.globalCap,
    liveCount: live.length,
    repos: store.repos.list().map((r) => ({
      repo: r.fullName,
      cap: effectiveCap(policy, r.fullName),
      autoLoop: r.autoLoop,
      consecutiveFailures: r.consecutiveFailures,
      paused: r.pausedSince !== null,
      disabledReason: r.disabledReason,
      live: live.filter((l) => l.repo === r.fullName).map(publicRun),
      recovery: r.pausedSince !== null
        ? `comment /yoke reset on an issue of ${r.fullName}, or POST /yoke/api/repos/${r.fullName}/reset`
        : r.disabledReason
          ? `fix .github/yoke.yml in ${r.fullName}`
          : null,
    })),
    recentRuns: store.runs.listAll(50).map(publicRun),
    lastPass: last && {
      trigger: last.trigger,
      candidates: last.candidates.length,
      launched: last.outcomes.filter((o) => o.result.kind === 'launched').length,
      authFailures: last.authFailures,
    },
  };
}

export function formatFleetReport(r: FleetReport): string {
  const lines = [`yoke fleet at ${r.generatedAt}: ${r.liveCount} live run(s), global cap ${r.globalCap}`];
  for (const repo of r.repos) {
    const flags = [
      repo.paused ? 'PAUSED' : null,
      repo.disabledReason ? `DISABLED: ${repo.disabledReason}` : null,
      `auto ${repo.autoLoop === null ? 'default' : repo.autoLoop ? 'on' : 'off'}`,
      `failures ${repo.consecutiveFailures}`,
      `cap ${repo.cap}`,
    ].filter(Boolean);
    lines.push(`- ${repo.repo}: ${flags.join(', ')}`);
    for (const run of repo.live) lines.push(`    live ${run.id} ${run.kind} ${run.subject}`);
    if (repo.recovery) lines.push(`    to recover: ${repo.recovery}`);
  }
  for (const f of r.lastPass?.authFailures ?? []) lines.push(`! installation ${f.installationId} could not authenticate: ${f.detail}`);
  return lines.join('\n');
}
