import { issueSpan } from '../../fleet/notices/issue-trace.js';
import { randomBytes } from 'node:crypto';
import { canWrite } from '../../kernel/permission.js';
import { isBotLogin } from '../notices/people.js';
import { makeRefusal } from '../../kernel/codes/table.js';
import { resolveRunPlans } from '../../config/qa-plan.js';
import { CONFIG_PATH } from '../../config/repo-config.js';
import type { ReviewView } from '../../forge/types.js';
import type { DeploymentRun } from '../../store/delivery/deployment-runs.js';
import { BusyError } from './busy.js';
import { finishIfDelivered } from '../closeout/closeout.js';
import { reconcileIssueLabels } from './labels.js';
import type { DeliveryContext, DeliveryRepo, StageAt } from '../context.js';
import { planFreeze, type EnteringMember, type FreezeInput } from './freeze.js';
import { evaluateStage, type GateInput, type GateMember, type StageEvaluation } from './evaluate.js';
import { namedPlans, readPlansAt } from './plans.js';

// A QA stage's edges: entering it (reads, then the pure freeze, then one write
// transaction), and gathering what its gate evaluation needs.

/**
 * The holder of a member: its live yoke run, else the issue's assignee, else
 * the claim PR's author, else the issue's author when a writer. A bot is never
 * a person to tell (yoke's own app opens claim PRs), so it is passed over; with
 * nobody left, the member's waits go to the driver, the creator, then steering.
 */
async function holderOf(
  ctx: DeliveryContext,
  dr: DeliveryRepo,
  who: { liveRun: string | null; assignee: string | null; prAuthor: string | null; issueAuthor: string | null },
): Promise<string | null> {
  const { liveRun, assignee, prAuthor, issueAuthor } = who;
  if (liveRun) return `run:${liveRun}`;
  if (assignee && !isBotLogin(assignee)) return assignee;
  if (prAuthor && !isBotLogin(prAuthor)) return prAuthor;
  if (issueAuthor && !isBotLogin(issueAuthor) && canWrite(await ctx.forge.getPermission(dr.repo, issueAuthor)))
    return issueAuthor;
  return null;
}

/** QA07: freezes ownership for the members entering a QA stage; a stage already entered is left as it froze. */
export async function enterQaStage(at: StageAt): Promise<void> {
  const { ctx, dr, run, stage } = at;
  const { store, clock } = ctx;
  if (await store.deploymentRuns.stage(run.id, stage)) return;
  // DX12: one freeze at a time; another caller meanwhile is told qa_ownership_busy.
  const lock = `freeze:${run.id}:${stage}`;
  const me = `freeze-${randomBytes(4).toString('hex')}`;
  const held = await store.workLocks.take(lock, me, clock.now(), FREEZE_STALE_MS);
  if (held) throw new BusyError(makeRefusal('qa_ownership_busy', { run: run.id, stage, holder: held.holder }));
  try {
    await freezeStage({ ctx, dr, run, stage });
  } finally {
    await store.workLocks.release(lock, me);
  }
}

/** A freeze older than this was left by a crash. */
const FREEZE_STALE_MS = 5 * 60_000;

/** The run's members not yet frozen at the stage, each with its attached plans and its holder, as they enter. */
async function enteringMembers(at: StageAt): Promise<EnteringMember[]> {
  const { ctx, dr, run, stage } = at;
  const { store, forge } = ctx;
  const frozen = new Set((await store.qa.memberStages(run.id, stage)).map((m) => m.issueNumber));
  const members = (await store.deploymentRuns.members(run.id)).filter(
    (m) => m.removedAt === null && !frozen.has(m.issueNumber),
  );
  const entering: EnteringMember[] = [];
  for (const m of members) {
    const issue = await forge.getIssue(dr.repo, m.issueNumber);
    // A qa: label whose webhook never came still attaches its plan before the stage freezes what each member owns.
    if (issue) await reconcileIssueLabels(ctx, dr.repo, m.issueNumber, issue.labels);
    const pull = await forge.getPull(dr.repo, m.prNumber);
    const live = (await store.runs.listLive()).find((r) => r.repo === run.repo && r.issueNumber === m.issueNumber);
    entering.push({
      issueNumber: m.issueNumber,
      item: dr.item(m.issueNumber),
      attached: (await store.qa.attachments(run.repo, m.issueNumber)).map((a) => a.planId),
      holder: await holderOf(ctx, dr, {
        liveRun: live?.id ?? null,
        assignee: issue?.assignee ?? null,
        prAuthor: pull?.author ?? null,
        issueAuthor: issue?.author ?? null,
      }),
      prAuthor: pull?.author ?? null,
    });
  }
  return entering;
}

