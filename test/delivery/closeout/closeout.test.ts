import { describe, expect, it } from 'vitest';
import type { RepoRef } from '../../../src/forge/types.js';
import { createDeploymentRun } from '../../../src/delivery/runs/deployment-runs.js';
import { settleAfter, sweepCloseouts } from '../../../src/delivery/gate/check.js';
import { dispatchStage } from '../../helpers/gate-check.js';
import { endExecution, startExecution } from '../../../src/delivery/runs/executions.js';
import { FakeForge } from '../../helpers/fake-forge.js';
import { ManualClock } from '../../helpers/fleet.js';
import { REPO, makeDeliveryHarness, recordAs } from '../../helpers/delivery.js';

const QA_ONLY = { delivery: { stages: [{ name: 'qa', kind: 'qa' }] } };
/** TR29: the same stage, said to settle with nothing to check (its members attach no plan). */
const QA_EMPTY_OK = { delivery: { stages: [{ name: 'qa', kind: 'qa', allow_empty: true }] } };

/** A forge whose issue writes take two seconds of the injected clock. */
class SlowForge extends FakeForge {
  constructor(private readonly clock: ManualClock) {
    super();
  }
  override async updateIssue(
    repo: RepoRef,
    number: number,
    change: Parameters<FakeForge['updateIssue']>[2],
  ): Promise<void> {
    this.clock.advance(2_000);
    return super.updateIssue(repo, number, change);
  }
}

const closeoutComments = (h: { forge: FakeForge }) =>
  h.forge.comments.filter((c) => c.body.includes(' is delivered: deployment run'));

