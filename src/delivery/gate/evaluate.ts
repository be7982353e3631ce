import { makeRefusal, type Refusal } from '../../kernel/codes/table.js';
import type { QaCase } from '../../config/qa-plan.js';
import type { MemberPlan, PlanGroup, QaVerdict } from '../../store/qa.js';
import { qaCommands } from './commands.js';

// Gate evaluation of one QA stage of one deployment run: a pure function.
// The stage's frozen plans, groups, verdicts and reviews go in; each member's
// settlement, each group's state, and every wait with the command that moves
// it come out. Dispatch, the CLI and the tracking issue all read this answer.

export const WAIT_CODES = [
  'item_case_pending',
  'item_case_failed',
  'review_pending',
  'group_pending',
  'group_failed',
  'awaits_group',
  'qa_configuration_refused',
  'qa_stage_empty',
  'closeout_refused',
] as const;
export type WaitCode = (typeof WAIT_CODES)[number];

export interface Wait {
  /** What exactly is awaited; an unchanged wait keeps its key. */
  key: string;
  code: WaitCode;
  /** holder: the member's holder (item QA only, QA10); driver: the run's driver; reviewer: someone independent of the PR. */
  recipient: 'holder' | 'driver' | 'reviewer';
  /** The item or group the wait is about. */
  subject: string;
  detail: string;
  command: string;
}

export interface GateMember {
  issueNumber: number;
  item: string;
  prNumber: number;
  prAuthor: string | null;
  holder: string | null;
  removed: boolean;
  refusal: Refusal | null;
  plans: readonly MemberPlan[];
  /** Writers (no bots) whose latest review of the claim PR approves it at its merged head. */
  approvals: readonly string[];
  /** The item's assignee, who cannot review it independently either. */
  assignee?: string | null;
}

export interface GateInput {
  repo: string;
  run: { id: string; commit: string; stage: string };
  members: readonly GateMember[];
  /** Member-owned plans as the pinned commit has them. */
  snapshots: ReadonlyMap<string, { name: string; cases: readonly QaCase[] }>;
  /** Every group of the lineage at this stage (closed ones credit, QA14). */
  groups: readonly PlanGroup[];
  /** Verdicts of this run at this stage. */
  verdicts: readonly QaVerdict[];
  /** Failing verdicts that already have their failure review (QA05). */
  reviewedFailures: ReadonlySet<number>;
  stageRefusal: Refusal | null;
  /** TR29: the stage says it may settle with no case to check (`allow_empty: true`). */
  allowEmpty: boolean;
}

export interface CaseState {
  caseId: string;
  title: string;
  manual: boolean;
  latest: { id: number; result: QaVerdict['result']; evidence: string | null; source: string } | null;
  passed: boolean;
  /** The case whose obligation this one carries (QA06). */
  replaces: string | null;
}

export interface Triage {
  commit: string;
  plan: string;
  items: string[];
  failures: { caseId: string; result: string }[];
  rework: string;
  retry: string;
  waive: string[];
  remove: string[];
}

export interface GroupResult {
  id: string;
  planId: string;
  runLevel: boolean;
  covered: string[];
  state: 'passed' | 'waiting' | 'failed';
  cases: CaseState[];
  triage: Triage | null;
}

export interface MemberResult {
  issueNumber: number;
  item: string;
  state: 'settled' | 'waiting' | 'refused' | 'removed';
  plans: {
    planId: string;
    owner: 'member' | 'group';
    groupId: string | null;
    state: 'passed' | 'waiting' | 'failed';
    cases: CaseState[];
  }[];
  waits: Wait[];
}

export interface StageEvaluation {
  members: MemberResult[];
  groups: GroupResult[];
  /** Automated cases of driver-owned plans the driver captures now; none from a plan with a live failure (QA05). */
  capture: { groupId: string; planId: string; cases: string[] }[];
  /** Failing verdicts to open one failure review for (QA05). */
  failureReviews: { verdictId: number; subject: string; caseId: string }[];
  waits: Wait[];
  settled: boolean;
  failed: boolean;
}

const FAILING: ReadonlySet<string> = new Set(['fail', 'error']);

/** The live cases of one plan scope, each with its latest verdict at the target commit (QA03, QA06). */
export function evaluateCases(cases: readonly QaCase[], verdicts: readonly QaVerdict[]): CaseState[] {
  // TR10 (QA06): a correction takes over only as the pinned plan declares it (`replaces:` on the new case).
  const declared = new Map(cases.filter((c) => c.replaces).map((c) => [c.id, c.replaces!]));
  const replacedBy = new Map<string, string>();
  for (const v of verdicts)
    if (v.replaces && declared.get(v.caseId) === v.replaces) replacedBy.set(v.replaces, v.caseId);
  const latest = new Map<string, QaVerdict>();
  for (const v of verdicts) latest.set(v.caseId, v);
  const carried = new Map([...replacedBy].map(([old, by]) => [by, old]));
  return cases
    .filter((c) => !replacedBy.has(c.id))
    .map((c) => {
      const v = latest.get(c.id) ?? null;
      const evidenced = c.evidence !== 'required' || Boolean(v?.evidence?.trim());
      return {
        caseId: c.id,
        title: c.title,
        manual: c.manual === true,
        latest: v && { id: v.id, result: v.result, evidence: v.evidence, source: v.source },
        passed: v !== null && (v.result === 'waived' || (v.result === 'pass' && evidenced)),
        replaces: carried.get(c.id) ?? null,
      };
    });
}

