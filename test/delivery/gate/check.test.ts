import { describe, expect, it } from 'vitest';
import { activeRun, createDeploymentRun } from '../../../src/delivery/runs/deployment-runs.js';
import { gateCheck, settleAfter } from '../../../src/delivery/gate/check.js';
import { dispatchStage } from '../../helpers/gate-check.js';
import {
  REPO,
  makeDeliveryHarness,
  mergedHead,
  threeItemRun,
  type DeliveryHarness,
  recordAs,
  waiveAs,
  workOf,
} from '../../helpers/delivery.js';

const QA_ONLY = {
  delivery: {
    stages: [
      { name: 'qa', kind: 'qa' },
      { name: 'production', kind: 'deploy', command: './deploy.sh' },
    ],
  },
};

/** Items 1-3 in one run at its QA stage: 1 owns checkout, 2 and 3 share smoke. */
async function atQa(extraPlans: Record<string, string> = {}): Promise<DeliveryHarness & { run: string }> {
  const h = await makeDeliveryHarness({ config: QA_ONLY });
  if (Object.keys(extraPlans).length) h.forge.commit(REPO, extraPlans);
  const { run } = await threeItemRun(h);
  return { ...h, run };
}

const pass = (h: DeliveryHarness & { run: string }, body: Parameters<typeof recordAs>[3]) =>
  recordAs(h.fleet, h.run, 'qa', body);

