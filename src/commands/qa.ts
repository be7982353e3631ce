import { makeRefusal } from '../kernel/codes/table.js';
import type { FleetContext } from '../fleet/context.js';
import type { CommentView, RepoRef } from '../forge/types.js';
import { canMaintain } from '../kernel/permission.js';
import { qaDeclined, qaWaived } from '../delivery/messages.js';
import { settleAfter } from '../delivery/gate/check.js';
import { ok, type Result } from '../kernel/result.js';
import { waiveQaCase } from '../delivery/gate/verdicts.js';
import type { CommandAt } from './at.js';
import { sameLogin } from '../kernel/ids.js';

// The QA comment commands' edges: their answers as control results, and the
// waiver, which only maintainers may give (QA13).

export const asControl = (r: Result<{ message: string }>): Result<string> => (r.ok ? ok(r.value.message) : r);

/** `/yoke qa waive <case> [--plan PLAN] --reason "..."` on a deployment run's tracking issue, at its current stage. */
export async function waiveByComment(
  { ctx, repo, comment: c, permission }: CommandAt,
  cmd: { case: string; plan?: string; reason: string },
): Promise<Result<string>> {
  if (!canMaintain(permission))
    return { ok: false, refusal: makeRefusal('qa_waive_forbidden', { repo: repo.fullName, permission }) };
  const run = (await ctx.store.deploymentRuns.list()).find(
    (r) => r.repo === repo.fullName && r.trackingIssue === c.issueNumber,
  );
  if (!run)
    return {
      ok: false,
      refusal: makeRefusal('deployment_run_unknown', { run: `with tracking issue #${c.issueNumber}` }),
    };
  const stage = run.settings.stages[run.currentStage]?.name ?? '';
  let plan = cmd.plan;
  if (!plan) {
    const holding = (await ctx.store.qa.groups([run.id])).filter(
      (g) => g.stage === stage && g.state === 'open' && g.cases.some((x) => x.id === cmd.case),
    );
    if (holding.length !== 1) {
      return {
        ok: false,
        refusal: holding.length
          ? makeRefusal('qa_plan_ambiguous', { ref: `case ${cmd.case}`, ids: holding.map((g) => g.planId) })
          : makeRefusal('qa_case_unknown', {
              plan: 'the open groups',
              case: cmd.case,
              cases: (await ctx.store.qa.groups([run.id]))
                .filter((g) => g.state === 'open')
                .flatMap((g) => g.cases.map((x) => `${g.planId}/${x.id}`)),
            }),
      };
    }
    plan = holding[0]!.planId;
  }
  const r = await waiveQaCase(
    ctx,
    { role: 'person', login: c.author },
    { runId: run.id, stage },
    {
      plan,
      case: cmd.case,
      reason: cmd.reason,
    },
  );
  return r.ok ? ok(qaWaived(r.value.subject, r.value.plan, r.value.case, cmd.reason)) : r;
}

/** Open notices on a thread: the ones addressed to this person, else (a writer speaking for the thread) all of them. */
async function noticesFor(ctx: FleetContext, repo: RepoRef, thread: number, author: string) {
  const runs = (await ctx.store.deploymentRuns.list()).filter((r) => r.repo === repo.fullName).map((r) => r.id);
  const open = (await ctx.store.notices.onThread(runs, thread)).filter((n) =>
    ['posted', 'edited', 'answered'].includes(n.state),
  );
  const mine = open.filter((n) => sameLogin(n.recipient, author));
  return { mine, open };
}

/** QA21: `/yoke qa decline` cancels the notice, which is redelivered: the live driver, then the run's creator, then steering. */
export async function declineByComment(ctx: FleetContext, repo: RepoRef, c: CommentView): Promise<Result<string>> {
  const { mine, open } = await noticesFor(ctx, repo, c.issueNumber, c.author);
  const declined = mine.length ? mine : open;
  if (declined.length === 0) return { ok: false, refusal: makeRefusal('qa_notice_unknown', { thread: c.issueNumber }) };
  for (const n of declined)
    await ctx.store.notices.update(n.id, {
      state: 'cancelled',
      detail: `declined by ${c.author}`,
      at: ctx.clock.now(),
    });
  for (const n of declined) await settleAfter(ctx, n.runId, n.stage, n.subject);
  return ok(qaDeclined(declined.length));
}

/** A reply on a notice's thread by its recipient answers it. */
export async function noteReply(ctx: FleetContext, repo: RepoRef, c: CommentView): Promise<void> {
  for (const n of (await noticesFor(ctx, repo, c.issueNumber, c.author)).mine) {
    if (n.state !== 'answered' && c.createdAt >= n.createdAt)
      await ctx.store.notices.update(n.id, { state: 'answered', detail: `${c.author} replied`, at: ctx.clock.now() });
  }
}
