import { describe, expect, it } from 'vitest';
import { handleComment } from '../../../src/commands/handle.js';
import { buildFleetReport, formatFleetReport } from '../../../src/http/operator/report.js';
import { buildDashboardData } from '../../../src/http/pages/dashboard-data.js';
import { renderDashboard } from '../../../src/http/pages/dashboard.js';
import { dispatchStage } from '../../helpers/gate-check.js';
import { checkIn } from '../../../src/delivery/runs/executions.js';
import { createDeploymentRun } from '../../../src/delivery/runs/deployment-runs.js';
import { REPO, makeDeliveryHarness, threeItemRun, type DeliveryHarness, recordAs } from '../../helpers/delivery.js';

const QA_ONLY = { delivery: { stages: [{ name: 'qa', kind: 'qa' }], steering: 'lead' } };

/** APP-1 owns checkout (holder alice), APP-2 and APP-3 share smoke; created by maint. */
async function setup(): Promise<DeliveryHarness & { run: string; tracking: number }> {
  const h = await makeDeliveryHarness({ config: QA_ONLY });
  h.forge.repo(REPO).permissions = { maint: 'admin', alice: 'write', lead: 'admin' };
  const { run, tracking } = await threeItemRun(h);
  return { ...h, run, tracking: tracking! };
}

const noticesOn = (h: DeliveryHarness, thread: number) =>
  h.forge.comments.filter((c) => c.number === thread && c.body.includes('is waiting at stage'));
const dispatch = async (h: DeliveryHarness & { run: string }) => {
  const d = await dispatchStage(h.fleet, h.run, 'qa');
  if (!d.ok) throw new Error(d.refusal.message);
  return d.value;
};