describe('a dispatch of a QA stage', () => {
  it('QA01 wakes the holder of item QA with the command (QA08), never a holder for a shared plan (QA10); once per wait', async () => {
    const h = await atQa();
    const first = await dispatchStage(h.fleet, h.run, 'qa');
    if (!first.ok) throw new Error(first.refusal.message);
    expect(first.value.state).toBe('waiting');
    expect(first.value.woken.map((w) => [w.recipient, w.subject, w.waits.map((x) => x.command)])).toEqual([
      [
        'alice',
        'APP-1',
        [
          'yoke qa plan run --item APP-1 --stage qa',
          'yoke qa case run --item APP-1 --stage qa --case looks-right --verdict pass --evidence @FILE',
        ],
      ],
    ]);
    expect(first.value.capture).toEqual([{ groupId: `${h.run}-g1`, planId: 'smoke', cases: ['health', 'flaky'] }]);
    expect(
      first.value.waits.filter((w) => w.subject === 'APP-2' || w.subject === 'APP-3').map((w) => w.recipient),
    ).toEqual(['driver', 'driver']);
    const edits = h.forge.issueUpdates.length;
    const again = await dispatchStage(h.fleet, h.run, 'qa');
    expect(again.ok && again.value.woken).toEqual([]);
    // Nothing changed, so the tracking issue is not edited again.
    expect(h.forge.issueUpdates.length).toBe(edits);
  });

  it('QA02 a member held by qa_configuration_refused is woken once per wait, with the refusal and its recovery', async () => {
    const h = await makeDeliveryHarness({ config: QA_ONLY });
    await h.attach(1, 'checkout');
    // The plan breaks on the default branch after it was attached; the run pins that commit.
    h.forge.commit(REPO, { '.github/yoke/qa/checkout.yml': 'name: checkout\ncases: []\n' });
    const r = await createDeploymentRun(h.fleet, { repo: REPO });
    if (!r.ok) throw new Error(r.refusal.message);
    const d = await dispatchStage(h.fleet, r.value.id, 'qa');
    if (!d.ok) throw new Error(d.refusal.message);
    expect(d.value.woken).toEqual([
      {
        recipient: 'agent',
        subject: 'APP-1',
        waits: [
          {
            key: 'APP-1:qa_configuration_refused:QA configuration of acme/api is refused: .github/yoke/qa/checkout.yml.cases: a plan lists at least one case',
            code: 'qa_configuration_refused',
            recipient: 'holder',
            subject: 'APP-1',
            detail:
              'QA configuration of acme/api is refused: .github/yoke/qa/checkout.yml.cases: a plan lists at least one case',
            command: `Fix \`.github/yoke/qa/checkout.yml.cases\` in \`.github/yoke/qa/checkout.yml\` of acme/api; merge the fix and take this run over on that commit with \`--supersedes ${r.value.id}\`.`,
          },
        ],
      },
    ]);
    expect((await dispatchStage(h.fleet, r.value.id, 'qa')).ok).toBe(true);
    expect(await h.store.qa.wakes(r.value.id)).toHaveLength(1);
  });

  it('QA05 a failure opens one failure review however often dispatch repeats, and capture stops for that plan', async () => {
    const h = await atQa();
    await pass(h, {
      plan: 'smoke',
      case: 'flaky',
      result: 'fail',
      evidence: 'timeout; PRIVATE_KEY=-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----',
      source: 'capture',
      by: 'driver',
    });
    // TR07: evidence is kept and shown; a key the case printed is not.
    expect((await h.store.qa.verdicts([h.run])).map((v) => v.evidence)).toEqual(['timeout; PRIVATE_KEY=[redacted]']);
    for (let i = 0; i < 3; i++) {
      const d = await dispatchStage(h.fleet, h.run, 'qa');
      expect(d.ok && [d.value.state, d.value.capture]).toEqual(['failed', []]);
    }
    expect((await h.store.qa.failureReviews(h.run)).map((r) => [r.subject, r.caseId])).toEqual([
      [`${h.run}-g1`, 'flaky'],
    ]);
  });

  it('settles when every member settles: item QA with evidence and an independent review, the shared group after a retry; then the run moves on', async () => {
    const h = await atQa();
    await pass(h, {
      item: 'APP-1',
      case: 'cart',
      result: 'pass',
      evidence: 'ok',
      source: 'yoke qa case run',
      by: 'alice',
    });
    await pass(h, {
      item: 'APP-1',
      case: 'looks-right',
      result: 'pass',
      evidence: 'screenshot',
      source: 'yoke qa case run',
      by: 'alice',
    });
    await pass(h, {
      plan: 'smoke',
      case: 'health',
      result: 'pass',
      evidence: 'ok',
      source: 'yoke qa plan run',
      by: 'driver',
    });
    await pass(h, {
      plan: 'smoke',
      case: 'flaky',
      result: 'fail',
      evidence: 'first try',
      source: 'yoke qa plan run',
      by: 'driver',
    });
    let d = await dispatchStage(h.fleet, h.run, 'qa');
    expect(d.ok && d.value.triage.map((t) => t.retry)).toEqual([
      `git checkout ${(await h.store.deploymentRuns.get(h.run))!.commit} && yoke qa plan run --deployment-run-id ${h.run} --stage qa --plan smoke`,
    ]);
    await pass(h, {
      plan: 'smoke',
      case: 'flaky',
      result: 'pass',
      evidence: 'retry',
      source: 'yoke qa plan run',
      by: 'driver',
    });
    d = await dispatchStage(h.fleet, h.run, 'qa');
    // QA04: still waiting on an independent review of APP-1's claim PR.
    expect(d.ok && d.value.waits.map((w) => w.code)).toEqual(['review_pending']);
    h.forge
      .repo(REPO)
      .merged.find((p) => p.number === 101)!
      .reviews.push({ author: 'bob', state: 'APPROVED', commitId: mergedHead(1) });
    h.forge.repo(REPO).permissions.bob = 'write';
    d = await dispatchStage(h.fleet, h.run, 'qa');
    expect(d.ok && [d.value.state, d.value.nextStage, d.value.members.map((m) => m.state)]).toEqual([
      'settled',
      'production',
      ['settled', 'settled', 'settled'],
    ]);
    expect((await h.store.qa.groups([h.run])).map((g) => [g.state, g.outcome])).toEqual([['closed', 'passed']]);
  });
});

