import { describe, expect, it } from 'vitest';
import { createDeploymentRun, getDeploymentRun, removeMember } from '../../../src/delivery/runs/deployment-runs.js';
import { reportDeployStage } from '../../../src/delivery/deployments/deploy-stage.js';
import { DELIVERY, REPO, makeDeliveryHarness, actorOf } from '../../helpers/delivery.js';

describe('deployment runs', () => {
  it('default members are the items whose claim PR merged at or before the commit and whose delivery is owed; a tracking issue shows the run', async () => {
    const h = await makeDeliveryHarness();
    const at = h.merged.get(2)!; // items 1 and 2 merged at or before; 3 after
    const r = await createDeploymentRun(h.fleet, { repo: REPO, commit: at, creator: 'maint' });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.members.map((m) => [m.item, m.pr, m.delivery])).toEqual([
      ['APP-1', 101, 'owed'],
      ['APP-2', 102, 'owed'],
    ]);
    expect([r.value.commit, r.value.status, r.value.currentStage, r.value.creator]).toEqual([
      at,
      'active',
      'staging',
      'maint',
    ]);
    expect(r.value.next).toEqual([`yoke deploy stage run ${r.value.id} staging`]);
    // Hand-merged claims are found, recorded owed and labelled (DESIGN §5: owed from merge to close-out).
    expect((await h.store.deliveryItems.listOwed(REPO)).map((i) => i.issueNumber)).toEqual([1, 2, 3]);
    expect(
      h.forge
        .repo(REPO)
        .issues.filter((i) => i.labels.includes('yoke:delivery-owed'))
        .map((i) => i.number),
    ).toEqual([1, 2, 3]);
    const [tracking] = h.forge.createdIssues;
    expect(tracking).toMatchObject({
      repo: REPO,
      title: `Deployment run ${r.value.id}: ${REPO} at ${at}`,
      labels: ['yoke:deploy'],
    });
    expect(tracking!.body).toContain('| APP-1 (#1) | #101 | — | owed |');
    expect(r.value.trackingIssue).toBe(tracking!.number);
  });

  it('--items takes only the items named, and refuses one that cannot join with why and what to do', async () => {
    const h = await makeDeliveryHarness();
    const at = h.merged.get(2)!;
    const some = await createDeploymentRun(h.fleet, { repo: REPO, commit: at, items: ['APP-2'] });
    expect(some.ok && some.value.members.map((m) => m.item)).toEqual(['APP-2']);
    const h2 = await makeDeliveryHarness();
    const late = await createDeploymentRun(h2.fleet, { repo: REPO, commit: h2.merged.get(2)!, items: ['APP-3'] });
    expect(late).toEqual({
      ok: false,
      refusal: {
        code: 'deployment_item_refused',
        status: 409,
        message: `APP-3 cannot join a deployment run of ${REPO}: its claim PR #103 merged after ${h2.merged.get(2)!.slice(0, 12)}`,
        recovery:
          "Leave it out of --items; an item joins once its claim PR merged at or before the run's commit and its delivery is owed.",
      },
    });
    expect((await createDeploymentRun(h2.fleet, { repo: REPO, items: ['APP-9'] })).ok || 'refused').toBe('refused');
    const bad = await createDeploymentRun(h2.fleet, { repo: REPO, items: ['WEB-1'] });
    expect(!bad.ok && bad.refusal.message + ' ' + bad.refusal.recovery).toBe(
      '"WEB-1" is not an item. Name an item as PREFIX-N with the repository\'s prefix, e.g. APP-12.',
    );
    expect(await h2.store.deploymentRuns.list()).toEqual([]);
  });

  it('refuses without a delivery section, with a bad one, at an unknown commit, and beside an active run', async () => {
    const none = await makeDeliveryHarness({ config: { delivery: undefined } });
    expect(await createDeploymentRun(none.fleet, { repo: REPO })).toMatchObject({
      ok: false,
      refusal: { code: 'delivery_not_configured' },
    });
    const bad = await makeDeliveryHarness({ config: { delivery: { stages: [] } } });
    expect(await createDeploymentRun(bad.fleet, { repo: REPO })).toMatchObject({
      ok: false,
      refusal: { code: 'qa_configuration_refused', recovery: expect.stringContaining('`delivery.stages`') },
    });
    const h = await makeDeliveryHarness();
    expect(await createDeploymentRun(h.fleet, { repo: REPO, commit: 'deadbeef' })).toMatchObject({
      ok: false,
      refusal: { code: 'deployment_commit_unknown' },
    });
    const first = await createDeploymentRun(h.fleet, { repo: REPO });
    const second = await createDeploymentRun(h.fleet, { repo: REPO });
    expect(second).toMatchObject({
      ok: false,
      refusal: {
        code: 'deployment_run_active',
        message: `${REPO} already has an active deployment run, ${first.ok && first.value.id}.`,
      },
    });
    expect(await h.store.deploymentRuns.list()).toHaveLength(1);
  });

  it('TR29 a release branch the opt-in file names pins a run only while GitHub protects it; a protected branch it does not name never does', async () => {
    const h = await makeDeliveryHarness({ config: { delivery: { ...DELIVERY, release_branches: ['release/1.x'] } } });
    // Anyone who can push to an unprotected branch could make its plans pass everything.
    const weak = h.forge.branch(REPO, 'release/1.x', {
      protected: false,
      files: { '.github/yoke/qa/smoke.yml': "name: smoke\ncases:\n  - {id: health, title: Health, run: 'true'}" },
    });
    const other = h.forge.branch(REPO, 'feature', { protected: true });
    const refused = await createDeploymentRun(h.fleet, { repo: REPO, commit: weak });
    expect(refused).toEqual({
      ok: false,
      refusal: expect.objectContaining({
        code: 'deployment_branch_unprotected',
        message: `${weak.slice(0, 12)} is on ${REPO}'s release branch release/1.x, but GitHub does not protect that branch: whoever can push to it could rewrite the QA plans a deployment run reads at its pinned commit.`,
        recovery: `Protect release/1.x on GitHub (a branch protection rule or a ruleset that restricts who may push), then run \`yoke deployment-runs create ${REPO} --commit ${weak.slice(0, 12)}\` again; or deliver a commit of the default branch.`,
      }),
    });
    expect(await createDeploymentRun(h.fleet, { repo: REPO, commit: other })).toMatchObject({
      ok: false,
      refusal: { code: 'deployment_commit_off_branch' },
    });
    expect(await h.store.deploymentRuns.list()).toHaveLength(0);
    // Protected, the release branch's commit pins a run.
    h.forge.repo(REPO).branches['release/1.x']!.protected = true;
    const r = await createDeploymentRun(h.fleet, { repo: REPO, commit: weak });
    expect(r.ok ? r.value.commit : r.refusal.message).toBe(weak);
  });

  it('QA12 a rework run takes over the failed run only on a later commit; the old run is superseded and its open groups close', async () => {
    const h = await makeDeliveryHarness({ config: { delivery: { stages: [{ name: 'qa', kind: 'qa' }] } } });
    await h.attach(1, 'smoke');
    await h.attach(2, 'smoke');
    const first = await createDeploymentRun(h.fleet, { repo: REPO, commit: h.merged.get(3)! });
    if (!first.ok) throw new Error(first.refusal.message);
    expect(
      await createDeploymentRun(h.fleet, { repo: REPO, commit: h.merged.get(3)!, supersedes: first.value.id }),
    ).toMatchObject({ ok: false, refusal: { code: 'deployment_supersedes_refused' } });
    const fix = h.forge.commit(REPO, { 'src/fix.ts': 'fixed' });
    const rework = await createDeploymentRun(h.fleet, { repo: REPO, commit: fix, supersedes: first.value.id });
    expect(rework.ok && [rework.value.supersedes, rework.value.commit]).toEqual([first.value.id, fix]);
    expect((await h.store.deploymentRuns.get(first.value.id))!.status).toBe('superseded');
    expect((await h.store.qa.groups([first.value.id])).map((g) => [g.state, g.outcome])).toEqual([
      ['closed', 'superseded'],
    ]);
  });

  it('QA13 a removed member leaves the run and the groups it waited on; its delivery stays owed', async () => {
    const h = await makeDeliveryHarness({ config: { delivery: { stages: [{ name: 'qa', kind: 'qa' }] } } });
    await h.attach(1, 'smoke');
    await h.attach(2, 'smoke');
    const run = await createDeploymentRun(h.fleet, { repo: REPO });
    if (!run.ok) throw new Error(run.refusal.message);
    const removed = await removeMember(h.fleet, actorOf('maint'), run.value.id, {
      item: 'APP-2',
      reason: 'needs a code fix',
    });
    expect(removed.ok && removed.value.members.find((m) => m.item === 'APP-2')).toMatchObject({
      removed: { by: 'maint', reason: 'needs a code fix' },
      delivery: 'owed',
    });
    expect((await h.store.qa.groups([run.value.id]))[0]!.coveredItemIds).toEqual([1]);
    expect((await h.store.deliveryItems.get(REPO, 2))!.state).toBe('owed');
    expect(
      await removeMember(h.fleet, actorOf('maint'), run.value.id, { item: 'APP-2', reason: 'again' }),
    ).toMatchObject({
      ok: false,
      refusal: { code: 'deployment_item_unknown' },
    });
  });

  it('QA07 ownership freezes when the run enters its QA stage, after a deploy stage records its outcome and moves the run on', async () => {
    const h = await makeDeliveryHarness();
    await h.attach(1, 'checkout');
    const run = await createDeploymentRun(h.fleet, { repo: REPO });
    if (!run.ok) throw new Error(run.refusal.message);
    const id = run.value.id;
    expect(await reportDeployStage(h.fleet, id, 'staging-qa', { phase: 'start', by: 'op' })).toMatchObject({
      ok: false,
      refusal: { code: 'deployment_stage_not_current' },
    });
    const start = await reportDeployStage(h.fleet, id, 'staging', { phase: 'start', by: 'op' });
    expect(start.ok && start.value).toMatchObject({
      command: './deploy.sh staging',
      env: { YOKE_DEPLOYMENT_RUN_ID: id, YOKE_STAGE: 'staging', YOKE_COMMIT: run.value.commit },
    });
    const failed = await reportDeployStage(h.fleet, id, 'staging', {
      phase: 'end',
      outcome: 'failed',
      output: 'auth with ghs_abcdefghijklmnopqrstuvwx1234 failed\nboom',
      by: 'op',
    });
    expect(failed.ok && failed.value.nextStage).toBe('staging');
    // TR07: the output goes to the tracking issue; a token it printed does not.
    expect((await h.store.deploymentRuns.stage(id, 'staging'))?.detail).toBe('auth with [redacted] failed / boom');
    await reportDeployStage(h.fleet, id, 'staging', { phase: 'start', by: 'op' });
    const ok = await reportDeployStage(h.fleet, id, 'staging', {
      phase: 'end',
      outcome: 'succeeded',
      output: 'deployed',
      by: 'op',
    });
    expect(ok.ok && ok.value.nextStage).toBe('staging-qa');
    // Its answer lost, the driver reports the same end again: answered as the first time, nothing moves.
    const repeat = await reportDeployStage(h.fleet, id, 'staging', {
      phase: 'end',
      outcome: 'succeeded',
      output: 'deployed',
      by: 'op',
    });
    expect(repeat).toEqual(ok);
    expect((await h.store.deploymentRuns.get(id))!.currentStage).toBe(1);
    // A failure report for a stage already done is still refused: only a repeat of the recorded end is answered so.
    expect(
      await reportDeployStage(h.fleet, id, 'staging', { phase: 'end', outcome: 'failed', output: 'late', by: 'op' }),
    ).toMatchObject({ ok: false, refusal: { code: 'deployment_stage_not_current' } });
    expect(await h.store.deploymentRuns.stage(id, 'staging')).toMatchObject({ state: 'succeeded', attempts: 2 });
    expect((await h.store.qa.memberPlans(id, 'staging-qa')).map((p) => [p.issueNumber, p.planId, p.owner])).toEqual([
      [1, 'checkout', 'member'],
    ]);
    // QA07: a later attachment changes nothing frozen.
    await h.attach(2, 'checkout');
    const view = await getDeploymentRun(h.fleet, id);
    expect((await h.store.qa.memberPlans(id, 'staging-qa')).map((p) => [p.issueNumber, p.planId, p.owner])).toEqual([
      [1, 'checkout', 'member'],
    ]);
    expect(view.ok && view.value.members.map((m) => [m.item, m.stages])).toEqual([
      ['APP-1', { 'staging-qa': 'waiting' }],
      ['APP-2', { 'staging-qa': 'settled' }],
      ['APP-3', { 'staging-qa': 'settled' }],
    ]);
  });
});