describe('close-out', () => {
  it('DX01 closes accepted members in order: the issue closed as completed, delivered replacing owed, a close-out notice on the claim PR', async () => {
    const h = await makeDeliveryHarness({ config: QA_ONLY });
    // Open issues (closed without a keyword), so the close-out closes them itself.
    for (const i of h.forge.repo(REPO).issues) Object.assign(i, { open: true, stateReason: null });
    const run = await createDeploymentRun(h.fleet, { repo: REPO });
    if (!run.ok) throw new Error(run.refusal.message);
    const d = await dispatchStage(h.fleet, run.value.id, 'qa');
    expect(d.ok && d.value.closeout).toEqual({
      closed: ['APP-1', 'APP-2', 'APP-3'],
      refused: [],
      skipped: [],
      deferred: [],
    });
    const issue = h.forge.repo(REPO).issues.find((i) => i.number === 1)!;
    expect([issue.open, issue.stateReason, issue.labels]).toEqual([false, 'completed', ['yoke:delivered']]);
    expect(closeoutComments(h).map((c) => [c.number, c.body])).toEqual([
      [
        101,
        `@agent APP-1 is delivered: deployment run \`${run.value.id}\` accepted it at stage \`qa\` on \`${run.value.commit}\`. Issue #1 is closed as completed and labelled \`yoke:delivered\`.`,
      ],
      [102, expect.stringContaining('APP-2 is delivered')],
      [103, expect.stringContaining('APP-3 is delivered')],
    ]);
    expect(await h.store.deliveryItems.listOwed(REPO)).toEqual([]);
  });

  it('DX06 with a slow forge no close-out starts after five seconds (DX01); the skipped close later, and none twice', async () => {
    const clock = new ManualClock();
    const h = await makeDeliveryHarness({
      config: QA_EMPTY_OK,
      items: [1, 2, 3, 4, 5],
      forge: new SlowForge(clock),
      clock,
    });
    for (const i of h.forge.repo(REPO).issues) Object.assign(i, { open: true, stateReason: null });
    const run = await createDeploymentRun(h.fleet, { repo: REPO });
    if (!run.ok) throw new Error(run.refusal.message);
    const first = await dispatchStage(h.fleet, run.value.id, 'qa');
    // Started at 0, 2 and 4 s; the fourth would start at 6 s.
    expect(first.ok && first.value.closeout).toEqual({
      closed: ['APP-1', 'APP-2', 'APP-3'],
      refused: [],
      skipped: ['APP-4', 'APP-5'],
      deferred: [],
    });
    // DX06: the skip never holds the stage.
    expect(first.ok && first.value.state).toBe('settled');
    const second = await sweepCloseouts(h.fleet);
    expect(second).toBe(2);
    expect(await sweepCloseouts(h.fleet)).toBe(0);
    expect(closeoutComments(h).map((c) => c.number)).toEqual([101, 102, 103, 104, 105]);
    expect((await h.store.closeouts.forRun(run.value.id)).map((c) => [c.issueNumber, c.state, c.attempts])).toEqual(
      [1, 2, 3, 4, 5].map((n) => [n, 'closed', 1]),
    );
  });

  it('DX03 a locked issue refuses its close-out, wakes its owner with the refusal, the next member still closes, and it closes by itself once unlocked (DX04)', async () => {
    const h = await makeDeliveryHarness({ config: QA_ONLY });
    const run = await createDeploymentRun(h.fleet, { repo: REPO });
    if (!run.ok) throw new Error(run.refusal.message);
    // Locked after the run was created: only a fresh read right before acting sees it.
    h.forge.repo(REPO).issues.find((i) => i.number === 2)!.locked = true;
    const d = await dispatchStage(h.fleet, run.value.id, 'qa');
    expect(d.ok && [d.value.closeout!.closed, d.value.closeout!.refused.map((r) => r.item)]).toEqual([
      ['APP-1', 'APP-3'],
      ['APP-2'],
    ]);
    const wake = h.forge.comments.filter((c) => c.number === 102 && c.body.includes('could not be closed out'));
    expect(wake.map((c) => c.body)).toEqual([
      `@agent deployment run \`${run.value.id}\` is waiting at stage \`qa\` for APP-2.\n\n- APP-2 was accepted but could not be closed out: issue #2 is locked: \`Unlock #2. yoke tries #2's close-out again by itself once that is settled.\`\n\nRun QA commands in a checkout of \`${run.value.commit}\`. To hand this back, comment \`/yoke qa decline\`.`,
    ]);
    expect(await sweepCloseouts(h.fleet)).toBe(0);
    // While the same refusal stands, a sweep re-reads only the refused member's route, not the notices out there.
    const reads = h.forge.commentReads;
    expect(await sweepCloseouts(h.fleet)).toBe(0);
    expect(h.forge.commentReads).toBe(reads);
    h.forge.repo(REPO).issues.find((i) => i.number === 2)!.locked = false;
    expect(await sweepCloseouts(h.fleet)).toBe(1);
    expect(closeoutComments(h).map((c) => c.number)).toEqual([101, 103, 102]);
    // The refusal notice is resolved in place, not left standing.
    expect(
      h.forge.edits.filter((e) => e.commentId === h.forge.comments.find((c) => c === wake[0])!.id).map((e) => e.body),
    ).toEqual([`@agent resolved: APP-2 no longer waits at stage \`qa\` of deployment run \`${run.value.id}\`.`]);
  });

  it('DX02 the route is read fresh right before acting: a lock set after the run was created, and a reopened issue, refuse', async () => {
    const h = await makeDeliveryHarness({ config: QA_ONLY });
    const run = await createDeploymentRun(h.fleet, { repo: REPO });
    if (!run.ok) throw new Error(run.refusal.message);
    Object.assign(
      h.forge.repo(REPO).issues.find((i) => i.number === 1)!,
      { open: true, stateReason: 'reopened' },
    );
    h.forge.repo(REPO).issues.find((i) => i.number === 3)!.locked = true;
    const d = await dispatchStage(h.fleet, run.value.id, 'qa');
    expect(d.ok && d.value.closeout!.refused.map((r) => [r.item, r.refusal.message])).toEqual([
      ['APP-1', 'APP-1 was accepted but could not be closed out: issue #1 was reopened'],
      ['APP-3', 'APP-3 was accepted but could not be closed out: issue #3 is locked'],
    ]);
  });

  it('DX02 an earlier close-out cannot leave a later route stale: a lock set while APP-1 closes refuses APP-3', async () => {
    // Closing APP-1's issue makes someone lock #3: only a route read right before APP-3 acts sees it.
    class LockingForge extends FakeForge {
      override async updateIssue(
        repo: RepoRef,
        number: number,
        change: Parameters<FakeForge['updateIssue']>[2],
      ): Promise<void> {
        await super.updateIssue(repo, number, change);
        if (number === 1 && change.state === 'closed')
          this.repo(REPO).issues.find((i) => i.number === 3)!.locked = true;
      }
    }
    const h = await makeDeliveryHarness({ config: QA_ONLY, forge: new LockingForge() });
    for (const i of h.forge.repo(REPO).issues) Object.assign(i, { open: true, stateReason: null });
    const run = await createDeploymentRun(h.fleet, { repo: REPO });
    if (!run.ok) throw new Error(run.refusal.message);
    const d = await dispatchStage(h.fleet, run.value.id, 'qa');
    expect(
      d.ok && [d.value.closeout!.closed, d.value.closeout!.refused.map((r) => [r.item, r.refusal.message])],
    ).toEqual([['APP-1', 'APP-2'], [['APP-3', 'APP-3 was accepted but could not be closed out: issue #3 is locked']]]);
  });

  it('DX04 a refused close-out closes by itself once the record blocking it settles, with no one asking', async () => {
    const h = await makeDeliveryHarness({ config: QA_ONLY });
    const run = await createDeploymentRun(h.fleet, { repo: REPO });
    if (!run.ok) throw new Error(run.refusal.message);
    const issue = h.forge.repo(REPO).issues.find((i) => i.number === 2)!;
    issue.locked = true;
    await dispatchStage(h.fleet, run.value.id, 'qa');
    expect((await h.store.closeouts.forRun(run.value.id)).find((c) => c.issueNumber === 2)!.state).toBe('refused');
    issue.locked = false;
    expect(await sweepCloseouts(h.fleet)).toBe(1);
    expect((await h.store.closeouts.forRun(run.value.id)).find((c) => c.issueNumber === 2)!.state).toBe('closed');
  });

  it('DX05 while a deployment-stage execution is live, verdict callbacks close nothing and notify nobody; its end settles the stage', async () => {
    const h = await makeDeliveryHarness({ config: QA_ONLY });
    await h.attach(1, 'smoke');
    await h.attach(2, 'smoke');
    const run = await createDeploymentRun(h.fleet, { repo: REPO });
    if (!run.ok) throw new Error(run.refusal.message);
    const id = run.value.id;
    const ex = await startExecution(h.fleet, { runId: id, stage: 'qa' }, { plan: 'smoke' }, null);
    expect(ex.ok && ex.value.kind).toBe('deployment-stage');
    const before = h.forge.comments.length;
    for (const c of ['health', 'flaky']) {
      await recordAs(h.fleet, id, 'qa', {
        plan: 'smoke',
        case: c,
        result: 'pass',
        source: 'yoke qa plan run',
        by: 'driver',
      });
      expect(await settleAfter(h.fleet, id, 'qa', `${id}-g1`)).toBeNull();
    }
    expect(h.forge.comments.length).toBe(before);
    expect(await h.store.closeouts.forRun(id)).toEqual([]);
    // A gate check meanwhile closes the members the execution does not deliver, and defers the rest.
    const d = await dispatchStage(h.fleet, id, 'qa');
    expect(d.ok && d.value.closeout).toEqual({
      closed: ['APP-3'],
      refused: [],
      skipped: [],
      deferred: ['APP-1', 'APP-2'],
    });
    expect(await endExecution(h.fleet, id, ex.ok ? ex.value.id : '')).toMatchObject({
      ok: true,
      value: { state: 'settled' },
    });
    expect(closeoutComments(h).map((c) => c.number)).toEqual([103, 101, 102]);
  });
});
