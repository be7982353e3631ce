import { makeRefusal } from '../../kernel/codes/table.js';
import { buildFleetPart, type FleetPart } from '../../fleet/notices/report.js';
import type { FleetContext } from '../../fleet/context.js';
import type { PassReport } from '../../fleet/engine/pass.js';
import { environmentWarning } from '../../delivery/deployments/environment-check.js';
import { buildDeliveryReport, type DeliveryReportRun } from '../../delivery/runs/report.js';

// The fleet report the CLI, the API and the dashboard show: the fleet's part
// and the delivery half's, composed here above both (the fleet never reads
// the delivery half).

export interface FleetReport extends FleetPart {
  /** QA23: active deployment runs, what they wait on, and the waits nobody is minding. */
  deliveries: DeliveryReportRun[];
  /** DP05: gated stages whose environment does not hold jobs for yoke's rule (the gate is advisory there), each with the setting to make. */
  environments: { repo: string; stage: string; environment: string; code: string; message: string; recovery: string }[];
}

export async function buildFleetReport(
  ctx: Pick<FleetContext, 'store' | 'policy' | 'clock'>,
  last: PassReport | null,
): Promise<FleetReport> {
  const { store, clock } = ctx;
  const fleet = await buildFleetPart(ctx, last);
  return {
    ...fleet,
    deliveries: await buildDeliveryReport(store, clock.now()),
    environments: [
      ...(await store.stageDeployments.environmentChecks())
        .filter((c) => c.code !== 'environment_protected')
        .map((c) => {
          const w = environmentWarning(c);
          return {
            repo: c.repo,
            stage: c.stage,
            environment: c.environment,
            code: w.code,
            message: w.message,
            recovery: w.recovery,
          };
        }),
      // TR26: an environment with yoke's rule that lost its stage: its jobs are rejected until someone decides.
      ...(await store.stageDeployments.unruledRejections(clock.now() - 86_400_000)).map((u) => {
        const w = makeRefusal('protection_unruled', {
          repo: u.repo,
          environment: u.environment,
          answer: 'rejects its jobs',
        });
        return {
          repo: u.repo,
          stage: '',
          environment: u.environment,
          code: w.code,
          message: w.message,
          recovery: w.recovery,
        };
      }),
    ],
  };
}

export function formatFleetReport(r: FleetReport): string {
  const lines = [`yoke fleet at ${r.generatedAt}: ${r.liveCount} live run(s), global cap ${r.globalCap}`];
  for (const repo of r.repos) {
    const flags = [
      repo.paused ? 'PAUSED' : null,
      repo.disabledReason ? `DISABLED: ${repo.disabledReason}` : null,
      `auto ${autoLoopWords(repo)}`,
      `failures ${repo.consecutiveFailures}`,
      `cap ${repo.cap}`,
    ].filter(Boolean);
    lines.push(`- ${repo.repo}: ${flags.join(', ')}`);
    for (const run of repo.live) lines.push(`    live ${run.id} ${run.kind} ${run.subject}`);
    if (repo.recovery) lines.push(`    to recover: ${repo.recovery}`);
  }
  for (const d of r.deliveries) {
    lines.push(
      `- deployment run ${d.id} of ${d.repo} at ${d.stage ?? 'its end'}: driver ${d.driver ? `${d.driver.id}${d.driver.live ? '' : ' (lease lapsed)'}` : 'none'}`,
    );
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
  for (const d of r.spend)
    lines.push(
      `spent ${d.day} ${d.repo}: $${d.usd.toFixed(2)} over ${d.runs} run(s), ${d.inputTokens} input and ${d.outputTokens} output tokens`,
    );
  for (const b of r.budgets)
    lines.push(
      `budget ${b.repo ?? 'the fleet'} ${b.period === 'day' ? 'daily' : 'monthly'}: $${b.heldUsd.toFixed(2)} of $${b.limitUsd.toFixed(2)} spent and reserved, until ${b.until} · ${b.runway}`,
    );
  for (const u of r.unsettled) {
    lines.push(`! ${u.message}`);
    lines.push(`    to recover: ${u.recovery}`);
  }
  for (const i of r.issueSpend)
    lines.push(
      `cost of ${i.repo}#${i.issue} this week: $${i.usd.toFixed(2)} over ${i.runs} run(s) (AFK $${i.byKind.afk.toFixed(2)}, fixes $${i.byKind.fix.toFixed(2)}, landers $${i.byKind.lander.toFixed(2)}), ${i.inputTokens} input and ${i.outputTokens} output tokens`,
    );
  for (const f of r.lastPass?.authFailures ?? []) {
    lines.push(`! installation ${f.installationId} could not authenticate: ${f.detail}`);
    lines.push(`    to recover: ${f.recovery}`);
  }
  return lines.join('\n');
}

/** The auto loop as `yoke repo status` says it: on or off, and who set it. */
export function autoLoopWords(r: { autoLoop: boolean | null; autoLoopOn: boolean | null }): string {
  if (r.autoLoopOn === null) return 'not read yet';
  return `${r.autoLoopOn ? 'on' : 'off'}${r.autoLoop === null ? '' : ' (set by yoke repo auto)'}`;
}
