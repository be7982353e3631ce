import { describe, expect, it } from 'vitest';
import type { QaCase } from '../../../src/config/qa-plan.js';
import { evaluateStage, type GateInput, type GateMember } from '../../../src/delivery/gate/evaluate.js';
import type { PlanGroup, QaVerdict } from '../../../src/store/delivery/qa.js';

// Gate evaluation as a pure function: table-driven, no store, no forge.

const RUN = { id: 'dr-1', commit: 'c9', stage: 'staging-qa' };
const auto = (id: string, extra: Partial<QaCase> = {}): QaCase => ({
  id,
  title: `case ${id}`,
  run: `./qa/${id}.sh`,
  evidence: 'optional',
  review: 'none',
  ...extra,
});
const manual = (id: string, extra: Partial<QaCase> = {}): QaCase => ({
  id,
  title: `case ${id}`,
  manual: true,
  evidence: 'required',
  review: 'none',
  ...extra,
});

const member = (n: number, plans: GateMember['plans'] = [], extra: Partial<GateMember> = {}): GateMember => ({
  issueNumber: n,
  item: `APP-${n}`,
  prNumber: 100 + n,
  prAuthor: 'agent',
  holder: 'agent',
  removed: false,
  refusal: null,
  plans,
  approvals: [],
  ...extra,
});
const own = (n: number, planId: string) => ({
  runId: RUN.id,
  stage: RUN.stage,
  issueNumber: n,
  planId,
  owner: 'member' as const,
  groupId: null,
});
const inGroup = (n: number, planId: string, groupId: string) => ({
  runId: RUN.id,
  stage: RUN.stage,
  issueNumber: n,
  planId,
  owner: 'group' as const,
  groupId,
});

let nextId = 1;
const verdict = (v: Partial<QaVerdict> & Pick<QaVerdict, 'planId' | 'caseId' | 'result'>): QaVerdict => ({
  id: nextId++,
  runId: RUN.id,
  stage: RUN.stage,
  issueNumber: null,
  groupId: null,
  commit: RUN.commit,
  evidence: 'output',
  source: 'yoke qa case run',
  replaces: null,
  recordedBy: 'agent',
  recordedAt: 0,
  ...v,
});
const group = (g: Partial<PlanGroup> & Pick<PlanGroup, 'id' | 'planId' | 'coveredItemIds' | 'cases'>): PlanGroup => ({
  runId: RUN.id,
  stage: RUN.stage,
  planName: g.planId,
  targetCommit: RUN.commit,
  runLevel: false,
  state: 'open',
  outcome: null,
  openedAt: 0,
  closedAt: null,
  ...g,
});

function gate(over: Partial<GateInput>): ReturnType<typeof evaluateStage> {
  return evaluateStage({
    repo: 'acme/api',
    run: RUN,
    members: [],
    snapshots: new Map(),
    groups: [],
    verdicts: [],
    reviewedFailures: new Set(),
    stageRefusal: null,
    allowEmpty: false,
    ...over,
  });
}

const checkout = { name: 'checkout', cases: [auto('cart'), manual('looks-right')] };

