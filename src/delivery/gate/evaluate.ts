import { makeRefusal, type Refusal } from '../../kernel/codes/table.js';
import type { QaCase } from '../../config/qa-plan.js';
import type { MemberPlan, PlanGroup, QaVerdict } from '../../store/delivery/qa.js';
import { qaCommands } from './commands.js';
import {
  awaitsGroupWait,
  groupFailedWait,
  groupPendingWait,
  itemCaseWait,
  itemRefusedWait,
  reviewPendingWait,
  stageRefusedWait,
  type Wait,
} from './waits.js';

// Gate evaluation of one QA stage of one deployment run: a pure function.
// The stage's frozen plans, groups, verdicts and reviews go in; each member's
// settlement, each group's state, and every wait with the command that moves
// it come out. Dispatch, the CLI and the tracking issue all read this answer.

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

/** One stage of one run, bound once: what evaluating its groups and members keeps asking for. */
interface StageScope {
  input: GateInput;
  cmd: ReturnType<typeof qaCommands>;
  itemOf: ReadonlyMap<number, string>;
  /** QA05: failing verdicts with no failure review yet, gathered as the stage is read. */
  failureReviews: StageEvaluation['failureReviews'];
}

/** QA05: each failing latest verdict of these cases without a failure review gets one. */
function reviewFailures(scope: StageScope, subject: string, cases: readonly CaseState[]): void {
  for (const c of cases)
    if (c.latest && FAILING.has(c.latest.result) && !scope.input.reviewedFailures.has(c.latest.id))
      scope.failureReviews.push({ verdictId: c.latest.id, subject, caseId: c.caseId });
}

/** A driver-owned group of this run at this stage: its state, its triage when it failed, what to capture, and its waits. */
function evaluateGroup(
  scope: StageScope,
  g: PlanGroup,
): { result: GroupResult; capture: StageEvaluation['capture']; waits: Wait[] } {
  const { cmd } = scope;
  const cases = evaluateCases(
    g.cases,
    scope.input.verdicts.filter((v) => v.groupId === g.id && v.commit === g.targetCommit),
  );
  const state = g.outcome === 'passed' ? 'passed' : planState(cases);
  const covered = g.coveredItemIds.map((n) => scope.itemOf.get(n) ?? `#${n}`);
  reviewFailures(scope, g.id, cases);
  const capture: StageEvaluation['capture'] = [];
  const waits: Wait[] = [];
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
    waits.push(groupFailedWait(g, failures, covered, triage.retry));
  } else if (state === 'waiting') {
    const auto = cases.filter((c) => !c.passed && !c.manual).map((c) => c.caseId);
    if (auto.length) capture.push({ groupId: g.id, planId: g.planId, cases: auto });
    for (const c of cases.filter((x) => !x.passed))
      waits.push(groupPendingWait(g, c, c.manual ? cmd.groupManualCase(g.planId, c.caseId) : cmd.groupPlan(g.planId)));
  }
  return {
    result: { id: g.id, planId: g.planId, runLevel: g.runLevel, covered, state, cases, triage },
    capture,
    waits,
  };
}

/** A member-owned plan at the pinned commit: its cases, and a wait for each without a current pass. */
function evaluateOwnPlan(
  scope: StageScope,
  m: GateMember,
  planId: string,
): { plan: MemberResult['plans'][number]; waits: Wait[]; needsReview: boolean } {
  const { cmd, input } = scope;
  const snap = input.snapshots.get(planId);
  const cases = evaluateCases(
    snap?.cases ?? [],
    input.verdicts.filter(
      (v) =>
        v.issueNumber === m.issueNumber && v.groupId === null && v.planId === planId && v.commit === input.run.commit,
    ),
  );
  reviewFailures(scope, m.item, cases);
  const waits = cases
    .filter((x) => !x.passed)
    .map((c) => {
      const failed = Boolean(c.latest && FAILING.has(c.latest.result));
      const command = c.manual
        ? cmd.itemManualCase(m.item, c.caseId)
        : failed
          ? cmd.itemCase(m.item, c.caseId)
          : cmd.itemPlan(m.item);
      return itemCaseWait({ item: m.item, planId }, c, failed, command);
    });
  return {
    plan: { planId, owner: 'member', groupId: null, state: planState(cases), cases },
    waits,
    needsReview: (snap?.cases ?? []).some((c) => c.review === 'independent'),
  };
}