async function freezeStage(at: StageAt): Promise<void> {
  const { ctx, dr, run, stage } = at;
  const { store, forge, clock } = ctx;
  const entering = await enteringMembers(at);
  const plans = await readPlansAt(forge, dr.repo, run.commit, run.settings.plans_dir);
  const resolved = resolveRunPlans(run.settings.run_plans, namedPlans(plans), {
    plansDir: run.settings.plans_dir,
    at: ` at ${run.commit.slice(0, 12)}`,
    unparsed: [...plans].flatMap(([id, p]) => (p.ok ? [] : [id])),
  });
  const runPlans: FreezeInput['runPlans'] = resolved.ok
    ? resolved
    : {
        ok: false,
        refusal: makeRefusal('qa_configuration_refused', {
          repo: run.repo,
          file: CONFIG_PATH,
          field: 'delivery.run_plans',
          detail: resolved.detail,
          then: `name an exact plan id, merge it, and take this run over with \`--supersedes ${run.id}\`.`,
        }),
      };
  const lineage = (await store.deploymentRuns.lineage(run.id)).map((r) => r.id);
  const plan = planFreeze({
    repo: run.repo,
    run: { id: run.id, commit: run.commit, stage },
    configFile: CONFIG_PATH,
    members: entering,
    plans,
    runPlans,
    lineageGroups: await store.qa.groups(lineage),
    groupCount: (await store.qa.groups([run.id])).length,
    now: clock.now(),
  });
  const froze = await store.write(async (t) => {
    if (await t.deploymentRuns.stage(run.id, stage)) return false; // another entry won the race
    for (const s of plan.snapshots)
      await t.qa.saveSnapshot({ runId: run.id, planId: s.planId, name: s.name, commit: run.commit, cases: s.cases });
    for (const g of plan.groups) await t.qa.openGroup(g);
    for (const m of plan.members) {
      await t.qa.freezeMember(
        {
          runId: run.id,
          stage,
          issueNumber: m.issueNumber,
          holder: m.holder,
          prAuthor: m.prAuthor,
          refusal: m.refusal,
          frozenAt: clock.now(),
          settledAt: null,
        },
        m.plans,
      );
    }
    await t.deploymentRuns.setStage({
      runId: run.id,
      stage,
      state: 'frozen',
      refusal: plan.stageRefusal,
      at: clock.now(),
    });
    return true;
  });
  // Each member's entry into the QA stage, in its issue's trace.
  for (const m of froze ? plan.members : [])
    await issueSpan(ctx, { repo: run.repo, issue: m.issueNumber }, `yoke.qa ${stage}`, {
      start: clock.now(),
      attributes: {
        'yoke.deployment_run': run.id,
        'yoke.stage': stage,
        'yoke.plans': m.plans.map((p) => p.planId).join(','),
        ...(m.holder ? { 'yoke.holder': m.holder } : {}),
      },
      ...(m.refusal ? { error: m.refusal.message } : {}),
    });
}

/**
 * Who may give an independent review (QA04, TR09): logins whose latest review
 * approves the PR at the head yoke merged, who are people (no bots, no deleted
 * `ghost`) with write access or more. The gate then leaves out the author,
 * the holder and the assignee.
 */
export async function reviewApprovals(
  reviews: readonly ReviewView[],
  mergedHead: string | null,
  isWriter: (login: string) => Promise<boolean>,
): Promise<string[]> {
  const latest = new Map<string, ReviewView>();
  for (const r of reviews) if (r.state !== 'COMMENTED') latest.set(r.author, r);
  const out: string[] = [];
  for (const [login, r] of latest) {
    if (r.state !== 'APPROVED' || mergedHead === null || r.commitId !== mergedHead) continue;
    if (login === 'ghost' || isBotLogin(login)) continue;
    if (await isWriter(login)) out.push(login);
  }
  return out;
}