describe('gate evaluation of an item-scoped member', () => {
  const cases: { name: string; verdicts: Partial<QaVerdict>[]; state: string; waits: string[] }[] = [
    {
      name: 'QA03 no verdicts: the holder is told to run its plan',
      verdicts: [],
      state: 'waiting',
      waits: [
        'item_case_pending:yoke qa plan run --item APP-1 --stage staging-qa',
        'item_case_pending:yoke qa case run --item APP-1 --stage staging-qa --case looks-right --verdict pass --evidence @FILE',
      ],
    },
    {
      name: 'QA03 every run-bound case passed with evidence, yoke qa case run included: settled',
      verdicts: [
        { caseId: 'cart', result: 'pass', source: 'yoke qa case run' },
        { caseId: 'looks-right', result: 'pass', evidence: 'screenshot.png' },
      ],
      state: 'settled',
      waits: [],
    },
    {
      name: 'QA03 a manual pass without the evidence it requires is not current',
      verdicts: [
        { caseId: 'cart', result: 'pass' },
        { caseId: 'looks-right', result: 'pass', evidence: null },
      ],
      state: 'waiting',
      waits: [
        'item_case_pending:yoke qa case run --item APP-1 --stage staging-qa --case looks-right --verdict pass --evidence @FILE',
      ],
    },
    {
      name: 'QA03 a pass at another commit (an older run) is not run-bound',
      verdicts: [
        { caseId: 'cart', result: 'pass', commit: 'c1' },
        { caseId: 'looks-right', result: 'pass', evidence: 'x' },
      ],
      state: 'waiting',
      waits: ['item_case_pending:yoke qa plan run --item APP-1 --stage staging-qa'],
    },
    {
      name: 'QA03 the latest verdict counts: a fail after a pass fails',
      verdicts: [
        { caseId: 'cart', result: 'pass' },
        { caseId: 'cart', result: 'fail' },
        { caseId: 'looks-right', result: 'pass', evidence: 'x' },
      ],
      state: 'waiting',
      waits: ['item_case_failed:yoke qa case run --item APP-1 --stage staging-qa --case cart'],
    },
    {
      name: 'TR10 a --replaces the plan does not declare transfers nothing: the failed case still fails the member',
      verdicts: [
        { caseId: 'cart', result: 'fail' },
        { caseId: 'looks-right', result: 'pass', evidence: 'x', replaces: 'cart' },
      ],
      state: 'waiting',
      waits: ['item_case_failed:yoke qa case run --item APP-1 --stage staging-qa --case cart'],
    },
  ];
  it("QA06 a declared --replaces correction carries the failed case's obligation: its pass settles it", () => {
    const corrected = { name: 'checkout', cases: [auto('cart'), manual('looks-right', { replaces: 'cart' })] };
    const out = gate({
      members: [member(1, [own(1, 'checkout')])],
      snapshots: new Map([['checkout', corrected]]),
      verdicts: [
        verdict({ issueNumber: 1, planId: 'checkout', caseId: 'cart', result: 'fail' }),
        verdict({
          issueNumber: 1,
          planId: 'checkout',
          caseId: 'looks-right',
          result: 'pass',
          evidence: 'x',
          replaces: 'cart',
        }),
      ],
    });
    expect([out.members[0]!.state, out.waits, out.settled]).toEqual(['settled', [], true]);
  });

  for (const c of cases) {
    it(c.name, () => {
      const out = gate({
        members: [member(1, [own(1, 'checkout')])],
        snapshots: new Map([['checkout', checkout]]),
        verdicts: c.verdicts.map((v) =>
          verdict({ issueNumber: 1, planId: 'checkout', caseId: 'cart', result: 'pass', ...v }),
        ),
      });
      expect(out.members[0]!.state).toBe(c.state);
      expect(out.waits.map((w) => `${w.code}:${w.command}`)).toEqual(c.waits);
      expect(out.settled).toBe(c.state === 'settled');
    });
  }

  it('QA04 a pending independent review still waits, and rerunning passed cases cannot supply it', () => {
    const reviewed = { name: 'ux', cases: [manual('looks-right', { review: 'independent' })] };
    const passes = [1, 2, 3].map(() =>
      verdict({ issueNumber: 1, planId: 'ux', caseId: 'looks-right', result: 'pass', evidence: 'shot' }),
    );
    const base = {
      members: [member(1, [own(1, 'ux')], { prAuthor: 'agent', holder: 'alice', approvals: ['agent', 'alice'] })],
      snapshots: new Map([['ux', reviewed]]),
      verdicts: passes,
    };
    const waiting = gate(base);
    expect(waiting.members[0]!.state).toBe('waiting');
    expect(waiting.waits).toEqual([
      {
        key: 'APP-1:review_pending:101',
        code: 'review_pending',
        recipient: 'reviewer',
        subject: 'APP-1',
        detail: 'APP-1 needs an independent review of its claim PR #101',
        command: 'Approve PR #101 at its merged head, as someone with write access other than @agent and @alice.',
      },
    ]);
    const approved = gate({
      ...base,
      members: [member(1, [own(1, 'ux')], { prAuthor: 'agent', holder: 'alice', approvals: ['agent', 'bob'] })],
    });
    expect(approved.members[0]!.state).toBe('settled');
  });

  it('QA05 a latest fail or error opens one failure review; one already opened is not opened again', () => {
    const fail = verdict({ issueNumber: 1, planId: 'checkout', caseId: 'cart', result: 'error' });
    const input = {
      members: [member(1, [own(1, 'checkout')])],
      snapshots: new Map([['checkout', checkout]]),
      verdicts: [fail],
    };
    expect(gate(input).failureReviews).toEqual([{ verdictId: fail.id, subject: 'APP-1', caseId: 'cart' }]);
    expect(gate({ ...input, reviewedFailures: new Set([fail.id]) }).failureReviews).toEqual([]);
  });

  it('QA02 a member held by qa_configuration_refused waits with the refusal and its recovery, for its holder', () => {
    const refusal = {
      code: 'qa_configuration_refused' as const,
      status: 422,
      message: 'QA configuration of acme/api is refused: bad',
      recovery: 'Fix `cases[0].id` in `p.yml` of acme/api; …',
    };
    const out = gate({ members: [member(1, [], { refusal })] });
    expect(out.members[0]!.state).toBe('refused');
    expect(out.waits).toEqual([
      {
        key: `APP-1:qa_configuration_refused:${refusal.message}`,
        code: 'qa_configuration_refused',
        recipient: 'holder',
        subject: 'APP-1',
        detail: refusal.message,
        command: refusal.recovery,
      },
    ]);
    expect(out.settled).toBe(false);
  });
});