/** One member: each of its plans (its own, or a group's result), its review, and whether it settled. */
function evaluateMember(
  scope: StageScope,
  m: GateMember,
  groups: { byId: ReadonlyMap<string, PlanGroup>; results: ReadonlyMap<string, GroupResult> },
): MemberResult {
  if (m.removed) return { issueNumber: m.issueNumber, item: m.item, state: 'removed', plans: [], waits: [] };
  const waits: Wait[] = m.refusal ? [itemRefusedWait(m.item, m.refusal)] : [];
  let needsReview = false;
  const plans: MemberResult['plans'] = [];
  for (const p of m.plans) {
    if (p.owner === 'member') {
      const own = evaluateOwnPlan(scope, m, p.planId);
      plans.push(own.plan);
      waits.push(...own.waits);
      needsReview ||= own.needsReview;
      continue;
    }
    const g = p.groupId ? groups.byId.get(p.groupId) : undefined;
    if (g && g.outcome === 'passed' && g.coveredItemIds.includes(m.issueNumber)) {
      plans.push({ planId: p.planId, owner: 'group', groupId: g.id, state: 'passed', cases: [] });
      continue;
    }
    const result = g ? groups.results.get(g.id) : undefined;
    if (g && g.runId === scope.input.run.id) needsReview ||= g.cases.some((c) => c.review === 'independent');
    const state = result?.state ?? 'waiting';
    plans.push({ planId: p.planId, owner: 'group', groupId: p.groupId, state, cases: result?.cases ?? [] });
    if (state !== 'passed')
      waits.push(
        awaitsGroupWait(m.item, p, state, state === 'failed' ? result!.triage!.retry : scope.cmd.groupPlan(p.planId)),
      );
  }
  if (needsReview) {
    // QA04: an approval by a writer other than the PR's author, the member's holder and its assignee; passes cannot stand in for it.
    const independent = m.approvals.filter((a) => a !== m.prAuthor && a !== m.holder && a !== m.assignee);
    if (independent.length === 0) {
      const not = [m.prAuthor, m.holder, m.assignee].filter((x): x is string => Boolean(x)).map((x) => `@${x}`);
      waits.push(reviewPendingWait(m.item, m.prNumber, not));
    }
  }
  return {
    issueNumber: m.issueNumber,
    item: m.item,
    state: m.refusal ? 'refused' : waits.length ? 'waiting' : 'settled',
    plans,
    waits,
  };
}

export function evaluateStage(input: GateInput): StageEvaluation {
  const { run } = input;
  const scope: StageScope = {
    input,
    cmd: qaCommands(input.repo, run.id, run.stage),
    itemOf: new Map(input.members.map((m) => [m.issueNumber, m.item])),
    failureReviews: [],
  };
  // Driver-owned groups of this run at this stage. A shared group whose members were all removed holds nothing (QA13).
  const live = (x: PlanGroup) => x.runLevel || x.coveredItemIds.length > 0;
  const evaluated = input.groups
    .filter((x) => x.runId === run.id && x.stage === run.stage && x.outcome !== 'superseded' && live(x))
    .map((g) => evaluateGroup(scope, g));
  const groups = evaluated.map((e) => e.result);
  const byGroup = {
    byId: new Map(input.groups.map((g) => [g.id, g])),
    results: new Map(groups.map((g) => [g.id, g])),
  };
  const members = input.members.map((m) => evaluateMember(scope, m, byGroup));

  // TR29: a stage with nothing to check settles only when it says so; otherwise it is refused, naming why.
  // What entry froze counts (a member removed since, or one whose plans were refused, had something to check).
  const empty = input.groups.length === 0 && input.members.every((m) => m.plans.length === 0 && !m.refusal);
  const refusal =
    input.stageRefusal ??
    (empty && !input.allowEmpty ? makeRefusal('qa_stage_empty', { repo: input.repo, stage: run.stage }) : null);
  const waits = [
    ...(refusal ? [stageRefusedWait(run.stage, refusal)] : []),
    ...evaluated.flatMap((e) => e.waits),
    ...members.flatMap((m) => m.waits),
  ];
  return {
    members,
    groups,
    capture: evaluated.flatMap((e) => e.capture),
    failureReviews: scope.failureReviews,
    waits,
    settled:
      !refusal &&
      groups.every((g) => g.state === 'passed') &&
      members.every((m) => m.state === 'settled' || m.state === 'removed'),
    failed: groups.some((g) => g.state === 'failed'),
  };
}