describe('recording verdicts', () => {
  it('QA17 runs the open group by plan name, the run supplying its project', async () => {
    const h = await atQa();
    const work = await workOf(h.fleet, h.run, 'qa', { plan: 'smoke' });
    expect(
      work.ok && [work.value.repo, work.value.subject, work.value.plans.map((p) => p.cases.map((c) => c.id))],
    ).toEqual([REPO, `${h.run}-g1`, [['health', 'flaky']]]);
  });

  it('QA18 with no open group refuses plan_group_not_open, naming the closed groups', async () => {
    const h = await atQa();
    await h.store.qa.closeGroup(`${h.run}-g1`, 'passed', h.clock.now());
    expect(await workOf(h.fleet, h.run, 'qa', { plan: 'smoke' })).toEqual({
      ok: false,
      refusal: {
        code: 'plan_group_not_open',
        status: 409,
        message: `Run ${h.run} has no open group of plan smoke at stage qa; its closed groups: ${h.run}-g1 (passed).`,
        recovery: `Nothing of smoke is left to run at qa; see \`yoke deployment-runs get ${h.run}\` for what the stage waits on.`,
      },
    });
  });

  it('QA19 an ambiguous plan name refuses with the matching ids; the exact id selects', async () => {
    const h = await makeDeliveryHarness({ config: QA_ONLY });
    const sanity = (id: string) => `name: sanity\ncases:\n  - {id: ${id}, title: ${id}, run: "true"}\n`;
    h.forge.commit(REPO, {
      '.github/yoke/qa/web/sanity.yml': sanity('web'),
      '.github/yoke/qa/api/sanity.yml': sanity('api'),
    });
    await expect(h.attach(2, 'sanity')).rejects.toThrow(
      'The plan name "sanity" matches 2 plans: api/sanity, web/sanity.',
    );
    await h.attach(1, 'web/sanity');
    await h.attach(2, 'web/sanity');
    await h.attach(2, 'api/sanity');
    await h.attach(3, 'api/sanity');
    const r = await createDeploymentRun(h.fleet, { repo: REPO });
    if (!r.ok) throw new Error(r.refusal.message);
    expect(await workOf(h.fleet, r.value.id, 'qa', { plan: 'sanity' })).toEqual({
      ok: false,
      refusal: {
        code: 'qa_plan_ambiguous',
        status: 409,
        message: 'The plan name "sanity" matches 2 plans: api/sanity, web/sanity.',
        recovery: 'Select one by its exact id, e.g. `api/sanity`.',
      },
    });
    const exact = await workOf(h.fleet, r.value.id, 'qa', { plan: 'web/sanity' });
    expect(exact.ok && [exact.value.plans[0]!.planId, exact.value.plans[0]!.cases.map((c) => c.id)]).toEqual([
      'web/sanity',
      ['web'],
    ]);
  });

  it("refuses what does not fit, and records nothing: evidence missing, unknown case, item or stage, a shared plan run as an item's", async () => {
    const h = await atQa();
    const refusals = [
      await pass(h, { item: 'APP-1', case: 'looks-right', result: 'pass', source: 'yoke qa case run', by: 'alice' }),
      await pass(h, { item: 'APP-1', case: 'nope', result: 'pass', source: 'yoke qa case run', by: 'alice' }),
      await pass(h, { item: 'APP-7', case: 'cart', result: 'pass', source: 'yoke qa case run', by: 'alice' }),
      await recordAs(h.fleet, h.run, 'production', {
        item: 'APP-1',
        case: 'cart',
        result: 'pass',
        source: 'yoke qa case run',
        by: 'alice',
      }),
      await recordAs(h.fleet, 'dr-nope', 'qa', {
        item: 'APP-1',
        case: 'cart',
        result: 'pass',
        source: 'yoke qa case run',
        by: 'alice',
      }),
      await workOf(h.fleet, h.run, 'qa', { item: 'APP-2', plan: 'smoke' }),
      await pass(h, {
        item: 'APP-1',
        case: 'cart',
        replaces: 'gone',
        result: 'pass',
        source: 'yoke qa case run',
        by: 'alice',
      }),
    ];
    expect(refusals.map((r) => (r.ok ? 'recorded' : `${r.refusal.code}: ${r.refusal.recovery}`))).toEqual([
      `qa_evidence_required: Record it again with evidence: \`yoke qa case run --item APP-1 --stage qa --case looks-right --verdict pass --evidence @FILE\`.`,
      'qa_case_unknown: Name one of its cases: cart, looks-right.',
      'deployment_item_unknown: Name one of its members: APP-1, APP-2, APP-3.',
      'deployment_stage_not_current: Work on qa first; `yoke deployment-runs get ' +
        h.run +
        '` shows what it waits on.',
      'deployment_run_unknown: Name a run yoke created (its tracking issue and `yoke deployment-runs create` print its id).',
      `qa_plan_not_member_owned: Run it as the driver: \`yoke qa plan run --deployment-run-id ${h.run} --stage qa --plan smoke\`.`,
      'qa_case_unknown: Name one of its cases: looks-right.',
    ]);
    expect(await h.store.qa.verdicts([h.run])).toEqual([]);
  });

  it('QA13 a waiver discharges a shared case', async () => {
    const h = await atQa();
    await pass(h, { plan: 'smoke', case: 'health', result: 'pass', source: 'capture', by: 'driver' });
    await pass(h, {
      plan: 'smoke',
      case: 'flaky',
      result: 'error',
      evidence: 'runner died',
      source: 'capture',
      by: 'driver',
    });
    const w = await waiveAs(h.fleet, h.run, 'qa', {
      plan: 'smoke',
      case: 'flaky',
      reason: 'known flake, tracked in #99',
      by: 'maint',
    });
    expect(w.ok && w.value).toMatchObject({ subject: `${h.run}-g1`, result: 'waived' });
    const d = await dispatchStage(h.fleet, h.run, 'qa');
    expect(d.ok && d.value.groups.map((g) => g.state)).toEqual(['passed']);
  });
});