describe('gate evaluation of driver-owned plan groups', () => {
  const shared = [auto('smoke'), auto('flaky')];

  it("QA10 a waiting group is the driver's (QA09): capture lists its automated cases, and no holder is woken", () => {
    const out = gate({
      members: [member(1, [inGroup(1, 'smoke', 'g1')]), member(2, [inGroup(2, 'smoke', 'g1')])],
      groups: [group({ id: 'g1', planId: 'smoke', coveredItemIds: [1, 2], cases: shared })],
    });
    expect(out.capture).toEqual([{ groupId: 'g1', planId: 'smoke', cases: ['smoke', 'flaky'] }]);
    expect(out.waits.every((w) => w.recipient === 'driver')).toBe(true);
    expect(out.members.map((m) => m.state)).toEqual(['waiting', 'waiting']);
  });

  it('QA11 a failed shared plan triages: pinned commit, rework, retry, waive, remove (QA12, QA13), and capture stops (QA05)', () => {
    const out = gate({
      members: [member(1, [inGroup(1, 'smoke', 'g1')]), member(2, [inGroup(2, 'smoke', 'g1')])],
      groups: [group({ id: 'g1', planId: 'smoke', coveredItemIds: [1, 2], cases: shared })],
      verdicts: [
        verdict({ groupId: 'g1', planId: 'smoke', caseId: 'smoke', result: 'pass' }),
        verdict({ groupId: 'g1', planId: 'smoke', caseId: 'flaky', result: 'fail' }),
      ],
    });
    expect(out.capture).toEqual([]);
    expect(out.failed).toBe(true);
    expect(out.groups[0]!.triage).toEqual({
      commit: 'c9',
      plan: 'smoke',
      items: ['APP-1', 'APP-2'],
      failures: [{ caseId: 'flaky', result: 'fail' }],
      rework: 'yoke deployment-runs create acme/api --commit LATER_SHA --supersedes dr-1',
      retry: 'git checkout c9 && yoke qa plan run --deployment-run-id dr-1 --stage staging-qa --plan smoke',
      waive: ['yoke qa waive --deployment-run-id dr-1 --stage staging-qa --plan smoke --case flaky --reason "..."'],
      remove: [
        'yoke deployment-runs remove dr-1 --item APP-1 --reason "..."',
        'yoke deployment-runs remove dr-1 --item APP-2 --reason "..."',
      ],
    });
    expect(out.waits.filter((w) => w.recipient === 'holder')).toEqual([]);
  });

  it('QA12 a retry at the pinned commit that passes clears the failure; QA13 a waiver discharges the case', () => {
    const base = {
      members: [member(1, [inGroup(1, 'smoke', 'g1')]), member(2, [inGroup(2, 'smoke', 'g1')])],
      groups: [group({ id: 'g1', planId: 'smoke', coveredItemIds: [1, 2], cases: shared })],
    };
    const first = [
      verdict({ groupId: 'g1', planId: 'smoke', caseId: 'smoke', result: 'pass' }),
      verdict({ groupId: 'g1', planId: 'smoke', caseId: 'flaky', result: 'fail' }),
    ];
    expect(
      gate({
        ...base,
        verdicts: [...first, verdict({ groupId: 'g1', planId: 'smoke', caseId: 'flaky', result: 'pass' })],
      }).settled,
    ).toBe(true);
    expect(
      gate({
        ...base,
        verdicts: [
          ...first,
          verdict({ groupId: 'g1', planId: 'smoke', caseId: 'flaky', result: 'waived', evidence: 'known flake' }),
        ],
      }).settled,
    ).toBe(true);
    // A pass recorded against another commit is not a retry of the pinned one.
    expect(
      gate({
        ...base,
        verdicts: [
          ...first,
          verdict({ groupId: 'g1', planId: 'smoke', caseId: 'flaky', result: 'pass', commit: 'c10' }),
        ],
      }).failed,
    ).toBe(true);
  });

  it('QA06 a declared --replaces correction lets capture go on: the failed predecessor no longer stops it', () => {
    const cases = [auto('old'), auto('fixed', { replaces: 'old' }), auto('other')];
    const base = {
      members: [member(1, [inGroup(1, 'p', 'g1')]), member(2, [inGroup(2, 'p', 'g1')])],
      groups: [group({ id: 'g1', planId: 'p', coveredItemIds: [1, 2], cases })],
    };
    const failed = [verdict({ groupId: 'g1', planId: 'p', caseId: 'old', result: 'fail' })];
    expect(gate({ ...base, verdicts: failed }).capture).toEqual([]);
    const corrected = [
      ...failed,
      verdict({ groupId: 'g1', planId: 'p', caseId: 'fixed', result: 'pass', replaces: 'old' }),
    ];
    const out = gate({ ...base, verdicts: corrected });
    expect(out.failed).toBe(false);
    expect(out.capture).toEqual([{ groupId: 'g1', planId: 'p', cases: ['other'] }]);
  });

  it('QA14 a closed group credits only its recorded covered_item_ids, across the superseded-run lineage', () => {
    const old = group({
      id: 'dr-0-g1',
      runId: 'dr-0',
      planId: 'smoke',
      coveredItemIds: [1, 2],
      cases: shared,
      state: 'closed',
      outcome: 'passed',
      targetCommit: 'c5',
    });
    const fresh = group({ id: 'g2', planId: 'smoke', coveredItemIds: [3], cases: shared });
    const out = gate({
      members: [
        member(1, [inGroup(1, 'smoke', 'dr-0-g1')]),
        member(2, [inGroup(2, 'smoke', 'dr-0-g1')]),
        member(3, [inGroup(3, 'smoke', 'g2')]),
      ],
      groups: [old, fresh],
    });
    // QA15: the later attacher waits on its new group; the covered items do not.
    expect(out.members.map((m) => [m.item, m.state])).toEqual([
      ['APP-1', 'settled'],
      ['APP-2', 'settled'],
      ['APP-3', 'waiting'],
    ]);
    // A member pointed at a closed group that does not list it is not credited.
    const sneaky = gate({ members: [member(3, [inGroup(3, 'smoke', 'dr-0-g1')])], groups: [old] });
    expect(sneaky.members[0]!.state).toBe('waiting');
  });

  it("QA16 a group's pinned cases stay authoritative after the plan file is edited", () => {
    // The plan at a later commit has only `smoke`; the group pinned `smoke` and `flaky`.
    const out = gate({
      members: [member(1, [inGroup(1, 'smoke', 'g1')]), member(2, [inGroup(2, 'smoke', 'g1')])],
      snapshots: new Map([['smoke', { name: 'smoke', cases: [auto('smoke')] }]]),
      groups: [group({ id: 'g1', planId: 'smoke', coveredItemIds: [1, 2], cases: shared })],
      verdicts: [verdict({ groupId: 'g1', planId: 'smoke', caseId: 'smoke', result: 'pass' })],
    });
    expect(out.settled).toBe(false);
    expect(out.capture).toEqual([{ groupId: 'g1', planId: 'smoke', cases: ['flaky'] }]);
  });

  it('QA09 a run-level plan belongs to the driver and holds the stage until it passes', () => {
    const runLevel = group({
      id: 'g1',
      planId: 'release',
      coveredItemIds: [1],
      cases: [auto('health')],
      runLevel: true,
    });
    const waiting = gate({ members: [member(1)], groups: [runLevel] });
    expect([waiting.members[0]!.state, waiting.settled]).toEqual(['settled', false]);
    expect(waiting.waits.map((w) => [w.recipient, w.command])).toEqual([
      ['driver', 'yoke qa plan run --deployment-run-id dr-1 --stage staging-qa --plan release'],
    ]);
    const passed = gate({
      members: [member(1)],
      groups: [runLevel],
      verdicts: [verdict({ groupId: 'g1', planId: 'release', caseId: 'health', result: 'pass' })],
    });
    expect(passed.settled).toBe(true);
  });

  it('QA13 a removed member no longer holds the stage', () => {
    const out = gate({
      members: [member(1, [own(1, 'checkout')], { removed: true })],
      snapshots: new Map([['checkout', checkout]]),
    });
    expect([out.members[0]!.state, out.settled]).toEqual(['removed', true]);
  });
});

