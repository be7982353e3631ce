import { describe, expect, it, vi } from 'vitest';
import { makeRefusal } from '../../../src/kernel/codes/table.js';
import { parseDeliverySettings } from '../../../src/config/delivery.js';
import { protectionComment } from '../../../src/delivery/messages.js';
import { buildFleetReport } from '../../../src/http/operator/report.js';
import { needsYou } from '../../../src/http/pages/needs-you.js';
import { reportDeployStage } from '../../../src/delivery/deployments/deploy-stage.js';
import { createDeploymentRun } from '../../../src/delivery/runs/deployment-runs.js';
import { dispatchStage } from '../../helpers/gate-check.js';
import {
  decideProtection,
  reviewProtectionRequest,
  sweepProtectionReviews,
  sweepWaitingRuns,
  type ProtectionRequest,
} from '../../../src/delivery/deployments/protection-rule.js';
import { DELIVERY, REPO, makeDeliveryHarness, type DeliveryHarness } from '../../helpers/delivery.js';

const request = (h: DeliveryHarness, over: Partial<ProtectionRequest> = {}): ProtectionRequest => ({
  repo: h.forge.repo(REPO).ref,
  environment: 'production',
  sha: null,
  workflowRunId: 900,
  sender: 'mallory',
  event: 'workflow_dispatch',
  ...over,
});

/** A deployment run's record at its commit, with staging-qa in the given state. */
const atCommit = (run: unknown, state: 'waiting' | 'settled' = 'settled') => ({
  run: run as never,
  stages: [
    { runId: 'dr-1', stage: 'staging-qa', state, attempts: 1, detail: null, refusal: null, updatedAt: 1 },
  ] as never,
  members: [],
});

/** TR29: staging-qa may settle with nothing to check, as these runs attach no plan. */
const EMPTY_OK = {
  delivery: { ...DELIVERY, stages: DELIVERY.stages.map((s) => (s.kind === 'qa' ? { ...s, allow_empty: true } : s)) },
};

/** A run whose staging is deployed and whose staging-qa settled (no plans attached, and the stage allows it: nothing to wait for). */
async function settledRun(h: DeliveryHarness): Promise<{ id: string; commit: string }> {
  const run = await createDeploymentRun(h.fleet, { repo: REPO });
  if (!run.ok) throw new Error(run.refusal.message);
  const id = run.value.id;
  await reportDeployStage(h.fleet, id, 'staging', { phase: 'start', by: 'op' });
  await reportDeployStage(h.fleet, id, 'staging', { phase: 'end', outcome: 'succeeded', output: '', by: 'op' });
  const d = await dispatchStage(h.fleet, id, 'staging-qa');
  expect(d.ok && d.value.state).toBe('settled');
  return { id, commit: run.value.commit };
}

