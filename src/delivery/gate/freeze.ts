import { makeRefusal, type Refusal } from '../../kernel/codes/table.js';
import type { QaPlan } from '../../config/qa-plan.js';
import type { MemberPlan, PlanGroup } from '../../store/delivery/qa.js';

// QA07: ownership freezes when members enter a QA stage. A pure decision: the
// members' attachments, the plans at the pinned commit and the groups of the
// run's lineage go in; who owns each plan, and the groups to open, come out.

export type PlanAtCommit = { ok: true; plan: QaPlan } | { ok: false; path: string; field: string; detail: string };

export interface EnteringMember {
  issueNumber: number;
  item: string;
  /** Exact plan ids attached to the item when it entered. */
  attached: readonly string[];
  holder: string | null;
  prAuthor: string | null;
}

export interface FreezeInput {
  repo: string;
  run: { id: string; commit: string; stage: string };
  configFile: string;
  members: readonly EnteringMember[];
  /** Plans at the pinned commit by exact id; a file that does not parse is a problem. */
  plans: ReadonlyMap<string, PlanAtCommit>;
  /** Run-level plans (exact ids, already resolved), or the refusal that resolving them met. */
  runPlans: { ok: true; ids: readonly string[] } | { ok: false; refusal: Refusal };
  /** Groups of every run in the lineage (this one included). */
  lineageGroups: readonly PlanGroup[];
  /** How many groups the run already has (for ids). */
  groupCount: number;
  now: number;
}

export interface FrozenMember {
  issueNumber: number;
  holder: string | null;
  prAuthor: string | null;
  refusal: Refusal | null;
  plans: MemberPlan[];
}

export type NewGroup = Omit<PlanGroup, 'state' | 'outcome' | 'closedAt'>;

export interface FreezePlan {
  members: FrozenMember[];
  groups: NewGroup[];
  /** Member-owned plans as the pinned commit has them. */
  snapshots: { planId: string; name: string; cases: QaPlan['cases'] }[];
  stageRefusal: Refusal | null;
}

/** A closed, passed group of the lineage that covers this item for this plan (QA14). */
function creditingGroup(
  groups: readonly PlanGroup[],
  at: { stage: string; planId: string; issue: number; runLevel: boolean },
): PlanGroup | undefined {
  return groups.find(
    (g) =>
      g.stage === at.stage &&
      g.planId === at.planId &&
      g.runLevel === at.runLevel &&
      g.outcome === 'passed' &&
      g.coveredItemIds.includes(at.issue),
  );
}

/** Each member's attached plans as the pinned commit has them: the plans and who attached each, or the member's refusal. */
function attachmentsOf(input: FreezeInput): {
  refusals: Map<number, Refusal>;
  attaching: Map<string, { plan: QaPlan; issues: number[] }>;
} {
  const { run } = input;
  const refusals = new Map<number, Refusal>();
  const attaching = new Map<string, { plan: QaPlan; issues: number[] }>();
  for (const m of input.members) {
    for (const id of m.attached) {
      const plan = input.plans.get(id);
      if (!plan) {
        refusals.set(
          m.issueNumber,
          makeRefusal('qa_configuration_refused', {
            repo: input.repo,
            file: `the plans folder at ${run.commit.slice(0, 12)}`,
            field: `qa:${id}`,
            detail: `${m.item} is attached to plan ${id}, which the pinned commit does not have.`,
            then: `attach an existing plan, or remove ${m.item} from the run (its delivery stays owed).`,
          }),
        );
        continue;
      }
      if (!plan.ok) {
        refusals.set(
          m.issueNumber,
          makeRefusal('qa_configuration_refused', {
            repo: input.repo,
            file: plan.path,
            field: plan.field,
            detail: plan.detail,
            then: `merge the fix and take this run over on that commit with \`--supersedes ${run.id}\`.`,
          }),
        );
        continue;
      }
      const entry = attaching.get(id) ?? { plan: plan.plan, issues: [] };
      entry.issues.push(m.issueNumber);
      attaching.set(id, entry);
    }
  }
  return { refusals, attaching };
}

/** The run-level plans (`delivery.run_plans`): a group for the members no closed group covers, or the refusal the stage meets. */
function runLevelPlans(
  input: FreezeInput,
  openGroup: (plan: QaPlan, covered: number[], runLevel: boolean) => string,
): Refusal | null {
  const { run } = input;
  if (!input.runPlans.ok) return input.runPlans.refusal;
  for (const planId of input.runPlans.ids) {
    const found = input.plans.get(planId);
    if (!found || !found.ok) {
      return makeRefusal('qa_configuration_refused', {
        repo: input.repo,
        file: found ? found.path : input.configFile,
        field: found ? found.field : 'delivery.run_plans',
        detail: found ? found.detail : `the run-level plan ${planId} is not at the pinned commit`,
        then: `merge the fix and take this run over on that commit with \`--supersedes ${run.id}\`.`,
      });
    }
    const uncovered = input.members
      .map((m) => m.issueNumber)
      .filter((issue) => !creditingGroup(input.lineageGroups, { stage: run.stage, planId, issue, runLevel: true }));
    if (uncovered.length) openGroup(found.plan, uncovered, true);
  }
  return null;
}

export function planFreeze(input: FreezeInput): FreezePlan {
  const { run } = input;
  const { refusals, attaching } = attachmentsOf(input);
  const groups: NewGroup[] = [];
  const owned = new Map<number, MemberPlan[]>();
  const own = (issue: number, p: Omit<MemberPlan, 'runId' | 'stage' | 'issueNumber'>) =>
    owned.set(issue, [...(owned.get(issue) ?? []), { runId: run.id, stage: run.stage, issueNumber: issue, ...p }]);
  const snapshots = new Map<string, FreezePlan['snapshots'][number]>();
  const openGroup = (plan: QaPlan, covered: number[], runLevel: boolean): string => {
    const id = `${run.id}-g${input.groupCount + groups.length + 1}`;
    groups.push({
      id,
      runId: run.id,
      stage: run.stage,
      planId: plan.id,
      planName: plan.name,
      cases: plan.cases,
      targetCommit: run.commit,
      coveredItemIds: covered,
      runLevel,
      openedAt: input.now,
    });
    return id;
  };

  for (const [planId, { plan, issues }] of [...attaching].sort(([a], [b]) => a.localeCompare(b))) {
    const remaining: number[] = [];
    for (const issue of issues) {
      const credit = creditingGroup(input.lineageGroups, { stage: run.stage, planId, issue, runLevel: false });
      if (credit) own(issue, { planId, owner: 'group', groupId: credit.id });
      else remaining.push(issue);
    }
    if (remaining.length === 0) continue;
    if (issues.length === 1) {
      // QA08: attached by exactly one member: that member's own QA.
      own(remaining[0]!, { planId, owner: 'member', groupId: null });
      snapshots.set(planId, { planId, name: plan.name, cases: plan.cases });
    } else {
      // QA09/QA15: shared: a driver-owned group for the members no closed group covers.
      const id = openGroup(plan, remaining, false);
      for (const issue of remaining) own(issue, { planId, owner: 'group', groupId: id });
    }
  }

  const stageRefusal = runLevelPlans(input, openGroup);

  return {
    members: input.members.map((m) => ({
      issueNumber: m.issueNumber,
      holder: m.holder,
      prAuthor: m.prAuthor,
      refusal: refusals.get(m.issueNumber) ?? null,
      plans: owned.get(m.issueNumber) ?? [],
    })),
    groups,
    snapshots: [...snapshots.values()],
    stageRefusal,
  };
}