/** The head a claim PR merged at: yoke's own record of its merge (read for every member at once), else GitHub's (a person merged it). */
async function mergedHeadOf(
  ctx: DeliveryContext,
  dr: DeliveryRepo,
  pr: number,
  mine: ReadonlyMap<number, string>,
): Promise<string | null> {
  const head = mine.get(pr);
  if (head) return head;
  const pull = await ctx.forge.getPull(dr.repo, pr);
  return pull?.merged ? (pull.headSha ?? null) : null;
}

/** Everything the gate of a frozen QA stage looks at; reviews are read fresh from GitHub. */
export async function gatherGate(at: StageAt): Promise<GateInput> {
  const { ctx, dr, run, stage } = at;
  const { store, forge } = ctx;
  const frozen = new Map((await store.qa.memberStages(run.id, stage)).map((m) => [m.issueNumber, m]));
  const plans = await store.qa.memberPlans(run.id, stage);
  const members: GateMember[] = [];
  const isWriter = async (login: string) => canWrite(await forge.getPermission(dr.repo, login));
  const runMembers = await store.deploymentRuns.members(run.id);
  const merged = await store.merges.mergedHeads(
    dr.repo.fullName,
    runMembers.map((m) => m.prNumber),
  );
  for (const m of runMembers) {
    const f = frozen.get(m.issueNumber);
    if (!f) continue;
    const own = plans.filter((p) => p.issueNumber === m.issueNumber);
    const needsReviews = m.removedAt === null && own.length > 0;
    members.push({
      issueNumber: m.issueNumber,
      item: dr.item(m.issueNumber),
      prNumber: m.prNumber,
      prAuthor: f.prAuthor,
      holder: f.holder,
      removed: m.removedAt !== null,
      refusal: f.refusal,
      plans: own,
      approvals: needsReviews
        ? await reviewApprovals(
            await forge.listReviews(dr.repo, m.prNumber),
            await mergedHeadOf(ctx, dr, m.prNumber, merged),
            isWriter,
          )
        : [],
      assignee: needsReviews ? ((await forge.getIssue(dr.repo, m.issueNumber))?.assignee ?? null) : null,
    });
  }
  const lineage = (await store.deploymentRuns.lineage(run.id)).map((r) => r.id);
  const reviewed = new Set((await store.qa.failureReviews(run.id)).map((r) => r.verdictId));
  return {
    repo: run.repo,
    run: { id: run.id, commit: run.commit, stage },
    members,
    snapshots: new Map((await store.qa.snapshots(run.id)).map((s) => [s.planId, { name: s.name, cases: s.cases }])),
    groups: (await store.qa.groups(lineage)).filter((g) => g.stage === stage),
    verdicts: (await store.qa.verdicts([run.id])).filter((v) => v.stage === stage),
    reviewedFailures: reviewed,
    stageRefusal: (await store.deploymentRuns.stage(run.id, stage))?.refusal ?? null,
    allowEmpty: run.settings.stages.some((s) => s.name === stage && s.kind === 'qa' && s.allow_empty === true),
  };
}

export async function evaluateFrozenStage(at: StageAt): Promise<StageEvaluation> {
  const { ctx, dr, run, stage } = at;
  return evaluateStage(await gatherGate({ ctx, dr, run, stage }));
}

/** Moves the run past its current stage: to the next one (entered if it is QA), or to success after the last. */
export async function advanceRun(ctx: DeliveryContext, dr: DeliveryRepo, run: DeploymentRun): Promise<void> {
  const next = run.currentStage + 1;
  const now = ctx.clock.now();
  const last = next >= run.settings.stages.length;
  // Compare-and-set on the stage this move starts from: a second check of a stage already left moves nothing.
  if (!(await ctx.store.deploymentRuns.advanceFrom(run.id, run.currentStage, last ? null : next, now))) return;
  // TR12: past its last stage the run is closing; it succeeds once every member it accepted is closed out.
  if (last) {
    await finishIfDelivered(ctx, run.id);
    return;
  }
  const stage = run.settings.stages[next]!;
  if (stage.kind === 'qa') await enterQaStage({ ctx, dr, run: { ...run, currentStage: next }, stage: stage.name });
}
