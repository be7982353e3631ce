import { describe, expect, it } from 'vitest';
import type { QaPlan } from '../../../src/config/qa-plan.js';
import { planFreeze, type FreezeInput, type PlanAtCommit } from '../../../src/delivery/gate/freeze.js';
import type { PlanGroup } from '../../../src/store/delivery/qa.js';

const plan = (id: string, name = id): PlanAtCommit => ({
  ok: true,
  plan: {
    id,
    name,
    path: `.github/yoke/qa/${id}.yml`,
    cases: [{ id: 'a', title: 'A', run: 'true', evidence: 'optional', review: 'none' }],
  } as QaPlan,
});
const member = (n: number, attached: string[]) => ({
  issueNumber: n,
  item: `APP-${n}`,
  attached,
  holder: `h${n}`,
  prAuthor: 'agent',
});

function freeze(over: Partial<FreezeInput>) {
  return planFreeze({
    repo: 'acme/api',
    run: { id: 'dr-2', commit: 'c9', stage: 'qa' },
    configFile: '.github/yoke.yml',
    members: [],
    plans: new Map([
      ['checkout', plan('checkout')],
      ['smoke', plan('smoke')],
      ['release', plan('release')],
    ]),
    runPlans: { ok: true, ids: [] },
    lineageGroups: [],
    groupCount: 0,
    now: 5,
    ...over,
  });
}
const owners = (out: ReturnType<typeof planFreeze>) =>
  out.members.map((m) => [m.issueNumber, m.plans.map((p) => `${p.planId}:${p.owner}:${p.groupId ?? '-'}`)]);

describe('QA entry freezes plan ownership', () => {
  it("QA08 a plan attached by exactly one member is that member's own; QA09 one attached by two or more is a driver-owned group", () => {
    const out = freeze({ members: [member(1, ['checkout', 'smoke']), member(2, ['smoke']), member(3, [])] });
    expect(owners(out)).toEqual([
      [1, ['checkout:member:-', 'smoke:group:dr-2-g1']],
      [2, ['smoke:group:dr-2-g1']],
      [3, []],
    ]);
    expect(out.groups).toEqual([
      {
        id: 'dr-2-g1',
        runId: 'dr-2',
        stage: 'qa',
        planId: 'smoke',
        planName: 'smoke',
        cases: (plan('smoke') as { plan: QaPlan }).plan.cases,
        targetCommit: 'c9',
        coveredItemIds: [1, 2],
        runLevel: false,
        openedAt: 5,
      },
    ]);
    expect(out.snapshots.map((s) => s.planId)).toEqual(['checkout']);
  });

  it('QA15 a later attacher gets a new group; items a closed group of the lineage covers are credited, not re-grouped', () => {
    const passed: PlanGroup = {
      id: 'dr-1-g1',
      runId: 'dr-1',
      stage: 'qa',
      planId: 'smoke',
      planName: 'smoke',
      cases: [],
      targetCommit: 'c5',
      coveredItemIds: [1, 2],
      runLevel: false,
      state: 'closed',
      outcome: 'passed',
      openedAt: 1,
      closedAt: 2,
    };
    const out = freeze({
      members: [member(1, ['smoke']), member(2, ['smoke']), member(3, ['smoke'])],
      lineageGroups: [passed],
      groupCount: 0,
    });
    expect(owners(out)).toEqual([
      [1, ['smoke:group:dr-1-g1']],
      [2, ['smoke:group:dr-1-g1']],
      [3, ['smoke:group:dr-2-g1']],
    ]);
    expect(out.groups.map((g) => [g.id, g.coveredItemIds])).toEqual([['dr-2-g1', [3]]]);
    // A superseded (never passed) group of the lineage credits nobody.
    const superseded = { ...passed, outcome: 'superseded' as const };
    expect(
      freeze({ members: [member(1, ['smoke']), member(2, ['smoke'])], lineageGroups: [superseded] }).groups.map(
        (g) => g.coveredItemIds,
      ),
    ).toEqual([[1, 2]]);
  });

  it('QA09 run-level plans are a driver-owned group covering every member', () => {
    const out = freeze({ members: [member(1, []), member(2, ['checkout'])], runPlans: { ok: true, ids: ['release'] } });
    expect(out.groups.map((g) => [g.planId, g.runLevel, g.coveredItemIds])).toEqual([['release', true, [1, 2]]]);
    expect(out.stageRefusal).toBeNull();
  });

  it('QA02 an attached plan the pinned commit lacks, or that does not parse, holds that member with qa_configuration_refused', () => {
    const broken: PlanAtCommit = {
      ok: false,
      path: '.github/yoke/qa/broken.yml',
      field: '.github/yoke/qa/broken.yml.cases[0].run',
      detail: 'cases[0]: a case has either `run:` or `manual: true`',
    };
    const out = freeze({
      members: [member(1, ['gone']), member(2, ['broken']), member(3, ['checkout'])],
      plans: new Map([
        ['broken', broken],
        ['checkout', plan('checkout')],
      ]),
    });
    expect(out.members.map((m) => m.refusal?.code ?? null)).toEqual([
      'qa_configuration_refused',
      'qa_configuration_refused',
      null,
    ]);
    expect(out.members[0]!.refusal!.message).toBe(
      'QA configuration of acme/api is refused: APP-1 is attached to plan gone, which the pinned commit does not have.',
    );
    expect(out.members[1]!.refusal!.recovery).toBe(
      'Fix `.github/yoke/qa/broken.yml.cases[0].run` in `.github/yoke/qa/broken.yml` of acme/api; merge the fix and take this run over on that commit with `--supersedes dr-2`.',
    );
  });

  it('a run-level plan that is missing holds the whole stage for the driver', () => {
    const out = freeze({ members: [member(1, [])], runPlans: { ok: true, ids: ['nope'] } });
    expect(out.stageRefusal?.code).toBe('qa_configuration_refused');
    expect(out.groups).toEqual([]);
  });
});
