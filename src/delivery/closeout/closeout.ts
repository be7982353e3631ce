import { issueSpan } from '../../fleet/notices/issue-trace.js';
import { makeRefusal, type Refusal } from '../../kernel/codes/table.js';
import { classifyGitHubError } from '../../forge/errors.js';
import { spendLine } from '../../fleet/notices/messages.js';
import { closeoutNotice } from '../messages.js';
import type { DeploymentRun } from '../../store/delivery/deployment-runs.js';
import { qaCommands } from '../gate/commands.js';
import type { DeliveryContext, StageAt } from '../context.js';

// DX01-DX06: closing out accepted members. In order, each route read fresh
// right before acting; none started once the budget is spent (one running
// finishes); a refusal is recorded and the next member is still tried.

export interface CloseoutReport {
  closed: string[];
  refused: { item: string; refusal: Refusal }[];
  /** Left for a later dispatch or the sweep: the budget ran out (DX06). */
  skipped: string[];
  /** A live deployment-stage plan execution holds them (DX05). */
  deferred: string[];
}

/** Members a live deployment-stage execution still delivers: its own item, or every item its group covers. */
export async function deferredItems(
  ctx: DeliveryContext,
  run: DeploymentRun,
  stage: string,
  item: (n: number) => string,
): Promise<Set<string>> {
  const live = (await ctx.store.executions.live(run.id, stage, ctx.clock.now())).filter(
    (e) => e.kind === 'deployment-stage',
  );
  const groups = new Map((await ctx.store.qa.groups([run.id])).map((g) => [g.id, g]));
  const out = new Set<string>();
  for (const e of live) {
    const g = groups.get(e.subject);
    if (g) for (const n of g.coveredItemIds) out.add(item(n));
    else out.add(e.subject);
  }
  return out;
}

/** The accepted members of a stage not yet closed out, in the policy's order. */
export async function closeoutQueue(ctx: DeliveryContext, run: DeploymentRun, stage: string): Promise<number[]> {
  const closed = new Set(
    (await ctx.store.closeouts.forRun(run.id)).filter((c) => c.state === 'closed').map((c) => c.issueNumber),
  );
  const members = (await ctx.store.deploymentRuns.members(run.id)).filter((m) => m.removedAt === null);
  const settled = new Set(
    (await ctx.store.qa.memberStages(run.id, stage)).filter((m) => m.settledAt !== null).map((m) => m.issueNumber),
  );
  const queue = members.filter((m) => settled.has(m.issueNumber) && !closed.has(m.issueNumber));
  if (ctx.policy.closeoutOrder === 'item') queue.sort((a, b) => a.issueNumber - b.issueNumber);
  return queue.map((m) => m.issueNumber);
}

/** TR12: the accepted members of a run still owed their close-out, at any of its QA stages. */
export async function owedMembers(ctx: DeliveryContext, run: DeploymentRun): Promise<number[]> {
  const owed = new Set<number>();
  for (const stage of run.settings.stages.filter((s) => s.kind === 'qa'))
    for (const n of await closeoutQueue(ctx, run, stage.name)) owed.add(n);
  return [...owed].sort((a, b) => a - b);
}

/** TR12: a run past its last stage succeeds only once no member it accepted is owed; true when it did now. */
export async function finishIfDelivered(ctx: DeliveryContext, runId: string): Promise<boolean> {
  const run = await ctx.store.deploymentRuns.get(runId);
  if (!run || run.status !== 'active' || run.closingSince === null || (await owedMembers(ctx, run)).length > 0)
    return false;
  return await ctx.store.deploymentRuns.finishClosing(run.id, ctx.clock.now());
}

