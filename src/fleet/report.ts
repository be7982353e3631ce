import { makeRefusal } from '../codes.js';
import { waitingItem, type WaitingItem } from './candidate.js';
import { utcDayStart } from '../clock.js';
import { buildDeliveryReport, type DeliveryReportRun } from '../qa/report.js';
import { environmentWarning } from '../qa/environment-check.js';
import type { DailySpend, Run } from '../store/runs.js';
import { effectiveCap } from './cap.js';
import type { FleetContext } from './context.js';
import type { PassReport } from './pass.js';
import { isPaused } from './repo-state.js';
import { protectedFileList } from '../messages.js';

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
  /** QA23: active deployment runs, what they wait on, and the waits nobody is minding. */
  deliveries: DeliveryReportRun[];
  lastPass: {
    trigger: string;
    candidates: number;
    launched: number;
    authFailures: { installationId: number; detail: string; recovery: string }[];
    /** SC03: repositories the request budget left unread, each with why and what recovers it. */
    deferred: { repo: string; code: 'request_budget'; message: string; recovery: string }[];
    /** Work the pass passed over, in the order it would take it, each with the why-not the decision returned. */
    waiting: WaitingItem[];
  } | null;
  /** Spend reported in the last 7 days, per repository and UTC day, newest first. */
  spend: DailySpend[];
  /** DP05: gated stages whose environment does not hold jobs for yoke's rule (the gate is advisory there), each with the setting to make. */
  environments: { repo: string; stage: string; environment: string; code: string; message: string; recovery: string }[];
  /** TR14: open claim PRs whose accepted head changes a protected path, waiting for a person's approval. */
  held: { repo: string; pr: number; headSha: string; files: string[]; code: 'protected_paths_changed'; message: string; recovery: string }[];
}

/** Holds not yet approved whose head is still the open claim PR's head, as the last read saw it. */
async function openHolds(store: FleetContext['store']): Promise<FleetReport['held']> {
  const out: FleetReport['held'] = [];
  const reads = new Map<string, Awaited<ReturnType<FleetContext['store']['repos']['lastRead']>>>();
  for (const h of await store.protectedHolds.list()) {
    if (h.approvedBy || !h.files.length) continue;
    if (!reads.has(h.repo)) reads.set(h.repo, await store.repos.lastRead(h.repo));
    if (!reads.get(h.repo)?.openClaims.some((c) => c.number === h.prNumber && c.headSha === h.headSha)) continue;
    const r = makeRefusal('protected_paths_changed', { number: h.prNumber, sha: h.headSha.slice(0, 7), files: protectedFileList(h.files) });
    out.push({ repo: h.repo, pr: h.prNumber, headSha: h.headSha, files: h.files, code: 'protected_paths_changed', message: r.message, recovery: r.recovery });
  }
  return out;
}


export type PublicRun = Omit<Run, 'secretHash'>;

export const publicRun = ({ secretHash: _s, ...rest }: Run): PublicRun => rest;

export async function buildFleetReport(ctx: Pick<FleetContext, 'store' | 'policy' | 'clock'>, last: PassReport | null): Promise<FleetReport> {
  const { store, policy, clock } = ctx;
  const live = await store.runs.listLive();
  return {
    generatedAt: new Date(clock.now()).toISOString(),
    globalCap: policy.globalCap,
    liveCount: live.length,
    repos: (await store.repos.list()).map((r) => ({
      repo: r.fullName,
      cap: effectiveCap(policy, r.fullName),
      autoLoop: r.autoLoop,
      consecutiveFailures: r.consecutiveFailures,
      paused: isPaused(r),
      disabledReason: r.disabledReason,
      live: live.filter((l) => l.repo === r.fullName).map(publicRun),
      // Disabled comes first: a reset cannot lift it, only a fixed opt-in file can.
      recovery: r.disabledReason
        ? makeRefusal('repo_disabled', { repo: r.fullName, detail: r.disabledReason }).recovery
        : isPaused(r)
          ? makeRefusal('repo_paused', { repo: r.fullName, threshold: policy.pauseThreshold }).recovery
          : null,
    })),
    recentRuns: (await store.runs.listAll(50)).map(publicRun),
    deliveries: await buildDeliveryReport(store, clock.now()),
    spend: await store.runs.listSpend(utcDayStart(clock.now()) - 6 * 86_400_000, clock.now() + 1),
    environments: [
      ...(await store.stageDeployments.environmentChecks())
        .filter((c) => c.code !== 'environment_protected')
        .map((c) => {
          const w = environmentWarning(c);
          return { repo: c.repo, stage: c.stage, environment: c.environment, code: w.code, message: w.message, recovery: w.recovery };
        }),
      // TR26: an environment with yoke's rule that lost its stage: its jobs are rejected until someone decides.
      ...(await store.stageDeployments.unruledRejections(clock.now() - 86_400_000)).map((u) => {
        const w = makeRefusal('protection_unruled', { repo: u.repo, environment: u.environment, answer: 'rejects its jobs' });
        return { repo: u.repo, stage: '', environment: u.environment, code: w.code, message: w.message, recovery: w.recovery };
      }),
    ],
    held: await openHolds(store),
    lastPass: last && {
      trigger: last.trigger,
      candidates: last.candidates.length,
      launched: last.outcomes.filter((o) => o.result.kind === 'launched').length,
      waiting: last.waiting.map(waitingItem),
      deferred: last.deferred.map((d) => {
        const r = makeRefusal('request_budget', { repo: d.repo, installation: d.installationId, points: d.points });
        return { repo: d.repo, code: 'request_budget' as const, message: r.message, recovery: r.recovery };
      }),
      authFailures: last.authFailures.map((f) => ({
        ...f,
        recovery: makeRefusal('installation_auth_failed', { installation: f.installationId, detail: f.detail }).recovery,
      })),
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
  for (const d of r.deliveries) {
    lines.push(`- deployment run ${d.id} of ${d.repo} at ${d.stage ?? 'its end'}: driver ${d.driver ? `${d.driver.id}${d.driver.live ? '' : ' (lease lapsed)'}` : 'none'}`);
    for (const w of d.waits) lines.push(`    waits: ${w.detail} · notice ${w.notice}\n      ${w.command}`);
    for (const f of d.flags) {
      lines.push(`! ${f.message}`);
      lines.push(`    to recover: ${f.recovery}`);
    }
  }
  if (r.lastPass?.waiting.length) lines.push('waiting, in the order the next pass takes it:');
  for (const w of r.lastPass?.waiting ?? []) {
    lines.push(`~ ${w.repo} ${w.subject ? `${w.subject} (${w.stage})` : '(all its work)'}: ${w.code}: ${w.message}`);
    lines.push(`    to recover: ${w.recovery}`);
  }
  for (const d of r.spend) lines.push(`$ ${d.day} ${d.repo}: $${d.usd.toFixed(2)} over ${d.runs} run(s), ${d.inputTokens} input and ${d.outputTokens} output tokens`);
  for (const f of r.lastPass?.authFailures ?? []) {
    lines.push(`! installation ${f.installationId} could not authenticate: ${f.detail}`);
    lines.push(`    to recover: ${f.recovery}`);
  }
  return lines.join('\n');
}
