import { describe, expect, it } from 'vitest';
import { createDeploymentRun } from '../../../src/delivery/runs/deployment-runs.js';
import { handleQaLabel, syncQaLabels } from '../../../src/delivery/gate/labels.js';
import { REPO, makeDeliveryHarness } from '../../helpers/delivery.js';

// A qa: label whose issues.labeled webhook never arrived still attaches its
// plan: the poll reads what changed and reconciles labels as it does
// everything else, as whoever the label's event names (TR05).

async function setup() {
  const h = await makeDeliveryHarness({
    config: {
      delivery: {
        stages: [
          { name: 'qa', kind: 'qa' },
          { name: 'production', kind: 'deploy', command: './deploy.sh' },
        ],
      },
    },
  });
  h.forge.repo(REPO).permissions = { maint: 'maintain', wendy: 'write', rita: 'read' };
  const label = (n: number, name: string, by: string, ago = 5 * 60_000) => {
    const issue = h.forge.repo(REPO).issues.find((i) => i.number === n)!;
    issue.labels.push(name);
    issue.labelledBy = { ...issue.labelledBy, [name]: by };
    issue.updatedAt = h.clock.now() - ago;
  };
  return { h, ref: h.forge.repo(REPO).ref, label };
}

describe('qa: labels the webhook missed', () => {
  it("QA19 TR05 the poll attaches a writer's label with one reply; a reader's makes yoke write nothing; a bot's is a display; nothing is answered twice", async () => {
    const { h, label } = await setup();
    label(1, 'qa:checkout', 'wendy');
    label(2, 'qa:smoke', 'rita');
    label(3, 'qa:smoke', 'yoke[bot]');
    expect(await syncQaLabels(h.fleet)).toBe(3);
    expect((await h.store.qa.attachments(REPO)).map((a) => [a.issueNumber, a.planId, a.attachedBy, a.source])).toEqual([
      [1, 'checkout', 'wendy', 'label'],
    ]);
    expect(h.forge.comments.map((c) => [c.number, c.body])).toEqual([
      [
        1,
        "@wendy Attached QA plan `checkout` to APP-1. It becomes part of APP-1's QA when APP-1 next enters a QA stage.",
      ],
    ]);
    expect((await h.store.qaLabels.outcomes(REPO)).map((o) => [o.issueNumber, o.label, o.outcome])).toEqual([
      [1, 'qa:checkout', 'attached'],
      [2, 'qa:smoke', 'refused'],
      [3, 'qa:smoke', 'ignored'],
    ]);
    // The next round reads from where this one stopped, and the late webhook of what it attached answers nothing.
    h.clock.advance(h.fleet.policy.labelSyncMs);
    expect(await syncQaLabels(h.fleet)).toBe(0);
    expect(
      await handleQaLabel(h.fleet, {
        repo: h.forge.repo(REPO).ref,
        issueNumber: 1,
        isPull: false,
        label: 'qa:checkout',
        sender: 'wendy',
        senderIsBot: false,
      }),
    ).toBe('ignored');
    expect(h.forge.comments).toHaveLength(1);
  });

  it('QA19 a label younger than the grace is left to its webhook; a repository without a delivery section is not read', async () => {
    const { h, label } = await setup();
    h.forge.addRepo('acme/plain', {});
    await h.store.repos.ensure('acme/plain', 1, h.clock.now());
    label(1, 'qa:checkout', 'wendy', 10_000);
    expect(await syncQaLabels(h.fleet)).toBe(0);
    // Its webhook comes: one reply.
    expect(
      await handleQaLabel(h.fleet, {
        repo: h.forge.repo(REPO).ref,
        issueNumber: 1,
        isPull: false,
        label: 'qa:checkout',
        sender: 'wendy',
        senderIsBot: false,
      }),
    ).toBe('attached');
    h.clock.advance(h.fleet.policy.labelSyncMs);
    expect(await syncQaLabels(h.fleet)).toBe(0);
    expect(h.forge.comments).toHaveLength(1);
    expect(await h.store.qaLabels.cursor('acme/plain')).toBeNull();
  });

  it('QA07 a member whose label webhook was lost, labelled moments before the run, has its plan when the QA stage freezes what it owns', async () => {
    const { h, label } = await setup();
    label(2, 'qa:smoke', 'wendy', 0);
    const run = await createDeploymentRun(h.fleet, { repo: REPO, creator: 'maint' });
    if (!run.ok) throw new Error(run.refusal.message);
    expect((await h.store.qa.memberPlans(run.value.id, 'qa')).map((p) => [p.issueNumber, p.planId])).toEqual([
      [2, 'smoke'],
    ]);
    expect(h.forge.comments.filter((c) => c.number === 2).map((c) => c.body)).toEqual([
      "@wendy Attached QA plan `smoke` to APP-2. It becomes part of APP-2's QA when APP-2 next enters a QA stage.",
    ]);
  });
});

describe('who holds a member', () => {
  it("QA21 a claim PR opened by yoke's app has no bot for a holder: the issue's author when a writer, else nobody, and the wait goes to the run's creator", async () => {
    const { h } = await setup();
    for (const pr of h.forge.repo(REPO).merged) pr.author = 'yoke[bot]';
    const issues = h.forge.repo(REPO).issues;
    issues.find((i) => i.number === 1)!.author = 'wendy';
    issues.find((i) => i.number === 2)!.author = 'rita';
    await h.attach(1, 'checkout');
    await h.attach(2, 'smoke');
    const run = await createDeploymentRun(h.fleet, { repo: REPO, creator: 'maint' });
    if (!run.ok) throw new Error(run.refusal.message);
    expect((await h.store.qa.memberStages(run.value.id, 'qa')).map((m) => [m.issueNumber, m.holder])).toEqual([
      [1, 'wendy'],
      [2, null],
      [3, null],
    ]);
    const { dispatchStage } = await import('../../helpers/gate-check.js');
    await dispatchStage(h.fleet, run.value.id, 'qa');
    const told = (await h.store.notices.forRun(run.value.id)).map((n) => [n.subject, n.recipientKind, n.recipient]);
    expect(told).toContainEqual(['APP-1', 'holder', 'wendy']);
    expect(told).toContainEqual(['APP-2', 'creator', 'maint']);
    expect(told.some(([, , who]) => String(who).endsWith('[bot]'))).toBe(false);
  });
});