describe("yoke's QA as an environment's deployment protection rule", () => {
  it('DP03 with no webhook, the sweep finds the runs waiting at yoke’s rule and answers each once; a wait on someone else’s rule is left alone', async () => {
    const h = await makeDeliveryHarness();
    h.forge.environments.set(`${REPO}:production`, { exists: true, ruleApps: ['yoke'] });
    h.forge.environments.set(`${REPO}:preview`, { exists: true, ruleApps: ['another-app'] });
    const waiting = (id: number, environments: string[]) =>
      h.forge.waitingRuns.push({
        repo: REPO,
        run: {
          id,
          status: 'waiting',
          conclusion: null,
          repositoryId: 99,
          event: 'workflow_dispatch',
          headSha: 'e'.repeat(40),
        },
        environments,
      });
    waiting(950, ['production']);
    waiting(951, ['preview']);
    // Run 952's request came by webhook and was answered then: the sweep does not answer it again.
    waiting(952, ['production']);
    await reviewProtectionRequest(h.fleet, request(h, { workflowRunId: 952, sha: 'e'.repeat(40) }));
    expect(await sweepWaitingRuns(h.fleet)).toBe(1);
    expect(await sweepWaitingRuns(h.fleet)).toBe(0);
    expect(h.forge.protectionAnswers.map((a) => [a.workflowRunId, a.answer.environment, a.answer.state])).toEqual([
      [952, 'production', 'rejected'],
      [950, 'production', 'rejected'],
    ]);
    // Decided as the webhook's request would be: the commit is the waiting run's head, which no deployment run pinned.
    expect((await h.store.stageDeployments.reviews(REPO)).map((r) => [r.workflowRunId, r.code, r.answer])).toEqual([
      [950, 'protection_no_run', 'answered'],
      [952, 'protection_no_run', 'answered'],
    ]);
  });

  it('DP03 a commit no run pinned, or whose QA has not settled, is rejected with the run, the wait and the command; once settled it is approved', async () => {
    const h = await makeDeliveryHarness({ config: EMPTY_OK });
    const unknown = 'a'.repeat(40);
    const none = await reviewProtectionRequest(h.fleet, request(h, { sha: unknown }));
    expect([none.decision, none.why.code, none.answered]).toEqual(['rejected', 'protection_no_run', true]);
    expect(h.forge.protectionAnswers[0]!.answer).toEqual({
      environment: 'production',
      state: 'rejected',
      comment: `yoke: No deployment run of acme/api is pinned at aaaaaaaaaaaa, so no staging-qa settled for it: production may not deploy it. To move it: Deliver that commit through yoke: \`yoke deployment-runs create acme/api --commit ${unknown}\`, then \`yoke watch deploy -- RUN-ID\`; or deploy a commit whose staging-qa settled.`,
    });
    // A hand-started production deploy while the run is still at staging.
    const run = await createDeploymentRun(h.fleet, { repo: REPO });
    if (!run.ok) throw new Error(run.refusal.message);
    const early = await reviewProtectionRequest(h.fleet, request(h, { sha: run.value.commit, workflowRunId: 901 }));
    expect([early.decision, early.why.code, early.run]).toEqual(['rejected', 'protection_not_settled', run.value.id]);
    expect(h.forge.protectionAnswers[1]!.answer.comment).toBe(
      `yoke: Deployment run ${run.value.id} has not settled staging-qa at ${run.value.commit.slice(0, 12)}, so production may not deploy it yet: the run is at staging. To move it: Run \`yoke watch deploy -- ${run.value.id}\`: once staging-qa settles, it deploys production itself.`,
    );
    await reportDeployStage(h.fleet, run.value.id, 'staging', { phase: 'start', by: 'op' });
    await reportDeployStage(h.fleet, run.value.id, 'staging', {
      phase: 'end',
      outcome: 'succeeded',
      output: '',
      by: 'op',
    });
    await dispatchStage(h.fleet, run.value.id, 'staging-qa');
    const settled = await reviewProtectionRequest(h.fleet, request(h, { sha: run.value.commit, workflowRunId: 902 }));
    expect([settled.decision, settled.why.code, settled.run]).toEqual(['approved', 'protection_settled', run.value.id]);
    expect(h.forge.protectionAnswers[2]!.answer).toEqual({
      environment: 'production',
      state: 'approved',
      comment: `yoke: Deployment run ${run.value.id} settled staging-qa at ${run.value.commit.slice(0, 12)}: production (stage production) may deploy it.`,
    });
    // Another commit is still not settled, whoever asks.
    expect(
      (await reviewProtectionRequest(h.fleet, request(h, { sha: 'b'.repeat(40), workflowRunId: 903 }))).decision,
    ).toBe('rejected');
    expect((await h.store.stageDeployments.reviews(REPO)).map((r) => [r.workflowRunId, r.decision, r.code])).toEqual([
      [900, 'rejected', 'protection_no_run'],
      [901, 'rejected', 'protection_not_settled'],
      [902, 'approved', 'protection_settled'],
      [903, 'rejected', 'protection_no_run'],
    ]);
  });

  it('DP03 a waiting QA stage is named by what it waits on and the command that moves it', async () => {
    const h = await makeDeliveryHarness();
    await h.attach(1, 'checkout');
    const run = await createDeploymentRun(h.fleet, { repo: REPO });
    if (!run.ok) throw new Error(run.refusal.message);
    await reportDeployStage(h.fleet, run.value.id, 'staging', { phase: 'start', by: 'op' });
    await reportDeployStage(h.fleet, run.value.id, 'staging', {
      phase: 'end',
      outcome: 'succeeded',
      output: '',
      by: 'op',
    });
    const d = await dispatchStage(h.fleet, run.value.id, 'staging-qa');
    expect(d.ok && d.value.state).toBe('waiting');
    const wait = d.ok ? d.value.waits[0]! : null;
    const v = await reviewProtectionRequest(h.fleet, request(h, { sha: run.value.commit }));
    expect(v.why).toMatchObject({ code: 'protection_not_settled' });
    expect(v.why.message).toContain(`: ${wait!.detail}.`);
    expect(v.why.recovery).toBe(
      `\`${wait!.command}\`, then \`yoke watch deploy -- ${run.value.id}\` deploys production once staging-qa settles.`,
    );
  });

  it('DP03 TR26 an environment with no QA before it is approved; one no stage names is rejected unless the opt-in file says to approve or leave it', async () => {
    const h = await makeDeliveryHarness();
    const staging = await reviewProtectionRequest(h.fleet, request(h, { environment: 'staging', sha: 'c'.repeat(40) }));
    expect([staging.decision, staging.why.code]).toEqual(['approved', 'protection_no_qa']);
    const preview = await reviewProtectionRequest(h.fleet, request(h, { environment: 'preview', workflowRunId: 910 }));
    expect([preview.decision, preview.why.code]).toEqual(['rejected', 'protection_unruled']);
    expect(protectionComment(preview.why)).toBe(
      "yoke: No deploy stage of acme/api deploys to preview: yoke rejects it (delivery.deployments.unruled_environments). To move it: Name preview as a stage's environment in `.github/yoke.yml` to gate it, set `delivery.deployments.unruled_environments` to approve or ignore, or take yoke's rule off the environment.",
    );
    // The environment lost its stage (or never had one): that reaches "Needs you" until its newest answer is another.
    const lines = async () =>
      needsYou(await buildFleetReport(h.fleet, null), h.clock.now()).filter((n) => n.what.includes('preview'));
    expect(await lines()).toEqual([
      {
        repo: REPO,
        what: 'No deploy stage of acme/api deploys to preview: yoke rejects its jobs (delivery.deployments.unruled_environments).',
        command:
          "Name preview as a stage's environment in `.github/yoke.yml` to gate it, set `delivery.deployments.unruled_environments` to approve or ignore, or take yoke's rule off the environment.",
      },
    ]);
    h.clock.advance(1000);
    await h.store.stageDeployments.recordReview({
      repo: REPO,
      workflowRunId: 911,
      environment: 'preview',
      sha: 'c'.repeat(40),
      decision: 'approved',
      code: 'protection_no_qa',
      deploymentRun: null,
      answer: 'answered',
      createdAt: h.clock.now(),
    });
    expect(await lines()).toEqual([]);
    const approving = await makeDeliveryHarness({
      config: { delivery: { ...DELIVERY, deployments: { unruled_environments: 'approve' } } },
    });
    expect(
      (await reviewProtectionRequest(approving.fleet, request(approving, { environment: 'preview' }))).decision,
    ).toBe('approved');
    const left = await makeDeliveryHarness({
      config: { delivery: { ...DELIVERY, deployments: { unruled_environments: 'ignore' } } },
    });
    const ignored = await reviewProtectionRequest(left.fleet, request(left, { environment: 'preview' }));
    expect([ignored.decision, ignored.answered]).toEqual(['ignored', false]);
    expect(left.forge.protectionAnswers).toEqual([]);
    expect(await left.store.stageDeployments.reviews(REPO)).toMatchObject([
      { decision: 'ignored', code: 'protection_unruled', answer: 'left' },
    ]);
  });

  it('TR26 GitHub compares environment names without case: a request for Production at a commit no run pinned is rejected, never taken for an unruled one', async () => {
    const h = await makeDeliveryHarness({
      config: { delivery: { ...DELIVERY, deployments: { unruled_environments: 'approve' } } },
    });
    const v = await reviewProtectionRequest(h.fleet, request(h, { environment: 'Production', sha: 'e'.repeat(40) }));
    expect([v.decision, v.why.code]).toEqual(['rejected', 'protection_no_run']);
  });

  it('TR26 the policy a run froze decides for its commit: QA taken out of the opt-in file since does not approve a commit whose frozen gate has not settled', () => {
    const frozen = parseDeliverySettings(REPO, DELIVERY);
    const now = parseDeliverySettings(REPO, {
      stages: [
        { name: 'staging', kind: 'deploy', command: 'true' },
        { name: 'production', kind: 'deploy', command: 'true' },
      ],
    });
    if (frozen.state !== 'valid' || now.state !== 'valid') throw new Error('bad fixture');
    const repo = { owner: 'acme', name: 'api', fullName: REPO, installationId: 1 };
    const sha = 'f'.repeat(40);
    const run = {
      id: 'dr-1',
      repo: REPO,
      commit: sha,
      settings: frozen.settings,
      currentStage: 1,
      status: 'active',
      lastWaits: null,
    } as never;
    const decide = (state: 'waiting' | 'settled') =>
      decideProtection({
        request: { repo, environment: 'production', sha, workflowRunId: 1, sender: null, event: 'workflow_dispatch' },
        settings: { ok: true, value: now.settings },
        runs: [atCommit(run, state)],
      });
    expect([decide('waiting').decision, decide('waiting').why.code]).toEqual(['rejected', 'protection_not_settled']);
    expect(decide('settled').decision).toBe('approved');
    // TR27: a run that failed or was superseded once settled, and approves nothing now.
    for (const status of ['failed', 'superseded']) {
      const over = decideProtection({
        request: { repo, environment: 'production', sha, workflowRunId: 3, sender: null, event: 'workflow_dispatch' },
        settings: { ok: true, value: now.settings },
        runs: [atCommit({ ...(run as object), status })],
      });
      expect([over.decision, over.why.message]).toEqual([
        'rejected',
        `Deployment run dr-1 at ffffffffffff is ${status}: a run that failed or was superseded approves nothing, so production may not deploy it.`,
      ]);
    }
    // Where no run froze a policy, today's decides: production has no QA before it now.
    const other = decideProtection({
      request: {
        repo,
        environment: 'production',
        sha: 'a'.repeat(40),
        workflowRunId: 2,
        sender: null,
        event: 'workflow_dispatch',
      },
      settings: { ok: true, value: now.settings },
      runs: [],
    });
    expect([other.decision, other.why.code]).toEqual(['approved', 'protection_no_qa']);
  });

  it('TR40 a job started by an event whose code may not be the commit it names (pull_request_target, workflow_run, an issue comment, none named) is rejected at a gated environment, even at a commit whose QA settled; push and workflow_dispatch pass', () => {
    const settings = parseDeliverySettings(REPO, DELIVERY);
    if (settings.state !== 'valid') throw new Error('bad fixture');
    const repo = { owner: 'acme', name: 'api', fullName: REPO, installationId: 1 };
    const sha = 'b'.repeat(40);
    const run = { id: 'dr-1', repo: REPO, commit: sha, settings: settings.settings, status: 'active' } as never;
    const decide = (event: string | null) =>
      decideProtection({
        request: { repo, environment: 'production', sha, workflowRunId: 7, sender: 'mallory', event },
        settings: { ok: true, value: settings.settings },
        runs: [atCommit(run)],
      });
    expect(decide('push').decision).toBe('approved');
    expect(decide('workflow_dispatch').decision).toBe('approved');
    for (const event of ['pull_request_target', 'workflow_run', 'issue_comment', 'repository_dispatch', null]) {
      const v = decide(event);
      expect([v.decision, v.why.code]).toEqual(['rejected', 'protection_event']);
    }
    expect(decide('pull_request_target').why.message).toBe(
      'A job started by pull_request_target asked to deploy to production of acme/api: yoke approves only a job started by push or workflow_dispatch, whose code is the commit it deploys (a job of another event may check out code QA never saw).',
    );
    // An environment yoke does not gate is no QA's to protect: the event does not matter there.
    const unruled = decideProtection({
      request: { repo, environment: 'preview', sha, workflowRunId: 8, sender: null, event: 'pull_request_target' },
      settings: { ok: true, value: settings.settings },
      runs: [],
    });
    expect(unruled.why.code).toBe('protection_unruled');
  });

  it('DP03 fails closed: delivery settings yoke cannot read, or a request that names no commit, are rejected', async () => {
    const h = await makeDeliveryHarness({ config: { delivery: { stages: [{ name: 'production', kind: 'deploy' }] } } });
    const v = await reviewProtectionRequest(h.fleet, request(h, { sha: 'c'.repeat(40) }));
    expect([v.decision, v.why.code]).toEqual(['rejected', 'protection_delivery_refused']);
    const ok = await makeDeliveryHarness();
    expect((await reviewProtectionRequest(ok.fleet, request(ok, { sha: null }))).why.code).toBe('protection_no_commit');
  });

  it('DP03 a member removed after its QA settled makes that commit unfit: rejected, naming who removed what', () => {
    const settings = parseDeliverySettings(REPO, DELIVERY);
    if (settings.state !== 'valid') throw new Error('bad fixture');
    const repo = { owner: 'acme', name: 'api', fullName: REPO, installationId: 1 };
    const sha = 'd'.repeat(40);
    const run = {
      id: 'dr-1',
      repo: REPO,
      commit: sha,
      settings: settings.settings,
      currentStage: 2,
      status: 'active',
      lastWaits: null,
    } as never;
    const stages = [
      {
        runId: 'dr-1',
        stage: 'staging-qa',
        state: 'settled' as const,
        attempts: 1,
        detail: null,
        refusal: null,
        updatedAt: 1_000,
      },
    ];
    const member = (removedAt: number | null) => ({
      runId: 'dr-1',
      issueNumber: 2,
      prNumber: 102,
      position: 1,
      removedAt,
      removedBy: removedAt ? 'maint' : null,
      removedReason: null,
    });
    const decide = (removedAt: number | null) =>
      decideProtection({
        request: { repo, environment: 'production', sha, workflowRunId: 1, sender: null, event: 'workflow_dispatch' },
        settings: { ok: true, value: settings.settings },
        runs: [{ run, stages, members: [member(removedAt)] }],
      });
    expect(decide(null).decision).toBe('approved');
    // Removed before it settled: the settlement already left it out.
    expect(decide(500).decision).toBe('approved');
    const after = decide(2_000);
    expect([after.decision, after.why.message]).toEqual([
      'rejected',
      '#2 left deployment run dr-1 (removed by maint) after staging-qa settled at dddddddddddd: what QA accepted is not what production would get.',
    ]);
  });

  it('DP04 a repeated request is harmless: GitHub refuses the second answer, and the decision stands', async () => {
    const h = await makeDeliveryHarness({ config: EMPTY_OK });
    const { commit } = await settledRun(h);
    const first = await reviewProtectionRequest(h.fleet, request(h, { sha: commit }));
    const again = await reviewProtectionRequest(h.fleet, request(h, { sha: commit }));
    expect([first.answered, again.answered, again.decision]).toEqual([true, false, 'approved']);
    expect(h.forge.protectionAnswers).toHaveLength(1);
  });

  it('renders an approval without a recovery, and a rejection with the command that moves it', () => {
    expect(
      protectionComment(
        makeRefusal('protection_no_qa', { repo: 'acme/api', environment: 'staging', stage: 'staging' }),
      ),
    ).toBe(
      "yoke: Stage staging of acme/api deploys to staging with no QA stage before it: yoke's rule has nothing to hold it for. To move it: Put a QA stage before it in `.github/yoke.yml` to gate it.",
    );
  });

  it('DP03 an answer GitHub could not take (a fault) is kept unsent; the sweep decides again on what the store says now, and sends it', async () => {
    const h = await makeDeliveryHarness({ config: EMPTY_OK });
    const run = await createDeploymentRun(h.fleet, { repo: REPO });
    if (!run.ok) throw new Error(run.refusal.message);
    // TR40: the waiting run, which the sweep reads again for the event that started it.
    for (const id of [920, 921])
      h.forge.workflowRuns.set(String(id), {
        id,
        status: 'waiting',
        conclusion: null,
        repositoryId: 1,
        event: 'workflow_dispatch',
      });
    const down = vi
      .spyOn(h.forge, 'reviewProtectionRule')
      .mockRejectedValueOnce(Object.assign(new Error('Service Unavailable'), { status: 503 }));
    const first = await reviewProtectionRequest(h.fleet, request(h, { sha: run.value.commit, workflowRunId: 920 }));
    expect([first.decision, first.answered]).toEqual(['rejected', false]);
    expect(await h.store.stageDeployments.reviews(REPO)).toMatchObject([
      { workflowRunId: 920, decision: 'rejected', answer: 'unsent' },
    ]);
    // Meanwhile staging-qa settles at that commit: the sweep's answer is the one true now.
    await reportDeployStage(h.fleet, run.value.id, 'staging', { phase: 'start', by: 'op' });
    await reportDeployStage(h.fleet, run.value.id, 'staging', {
      phase: 'end',
      outcome: 'succeeded',
      output: '',
      by: 'op',
    });
    await dispatchStage(h.fleet, run.value.id, 'staging-qa');
    expect(await sweepProtectionReviews(h.fleet)).toBe(1);
    expect(h.forge.protectionAnswers.map((a) => [a.workflowRunId, a.answer.state])).toEqual([[920, 'approved']]);
    expect(await h.store.stageDeployments.reviews(REPO)).toMatchObject([
      { workflowRunId: 920, decision: 'approved', answer: 'answered' },
    ]);
    expect(await sweepProtectionReviews(h.fleet)).toBe(0);
    expect(down).toHaveBeenCalledTimes(2);
    // The opt-in file unreadable for a moment (GitHub's 502): nothing is answered, the request is kept, and the sweep answers it.
    vi.spyOn(h.forge, 'readConfig').mockRejectedValueOnce(Object.assign(new Error('Bad Gateway'), { status: 502 }));
    const unread = await reviewProtectionRequest(h.fleet, request(h, { sha: run.value.commit, workflowRunId: 921 }));
    expect([unread.why.code, unread.answered, h.forge.protectionAnswers.length]).toEqual([
      'protection_read_failed',
      false,
      1,
    ]);
    expect(await sweepProtectionReviews(h.fleet)).toBe(1);
    expect(h.forge.protectionAnswers.map((a) => [a.workflowRunId, a.answer.state])).toEqual([
      [920, 'approved'],
      [921, 'approved'],
    ]);
  });
});