describe('gate checks of one stage that land together', () => {
  it('advance the run once: a check queued behind the one that settled the stage skips no deploy and does not end the run', async () => {
    const h = await makeDeliveryHarness({ config: QA_ONLY });
    const { run } = await threeItemRun(h);
    const rec = (body: Parameters<typeof recordAs>[3]) => recordAs(h.fleet, run, 'qa', body);
    for (const c of ['cart', 'looks-right'])
      await rec({ item: 'APP-1', case: c, result: 'pass', evidence: 'ok', source: 'yoke qa case run', by: 'alice' });
    for (const c of ['health', 'flaky'])
      await rec({ plan: 'smoke', case: c, result: 'pass', evidence: 'ok', source: 'yoke qa plan run', by: 'driver' });
    h.forge
      .repo(REPO)
      .merged.find((p) => p.number === 101)!
      .reviews.push({ author: 'bob', state: 'APPROVED', commitId: mergedHead(1) });
    h.forge.repo(REPO).permissions.bob = 'write';
    // The driver's dispatch and a verdict callback's check, both from one read of the run: the second
    // queues behind the first, which settles the stage and moves the run on. (Started one after the
    // other, the callback's own read of the run could come after the move, and it would check nothing.)
    const got = await activeRun(h.fleet, run);
    if (!got.ok) throw new Error(got.refusal.message);
    const at = { ctx: h.fleet, ...got.value, stage: 'qa' };
    const [a, b] = await Promise.all([gateCheck(at), gateCheck(at)]);
    expect([a.state, a.nextStage, a.members.length]).toEqual(['settled', 'production', 3]);
    expect([b.state, b.nextStage, b.members.length]).toEqual(['settled', 'production', 0]);
    expect(await h.store.deploymentRuns.get(run)).toMatchObject({ status: 'active', currentStage: 1 });
    // A verdict callback that comes after the move checks nothing.
    expect(await settleAfter(h.fleet, run, 'qa', 'APP-1')).toBeNull();
    expect(await h.store.deploymentRuns.get(run)).toMatchObject({ status: 'active', currentStage: 1 });
    // And again, later: still at production, whose deploy has not run.
    const again = await dispatchStage(h.fleet, run, 'qa');
    expect(again.ok ? 'answered' : again.refusal.code).toBe('deployment_stage_not_current');
    expect(await h.store.deploymentRuns.get(run)).toMatchObject({ status: 'active', currentStage: 1 });
  });
});

describe('the order of one dispatch', () => {
  it('QA01 wakes the waiting members before it closes the accepted ones', async () => {
    const h = await atQa();
    // The shared group passes, so APP-2 and APP-3 are accepted and closed out; APP-1 still waits on its holder.
    for (const c of ['health', 'flaky'])
      await pass(h, {
        plan: 'smoke',
        case: c,
        result: 'pass',
        evidence: 'ok',
        source: 'yoke qa plan run',
        by: 'driver',
      });
    h.forge.sequence = [];
    const d = await dispatchStage(h.fleet, h.run, 'qa');
    expect(d.ok && d.value.woken.map((w) => w.subject)).toEqual(['APP-1']);
    expect(d.ok && d.value.closeout?.closed).toEqual(['APP-2', 'APP-3']);
    // APP-1's wake on its claim PR (#101) comes before APP-2's and APP-3's close-out notices (#102, #103).
    const at = (what: string) => h.forge.sequence.indexOf(what);
    expect(at('comment #101')).toBeGreaterThanOrEqual(0);
    expect([at('comment #102'), at('comment #103')].every((i) => i > at('comment #101'))).toBe(true);
  });
});