export async function closeOutMembers(at: StageAt, startedAt: number): Promise<CloseoutReport> {
  const { ctx, dr, run, stage } = at;
  const report: CloseoutReport = { closed: [], refused: [], skipped: [], deferred: [] };
  const deferred = await deferredItems(ctx, run, stage, dr.item);
  for (const issue of await closeoutQueue(ctx, run, stage)) {
    const item = dr.item(issue);
    if (deferred.has(item)) {
      report.deferred.push(item);
      continue;
    }
    // DX01: no new close-out once the budget is spent; what is left closes later (DX06).
    if (ctx.clock.now() - startedAt >= ctx.policy.closeoutBudgetMs) {
      report.skipped.push(item);
      continue;
    }
    if (
      !(await ctx.store.closeouts.claim(
        run.id,
        issue,
        stage,
        ctx.clock.now(),
        ctx.processId,
        ctx.policy.closeoutStaleMs,
      ))
    )
      continue;
    const started = ctx.clock.now();
    const refusal = await closeOut({ ctx, dr, run, stage }, issue);
    // The close-out ends the issue's trace.
    await issueSpan(ctx, { repo: run.repo, issue }, 'yoke.closeout', {
      start: started,
      attributes: { 'yoke.deployment_run': run.id, 'yoke.stage': stage, 'yoke.item': item },
      ...(refusal ? { error: refusal.message } : {}),
    });
    if (refusal) {
      await ctx.store.closeouts.finish(run.id, issue, { state: 'refused', refusal }, ctx.clock.now(), ctx.processId);
      report.refused.push({ item, refusal });
    } else report.closed.push(item);
  }
  return report;
}

/** One member's close-out; the refusal that stopped it, or null when it closed. */
async function closeOut(at: StageAt, issue: number): Promise<Refusal | null> {
  const { ctx, dr, run, stage } = at;
  const { forge, store, clock } = ctx;
  const item = dr.item(issue);
  const member = (await store.deploymentRuns.members(run.id)).find((m) => m.issueNumber === issue)!;
  const refuse = (detail: string, fix: string) => makeRefusal('closeout_refused', { item, issue, detail, fix });
  try {
    // DX02: the route is read fresh, right before acting.
    const found = await forge.getIssue(dr.repo, issue);
    const pull = await forge.getPull(dr.repo, member.prNumber);
    if (!found || found.isPull)
      return refuse(
        `issue #${issue} is gone`,
        `Take ${item} out: \`${qaCommands(run.repo, run.id, stage).remove(item)}\`.`,
      );
    if (found.locked) return refuse(`issue #${issue} is locked`, `Unlock #${issue}.`);
    if (found.state === 'open' && found.stateReason === 'reopened') {
      return refuse(
        `issue #${issue} was reopened`,
        `Close #${issue} as completed if ${item} is done, or take it out: \`${qaCommands(run.repo, run.id, stage).remove(item)}\`.`,
      );
    }
    const merged =
      pull?.merged && pull.mergeCommitSha ? await forge.isAncestor(dr.repo, pull.mergeCommitSha, run.commit) : false;
    if (!merged)
      return refuse(
        `its claim PR #${member.prNumber} is not merged at or before ${run.commit.slice(0, 12)}`,
        `Take ${item} out (\`${qaCommands(run.repo, run.id, stage).remove(item)}\`) and deliver it in a later run.`,
      );
    if (found.state !== 'closed' || found.stateReason !== 'completed')
      await forge.updateIssue(dr.repo, issue, { state: 'closed', stateReason: 'completed' });
    if (found.labels.includes(dr.settings.owed_label)) await forge.removeLabel(dr.repo, issue, dr.settings.owed_label);
    if (!found.labels.includes(dr.settings.delivered_label))
      await forge.addLabels(dr.repo, issue, [dr.settings.delivered_label]);
    const holder = (await store.qa.memberStages(run.id, stage)).find((m) => m.issueNumber === issue)?.holder ?? null;
    const comment = await forge.createComment(
      dr.repo,
      member.prNumber,
      closeoutNotice({
        holder,
        item,
        issue,
        run: run.id,
        stage,
        commit: run.commit,
        label: dr.settings.delivered_label,
        spend: spendLine(`#${issue}`, await store.spend.ofWork(run.repo, issue, member.prNumber)),
      }),
    );
    await store.deliveryItems.markDelivered(run.repo, issue, clock.now());
    await store.closeouts.finish(
      run.id,
      issue,
      { state: 'closed', noticeCommentId: comment },
      clock.now(),
      ctx.processId,
    );
    return null;
  } catch (err) {
    const e = classifyGitHubError(err);
    return refuse(
      `GitHub refused: ${e.message}`,
      e.kind === 'fault'
        ? 'Nothing to do if GitHub is having trouble.'
        : 'Check the app still has issues: write on the repository.',
    );
  }
}