describe('TR29 a stage with nothing to check', () => {
  const member = {
    issueNumber: 1,
    item: 'APP-1',
    prNumber: 101,
    prAuthor: 'dev',
    holder: null,
    removed: false,
    refusal: null,
    plans: [],
    approvals: [],
    assignee: null,
  };
  it('TR29 does not settle unless it says allow_empty: it is refused with the ways to give it something to check', () => {
    const refused = gate({ members: [member] });
    expect(refused.settled).toBe(false);
    expect(refused.waits).toEqual([
      {
        key: 'stage:qa_stage_empty:Stage staging-qa of acme/api has nothing to check: no member has a QA plan and no run-level plan applies, so it does not settle.',
        code: 'qa_stage_empty',
        recipient: 'driver',
        subject: 'staging-qa',
        detail:
          'Stage staging-qa of acme/api has nothing to check: no member has a QA plan and no run-level plan applies, so it does not settle.',
        command:
          'Attach a plan to a member (label `qa:PLAN` or `/yoke qa attach PLAN`), list one in `delivery.run_plans`, or say `allow_empty: true` on stage staging-qa in `.github/yoke.yml` if it may pass with nothing checked.',
      },
    ]);
    expect(gate({ members: [member], allowEmpty: true }).settled).toBe(true);
  });
});