const planState = (cases: readonly CaseState[]): 'passed' | 'waiting' | 'failed' =>
  cases.some((c) => c.latest && FAILING.has(c.latest.result))
    ? 'failed'
    : cases.every((c) => c.passed)
      ? 'passed'
      : 'waiting';

export function evaluateStage(input: GateInput): StageEvaluation {
  const { run } = input;
  const cmd = qaCommands(input.repo, run.id, run.stage);
  const itemOf = new Map(input.members.map((m) => [m.issueNumber, m.item]));
  const failureReviews: StageEvaluation['failureReviews'] = [];
  const review = (subject: string, cases: readonly CaseState[]) => {
    for (const c of cases) {
      if (c.latest && FAILING.has(c.latest.result) && !input.reviewedFailures.has(c.latest.id))
        failureReviews.push({ verdictId: c.latest.id, subject, caseId: c.caseId });
    }
  };

  // Driver-owned groups of this run at this stage.
  const groups: GroupResult[] = [];
  const capture: StageEvaluation['capture'] = [];
  const groupWaits: Wait[] = [];
  // A shared group whose members were all removed holds nothing (QA13).
  const live = (x: PlanGroup) => x.runLevel || x.coveredItemIds.length > 0;
  for (const g of input.groups.filter(
    (x) => x.runId === run.id && x.stage === run.stage && x.outcome !== 'superseded' && live(x),
  )) {
    const cases = evaluateCases(
      g.cases,
      input.verdicts.filter((v) => v.groupId === g.id && v.commit === g.targetCommit),
    );
    const state = g.outcome === 'passed' ? 'passed' : planState(cases);
    const covered = g.coveredItemIds.map((n) => itemOf.get(n) ?? `#${n}`);
    review(g.id, cases);
    let triage: Triage | null = null;
    if (state === 'failed') {
      const failures = cases
        .filter((c) => c.latest && FAILING.has(c.latest.result))
        .map((c) => ({ caseId: c.caseId, result: c.latest!.result }));
      triage = {
        commit: g.targetCommit,
        plan: g.planId,
        items: covered,
        failures,
        rework: cmd.rework(),
        retry: cmd.retry(g.targetCommit, g.planId),
        waive: failures.map((f) => cmd.waive(g.planId, f.caseId)),
        remove: covered.map((item) => cmd.remove(item)),
      };
      groupWaits.push({
        key: `${g.id}:group_failed:${failures.map((f) => f.caseId).join(',')}`,
        code: 'group_failed',
        recipient: 'driver',
        subject: g.id,
        detail: `shared plan ${g.planId} failed at ${g.targetCommit.slice(0, 12)} (${failures.map((f) => `${f.caseId}: ${f.result}`).join(', ')}); triage which of ${covered.join(', ')} need code fixes`,
        command: triage.retry,
      });
    } else if (state === 'waiting') {
      const auto = cases.filter((c) => !c.passed && !c.manual).map((c) => c.caseId);
      if (auto.length) capture.push({ groupId: g.id, planId: g.planId, cases: auto });
      for (const c of cases.filter((x) => !x.passed)) {
        groupWaits.push({
          key: `${g.id}:group_pending:${c.caseId}`,
          code: 'group_pending',
          recipient: 'driver',
          subject: g.id,
          detail: `${g.runLevel ? 'run-level' : 'shared'} plan ${g.planId}, case ${c.caseId} (${c.title}) has no current pass`,
          command: c.manual ? cmd.groupManualCase(g.planId, c.caseId) : cmd.groupPlan(g.planId),
        });
      }
    }
    groups.push({ id: g.id, planId: g.planId, runLevel: g.runLevel, covered, state, cases, triage });
  }
  const groupById = new Map(input.groups.map((g) => [g.id, g]));
  const resultById = new Map(groups.map((g) => [g.id, g]));

  const members: MemberResult[] = input.members.map((m) => {
    if (m.removed) return { issueNumber: m.issueNumber, item: m.item, state: 'removed', plans: [], waits: [] };
    const waits: Wait[] = [];
    if (m.refusal) {
      // QA02: the holder is told the refusal and its recovery.
      waits.push({
        key: `${m.item}:qa_configuration_refused:${m.refusal.message}`,
        code: 'qa_configuration_refused',
        recipient: 'holder',
        subject: m.item,
        detail: m.refusal.message,
        command: m.refusal.recovery,
      });
    }
    let needsReview = false;
    const plans: MemberResult['plans'] = [];
    for (const p of m.plans) {
      if (p.owner === 'member') {
        const snap = input.snapshots.get(p.planId);
        const cases = evaluateCases(
          snap?.cases ?? [],
          input.verdicts.filter(
            (v) =>
              v.issueNumber === m.issueNumber && v.groupId === null && v.planId === p.planId && v.commit === run.commit,
          ),
        );
        review(m.item, cases);
        needsReview ||= (snap?.cases ?? []).some((c) => c.review === 'independent');
        const state = planState(cases);
        plans.push({ planId: p.planId, owner: 'member', groupId: null, state, cases });
        for (const c of cases.filter((x) => !x.passed)) {
          const failed = c.latest && FAILING.has(c.latest.result);
          waits.push({
            key: `${m.item}:${failed ? 'item_case_failed' : 'item_case_pending'}:${p.planId}/${c.caseId}`,
            code: failed ? 'item_case_failed' : 'item_case_pending',
            recipient: 'holder',
            subject: m.item,
            detail: failed
              ? `${m.item}'s plan ${p.planId}, case ${c.caseId} (${c.title}): latest verdict ${c.latest!.result}`
              : `${m.item}'s plan ${p.planId}, case ${c.caseId} (${c.title}) has no current pass${c.latest?.result === 'pass' ? ' with the evidence it requires' : ''}`,
            command: c.manual
              ? cmd.itemManualCase(m.item, c.caseId)
              : failed
                ? cmd.itemCase(m.item, c.caseId)
                : cmd.itemPlan(m.item),
          });
        }
        continue;
      }
      const g = p.groupId ? groupById.get(p.groupId) : undefined;
      if (g && g.outcome === 'passed' && g.coveredItemIds.includes(m.issueNumber)) {
        plans.push({ planId: p.planId, owner: 'group', groupId: g.id, state: 'passed', cases: [] });
        continue;
      }
      const result = g ? resultById.get(g.id) : undefined;
      if (g && g.runId === run.id) needsReview ||= g.cases.some((c) => c.review === 'independent');
      const state = result?.state ?? 'waiting';
      plans.push({ planId: p.planId, owner: 'group', groupId: p.groupId, state, cases: result?.cases ?? [] });
      if (state !== 'passed') {
        // QA10: a shared plan's wait is the driver's; the holder is not told.
        waits.push({
          key: `${m.item}:awaits_group:${p.groupId}`,
          code: 'awaits_group',
          recipient: 'driver',
          subject: m.item,
          detail: `${m.item} waits on shared plan ${p.planId} (group ${p.groupId}, ${state})`,
          command: state === 'failed' ? result!.triage!.retry : cmd.groupPlan(p.planId),
        });
      }
    }
    if (needsReview) {
      // QA04: an approval by a writer other than the PR's author, the member's holder and its assignee; passes cannot stand in for it.
      const independent = m.approvals.filter((a) => a !== m.prAuthor && a !== m.holder && a !== m.assignee);
      if (independent.length === 0) {
        const not = [m.prAuthor, m.holder, m.assignee].filter((x): x is string => Boolean(x)).map((x) => `@${x}`);
        waits.push({
          key: `${m.item}:review_pending:${m.prNumber}`,
          code: 'review_pending',
          recipient: 'reviewer',
          subject: m.item,
          detail: `${m.item} needs an independent review of its claim PR #${m.prNumber}`,
          command: `Approve PR #${m.prNumber} at its merged head, as someone with write access other than ${[...new Set(not)].join(' and ') || 'its author'}.`,
        });
      }
    }
    return {
      issueNumber: m.issueNumber,
      item: m.item,
      state: m.refusal ? 'refused' : waits.length ? 'waiting' : 'settled',
      plans,
      waits,
    };
  });

  // TR29: a stage with nothing to check settles only when it says so; otherwise it is refused, naming why.
  // What entry froze counts (a member removed since, or one whose plans were refused, had something to check).
  const empty = input.groups.length === 0 && input.members.every((m) => m.plans.length === 0 && !m.refusal);
  const refusal =
    input.stageRefusal ??
    (empty && !input.allowEmpty ? makeRefusal('qa_stage_empty', { repo: input.repo, stage: run.stage }) : null);
  const stageWaits: Wait[] = refusal
    ? [
        {
          key: `stage:${refusal.code}:${refusal.message}`,
          code: refusal.code === 'qa_stage_empty' ? 'qa_stage_empty' : 'qa_configuration_refused',
          recipient: 'driver',
          subject: run.stage,
          detail: refusal.message,
          command: refusal.recovery,
        },
      ]
    : [];
  const waits = [...stageWaits, ...groupWaits, ...members.flatMap((m) => m.waits)];
  return {
    members,
    groups,
    capture,
    failureReviews,
    waits,
    settled:
      !refusal &&
      groups.every((g) => g.state === 'passed') &&
      members.every((m) => m.state === 'settled' || m.state === 'removed'),
    failed: groups.some((g) => g.state === 'failed'),
  };
}