describe('notices', () => {
  it('QA08/QA20 the holder is told once on the claim PR; an unchanged wait over ten dispatches costs one comment and no edit', async () => {
    const h = await setup();
    for (let i = 0; i < 10; i++) await dispatch(h);
    const onPr = noticesOn(h, 101);
    expect(onPr.map((c) => c.body)).toEqual([
      [
        `@alice deployment run \`${h.run}\` is waiting at stage \`qa\` for APP-1.`,
        '',
        "- APP-1's plan checkout, case cart (Cart total) has no current pass: `yoke qa plan run --item APP-1 --stage qa`",
        "- APP-1's plan checkout, case looks-right (Looks right) has no current pass: `yoke qa case run --item APP-1 --stage qa --case looks-right --verdict pass --evidence @FILE`",
        '',
        `Run QA commands in a checkout of \`${(await h.store.deploymentRuns.get(h.run))!.commit}\`. To hand this back, comment \`/yoke qa decline\`.`,
      ].join('\n'),
    ]);
    expect(h.forge.edits.filter((e) => e.commentId === onPr[0]!.id)).toEqual([]);
    // QA10: the shared plan's wait went to the tracking issue, never to APP-2's or APP-3's claim PR.
    expect([noticesOn(h, 102), noticesOn(h, 103)]).toEqual([[], []]);
    expect(noticesOn(h, h.tracking).map((c) => c.body.split('\n')[0])).toEqual([
      `@maint deployment run \`${h.run}\` is waiting at stage \`qa\` for ${h.run}-g1. You created this deployment run, and it has no live driver to take this.`,
      `@maint deployment run \`${h.run}\` is waiting at stage \`qa\` for APP-1. You created this deployment run, and it has no live driver to take this.`,
    ]);
  });

  it('QA20 a changed wait edits its notice in place; QA10 a shared failure tells the driver, not the holders', async () => {
    const h = await setup();
    await dispatch(h);
    await recordAs(h.fleet, h.run, 'qa', {
      item: 'APP-1',
      case: 'cart',
      result: 'pass',
      evidence: 'ok',
      source: 'yoke qa case run',
      by: 'alice',
    });
    await recordAs(h.fleet, h.run, 'qa', {
      plan: 'smoke',
      case: 'flaky',
      result: 'fail',
      evidence: 'boom',
      source: 'capture',
      by: 'driver',
    });
    await dispatch(h);
    const [pr] = noticesOn(h, 101);
    expect(h.forge.edits.filter((e) => e.commentId === pr!.id).map((e) => e.body.split('\n')[2])).toEqual([
      "- APP-1's plan checkout, case looks-right (Looks right) has no current pass: `yoke qa case run --item APP-1 --stage qa --case looks-right --verdict pass --evidence @FILE`",
    ]);
    expect([noticesOn(h, 102), noticesOn(h, 103)]).toEqual([[], []]);
    const group = noticesOn(h, h.tracking).find((c) => c.body.includes(`for ${h.run}-g1`))!;
    expect(h.forge.edits.find((e) => e.commentId === group.id)!.body).toContain(`shared plan smoke failed at`);
  });

  it('QA21 with an injected clock: the live driver is told; once its lease lapses the creator; once the creator declines, steering', async () => {
    const h = await setup();
    await checkIn(h.fleet, h.run, { driver: 'ci-driver', lease_seconds: 60 });
    await dispatch(h);
    const group = () =>
      noticesOn(h, h.tracking)
        .filter((c) => c.body.includes(`for ${h.run}-g1`))
        .map((c) => c.body.split(' deployment run')[0]);
    expect(group()).toEqual(['driver `ci-driver`']);
    h.clock.advance(61_000);
    await dispatch(h);
    expect(group()).toEqual(['driver `ci-driver`', '@maint']);
    const created = h.forge.comments.find(
      (c) => c.number === h.tracking && c.body.startsWith('@maint') && c.body.includes(`for ${h.run}-g1`),
    )!;
    const decline = {
      id: 7001,
      issueNumber: h.tracking,
      isPull: false,
      author: 'maint',
      authorIsBot: false,
      body: '/yoke qa decline',
      createdAt: h.clock.now(),
      updatedAt: h.clock.now(),
    };
    expect(await handleComment(h.fleet, { repo: h.forge.repo(REPO).ref, comment: decline, via: 'webhook' })).toBe(
      'done',
    );
    expect(group()).toEqual(['driver `ci-driver`', '@maint', '@lead']);
    expect(
      (await h.store.notices.forRun(h.run))
        .filter((n) => n.subject === `${h.run}-g1`)
        .map((n) => [n.recipientKind, n.state]),
    ).toEqual([
      ['driver', 'superseded'],
      ['creator', 'cancelled'],
      ['steering', 'posted'],
    ]);
    expect(created).toBeDefined();
  });

  it('QA21 a deleted notice is cancelled and redelivered; a reply or a reaction answers a notice', async () => {
    const h = await setup();
    await dispatch(h);
    const [pr] = noticesOn(h, 101);
    h.forge.deletedComments.add(pr!.id);
    await dispatch(h);
    expect(noticesOn(h, h.tracking).filter((c) => c.body.includes('for APP-1.')).length).toBe(2); // creator: the APP-1 review wait, and now APP-1's item QA
    const reply = {
      id: 7002,
      issueNumber: h.tracking,
      isPull: false,
      author: 'maint',
      authorIsBot: false,
      body: 'On it.',
      createdAt: h.clock.now(),
      updatedAt: h.clock.now(),
    };
    await handleComment(h.fleet, { repo: h.forge.repo(REPO).ref, comment: reply, via: 'webhook' });
    expect((await h.store.notices.forRun(h.run)).filter((n) => n.recipient === 'maint').map((n) => n.state)).toEqual([
      'answered',
      'answered',
      'answered',
    ]);
    const g = (await h.store.notices.forRun(h.run)).find((n) => n.subject === `${h.run}-g1`)!;
    expect(g.state).toBe('answered');
    // A reaction answers too: steering's notice, once it reacts.
    const h2 = await setup();
    await dispatch(h2);
    const holderNotice = (await h2.store.notices.forRun(h2.run)).find((n) => n.recipient === 'alice')!;
    // QA21: someone else's reaction answers nothing; the recipient's own does.
    h2.forge.commentReactions.set(holderNotice.commentId!, ['bystander']);
    await dispatch(h2);
    expect((await h2.store.notices.get(holderNotice.id))!.state).not.toBe('answered');
    h2.forge.commentReactions.set(holderNotice.commentId!, ['bystander', 'alice']);
    await dispatch(h2);
    expect((await h2.store.notices.get(holderNotice.id))!.state).toBe('answered');
  });

  it('QA22 closing a group withdraws its notice, edited to say so', async () => {
    const h = await setup();
    await dispatch(h);
    for (const c of ['health', 'flaky'])
      await recordAs(h.fleet, h.run, 'qa', {
        plan: 'smoke',
        case: c,
        result: 'pass',
        evidence: 'ok',
        source: 'capture',
        by: 'driver',
      });
    await dispatch(h);
    const group = (await h.store.notices.forRun(h.run)).find((n) => n.subject === `${h.run}-g1`)!;
    expect(h.forge.edits.filter((e) => e.commentId === group.commentId).map((e) => e.body)).toEqual([
      `@maint withdrawn: group \`${h.run}-g1\` of deployment run \`${h.run}\` closed, so nothing waits on it any more.`,
    ]);
    expect((await h.store.notices.forRun(h.run)).find((n) => n.subject === `${h.run}-g1`)!.state).toBe('withdrawn');
  });

  it('QA23 the fleet report names each wait with its command, and flags those with no live driver and an unanswered or undelivered notice', async () => {
    const h = await setup();
    await dispatch(h);
    const report = async () => (await buildFleetReport(h.fleet, null)).deliveries[0]!;
    expect((await report()).waits.map((w) => [w.subject, w.notice, w.command])).toEqual([
      [`${h.run}-g1`, 'unanswered', `yoke qa plan run --deployment-run-id ${h.run} --stage qa --plan smoke`],
      [`${h.run}-g1`, 'unanswered', `yoke qa plan run --deployment-run-id ${h.run} --stage qa --plan smoke`],
      ['APP-1', 'unanswered', 'yoke qa plan run --item APP-1 --stage qa'],
      [
        'APP-1',
        'unanswered',
        'yoke qa case run --item APP-1 --stage qa --case looks-right --verdict pass --evidence @FILE',
      ],
      [
        'APP-1',
        'unanswered',
        'Approve PR #101 at its merged head, as someone with write access other than @agent and @alice.',
      ],
    ]);
    expect((await report()).flags[0]).toEqual({
      code: 'qa_wait_unattended',
      message: `Deployment run ${h.run} waits at qa for ${h.run}-g1 (shared plan smoke, case health (Health) has no current pass) with no live driver, and its notice is unanswered.`,
      recovery: `Resume the driver with \`yoke watch deploy -- ${h.run}\`, or move the wait yourself: \`yoke qa plan run --deployment-run-id ${h.run} --stage qa --plan smoke\`.`,
    });
    // The same flag in the CLI's report and on the dashboard.
    const text = formatFleetReport(await buildFleetReport(h.fleet, null));
    expect(text).toContain(
      `! ${(await report()).flags[0]!.message}\n    to recover: ${(await report()).flags[0]!.recovery}`,
    );
    const page = renderDashboard(
      await buildDashboardData(h.fleet, null, { webUrl: 'https://github.com', refreshMs: 10_000 }),
      { kind: 'fleet' },
    );
    expect(page).toContain('<h2>Deployment runs</h2>');
    expect(page).toContain(`<code>yoke qa plan run --deployment-run-id ${h.run} --stage qa --plan smoke</code>`);
    expect(page).toContain(
      'Approve PR #101 at its merged head, as someone with write access other than @agent and @alice.',
    );
    await checkIn(h.fleet, h.run, { driver: 'ci-driver', lease_seconds: 60 });
    expect((await report()).flags).toEqual([]);
    // With no live driver, waits whose notices are all answered are not flagged either.
    const h2 = await setup();
    await dispatch(h2);
    expect((await buildFleetReport(h2.fleet, null)).deliveries[0]!.flags).not.toEqual([]);
    for (const n of await h2.store.notices.forRun(h2.run))
      await h2.store.notices.update(n.id, { state: 'answered', detail: 'answered in the test', at: h2.clock.now() });
    expect((await buildFleetReport(h2.fleet, null)).deliveries[0]!.flags).toEqual([]);
  });

  it('QA21 a run created by a bot, with no steering and no driver, tells nobody of its driver waits, and the report flags that nobody was told', async () => {
    const h = await makeDeliveryHarness({ config: { delivery: { stages: [{ name: 'qa', kind: 'qa' }] } } });
    h.forge.repo(REPO).permissions = { maint: 'admin', alice: 'write' };
    await h.attach(2, 'smoke');
    await h.attach(3, 'smoke');
    const r = await createDeploymentRun(h.fleet, { repo: REPO, creator: 'github-actions[bot]' });
    if (!r.ok) throw new Error(r.refusal.message);
    const d = await dispatchStage(h.fleet, r.value.id, 'qa');
    if (!d.ok) throw new Error(d.refusal.message);
    // The members wait on their group, and the group's driver wait reaches nobody.
    expect(await h.store.notices.forRun(r.value.id)).toEqual([]);
    expect(h.forge.comments.filter((c) => c.body.includes('github-actions[bot]'))).toEqual([]);
    const flags = (await buildFleetReport(h.fleet, null)).deliveries[0]!.flags;
    expect(flags.map((f) => f.code)).toEqual(['qa_wait_no_person', 'qa_wait_no_person']);
    expect(flags[0]).toEqual({
      code: 'qa_wait_no_person',
      message: `Deployment run ${r.value.id} waits at qa for ${r.value.id}-g1 (shared plan smoke, case health (Health) has no current pass) and nobody is told: its only recipient, github-actions[bot], is a bot, no driver is live, and the opt-in file names no steering.`,
      recovery: `Name a person or team as \`steering:\` under \`delivery:\` in .github/yoke.yml so the wait reaches someone, resume the driver with \`yoke watch deploy -- ${r.value.id}\`, or move the wait yourself: \`yoke qa plan run --deployment-run-id ${r.value.id} --stage qa --plan smoke\`.`,
    });
  });

  it("a verdict recorded by a notice's recipient answers it; one by someone else does not", async () => {
    const h = await setup();
    await dispatch(h);
    const holder = async () => (await h.store.notices.forRun(h.run)).find((n) => n.recipient === 'alice')!.state;
    await recordAs(h.fleet, h.run, 'qa', {
      item: 'APP-1',
      case: 'cart',
      result: 'fail',
      evidence: 'x',
      source: 'yoke qa case run',
      by: 'bob',
    });
    expect(await holder()).toBe('posted');
    await recordAs(h.fleet, h.run, 'qa', {
      item: 'APP-1',
      case: 'cart',
      result: 'pass',
      evidence: 'x',
      source: 'yoke qa case run',
      by: 'alice',
    });
    expect(await holder()).toBe('answered');
  });
});
