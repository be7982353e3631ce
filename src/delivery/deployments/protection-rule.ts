import { ok, refused, type Result } from '../../kernel/result.js';
import { makeRefusal, type Refusal } from '../../kernel/codes/table.js';
import { deploymentSettingsOf, deploysTo, type DeliverySettings } from '../../config/delivery.js';
import type { RepoRef } from '../../forge/types.js';
import { protectionComment } from '../messages.js';
import type { DeploymentRun, Member, StageRecord } from '../../store/delivery/deployment-runs.js';
import type { ProtectionAnswerState, ProtectionDecision } from '../../store/delivery/stage-deployments.js';
import { repoRefOf } from '../../fleet/repo-state.js';
import { deliveryRepo, type DeliveryContext } from '../context.js';
import { errorStack, errorText } from '../../kernel/error-text.js';

// DP03: yoke as a custom deployment protection rule. A job that targets an
// environment with yoke's rule waits until yoke answers: approved only when
// a deployment run of the repository settled every QA stage before that
// environment's stage at the very commit being deployed, and nothing that
// QA accepted was removed since. Whoever started the job (yoke's driver, or a
// person by hand) meets the same rule. Reads, a pure decision, then writes.

/** What GitHub asks, as parsed where the webhook enters. */
export interface ProtectionRequest {
  repo: RepoRef;
  environment: string;
  /** The commit the job deploys (its deployment's sha); null when the event names none. */
  sha: string | null;
  /** The workflow run waiting, from the callback URL of this repository. */
  workflowRunId: number;
  sender: string | null;
  /** The event that started the waiting workflow run (`push`, `workflow_dispatch`, …); null when GitHub named none. */
  event: string | null;
}

/**
 * TR40: the events whose jobs deploy the very commit GitHub names: a push's, or one a person or yoke's driver
 * dispatched. A job started by another event (a `pull_request_target` or `workflow_run` job, an issue comment) runs
 * the default branch's workflow at a commit QA may have settled, yet can check out and deploy anything.
 */
export const DEPLOY_EVENTS: readonly string[] = ['push', 'workflow_dispatch'];

export interface RunAtCommit {
  run: DeploymentRun;
  stages: StageRecord[];
  members: Member[];
}

/** Everything the decision reads: the delivery settings (or why they are refused), and the runs pinned at the commit. */
export interface ProtectionSnapshot {
  request: ProtectionRequest;
  settings: Result<DeliverySettings>;
  runs: RunAtCommit[];
}

export interface ProtectionVerdict {
  decision: ProtectionDecision;
  /** Why, as a code of the one table: its message and recovery are the comment GitHub shows on the workflow run. */
  why: Refusal;
  /** The deployment run that decided it, if one did. */
  run: string | null;
}

const verdict = (
  decision: ProtectionDecision,
  run: string | null,
  ...why: Parameters<typeof makeRefusal>
): ProtectionVerdict => ({ decision, run, why: makeRefusal(...why) });

/** DP03, pure: the answer to one protection-rule request. */
export function decideProtection(s: ProtectionSnapshot): ProtectionVerdict {
  const { repo, environment, sha } = s.request;
  const r = repo.fullName;
  // A gate that cannot read its rules fails closed.
  if (!s.settings.ok)
    return verdict('rejected', null, 'protection_delivery_refused', {
      repo: r,
      environment,
      detail: s.settings.refusal.message,
      fix: s.settings.refusal.recovery,
    });
  // The policy a run froze decides for its commit; what the default branch says now decides only where no run froze one.
  const atCommit = sha
    ? s.runs.filter(
        (x) => x.run.commit === sha && x.run.repo === r && gatesBefore(x.run.settings, environment) !== null,
      )
    : [];
  const now = gatesBefore(s.settings.value, environment);
  if (!now && atCommit.length === 0) {
    const answer = deploymentSettingsOf(s.settings.value).unruled_environments;
    const decision = answer === 'approve' ? 'approved' : answer === 'ignore' ? 'ignored' : 'rejected';
    return verdict(decision, null, 'protection_unruled', {
      repo: r,
      environment,
      answer: { approved: 'approves', ignored: 'leaves it to others', rejected: 'rejects it' }[decision],
    });
  }
  if (now && now.gates.length === 0 && atCommit.length === 0)
    return verdict('approved', null, 'protection_no_qa', { repo: r, environment, stage: now.stage });
  // A gated environment: only a job whose code is the commit it names may pass on that commit's QA.
  if (!DEPLOY_EVENTS.includes(s.request.event ?? ''))
    return verdict('rejected', null, 'protection_event', {
      repo: r,
      environment,
      event: s.request.event ?? 'an event GitHub did not name',
      events: DEPLOY_EVENTS.join(' or '),
    });
  if (!sha) return verdict('rejected', null, 'protection_no_commit', { repo: r, environment });
  const short = sha.slice(0, 12);
  if (atCommit.length === 0)
    return verdict('rejected', null, 'protection_no_run', {
      repo: r,
      environment,
      commit: short,
      sha,
      gate: now!.gates[now!.gates.length - 1]!,
    });
  let blocked: ProtectionVerdict | null = null;
  for (const x of atCommit) {
    // TR27: only a run still in force speaks for its commit; one that failed or was superseded once settled, and says nothing now.
    if (x.run.status === 'failed' || x.run.status === 'superseded') {
      blocked ??= verdict('rejected', x.run.id, 'protection_run_over', {
        run: x.run.id,
        status: x.run.status,
        repo: r,
        environment,
        commit: short,
        sha,
      });
      continue;
    }
    const { stage, gates } = gatesBefore(x.run.settings, environment)!;
    if (gates.length === 0) return verdict('approved', x.run.id, 'protection_no_qa', { repo: r, environment, stage });
    const unsettled = gates.find((g) => x.stages.find((st) => st.stage === g)?.state !== 'settled');
    if (unsettled) {
      blocked ??= notSettled(x, unsettled, environment, short);
      continue;
    }
    // Nothing the gates accepted may have left the run since the last of them settled.
    const settledAt = Math.max(...gates.map((g) => x.stages.find((st) => st.stage === g)!.updatedAt));
    const removed = x.members.find((m) => m.removedAt !== null && m.removedAt > settledAt);
    if (removed) {
      blocked = verdict('rejected', x.run.id, 'protection_member_removed', {
        run: x.run.id,
        environment,
        commit: short,
        issue: removed.issueNumber,
        by: removed.removedBy ?? 'someone',
        gate: gates[gates.length - 1]!,
        repo: r,
      });
      continue;
    }
    return verdict('approved', x.run.id, 'protection_settled', {
      run: x.run.id,
      environment,
      commit: short,
      gates: gates.join(', '),
      stage,
    });
  }
  return blocked!;
}

/** The stage that deploys to an environment and the QA stages before it, under a policy; null when no stage does. */
function gatesBefore(settings: DeliverySettings, environment: string): { stage: string; gates: string[] } | null {
  const index = settings.stages.findIndex((x) => deploysTo(x, environment));
  if (index < 0) return null;
  return {
    stage: settings.stages[index]!.name,
    gates: settings.stages
      .slice(0, index)
      .filter((x) => x.kind === 'qa')
      .map((x) => x.name),
  };
}

function notSettled(x: RunAtCommit, gate: string, environment: string, commit: string): ProtectionVerdict {
  const at = x.run.settings.stages[x.run.currentStage]?.name ?? 'its end';
  const waits = x.run.lastWaits?.stage === gate ? x.run.lastWaits.waits : [];
  const wait = waits[0]
    ? waits[0].detail
    : x.run.status === 'active'
      ? `the run is at ${at}`
      : `the run is ${x.run.status}`;
  const command = waits[0]?.command ?? `yoke watch deploy -- ${x.run.id}`;
  return verdict('rejected', x.run.id, 'protection_not_settled', {
    run: x.run.id,
    environment,
    commit,
    gate,
    wait,
    command,
  });
}

/** The runs of a repository pinned at a commit, with their stages and members: what decideProtection reads. */
export async function readRunsAt(ctx: DeliveryContext, repo: string, sha: string | null): Promise<RunAtCommit[]> {
  if (!sha) return [];
  const runs = await ctx.store.deploymentRuns.atCommit(repo, sha);
  return Promise.all(
    runs.map(async (run) => ({
      run,
      stages: await ctx.store.deploymentRuns.stages(run.id),
      members: await ctx.store.deploymentRuns.members(run.id),
    })),
  );
}

/** DP03: reads, decides, answers GitHub (unless the answer is to leave it), and records what it answered and why. */
export async function reviewProtectionRequest(
  ctx: DeliveryContext,
  request: ProtectionRequest,
): Promise<ProtectionVerdict & { answered: boolean }> {
  let v: ProtectionVerdict;
  let answer: ProtectionAnswerState = 'left';
  try {
    const dr = await deliveryRepo(ctx, request.repo.fullName);
    const settings = dr.ok ? ok(dr.value.settings) : refused<DeliverySettings>(dr.refusal);
    v = decideProtection({ request, settings, runs: await readRunsAt(ctx, request.repo.fullName, request.sha) });
  } catch (err) {
    // The opt-in file or the store could not be read: nothing is answered now, and the request is kept for the sweep.
    v = verdict('rejected', null, 'protection_read_failed', {
      repo: request.repo.fullName,
      environment: request.environment,
      detail: errorText(err),
    });
    answer = 'unsent';
    ctx.log.warn(
      { repo: request.repo.fullName, workflowRun: request.workflowRunId, err: errorStack(err) },
      'could not read what a protection rule request needs; the sweep decides it again',
    );
  }
  if (v.decision !== 'ignored' && answer !== 'unsent') {
    try {
      const res = await ctx.forge.reviewProtectionRule(request.repo, request.workflowRunId, {
        environment: request.environment,
        state: v.decision,
        comment: protectionComment(v.why),
      });
      answer = res.ok ? 'answered' : 'refused';
      // A repeated request GitHub already has an answer for is refused by GitHub, and harmless.
      if (!res.ok)
        ctx.log.info(
          { repo: request.repo.fullName, workflowRun: request.workflowRunId, status: res.status, detail: res.message },
          'GitHub did not take the protection rule answer; it has one already',
        );
    } catch (err) {
      // GitHub could not be reached: the job waits on, and the sweep decides and sends again.
      answer = 'unsent';
      ctx.log.warn(
        { repo: request.repo.fullName, workflowRun: request.workflowRunId, err: errorStack(err) },
        'could not answer a protection rule request; the sweep sends it again',
      );
    }
  }
  await ctx.store.stageDeployments.recordReview({
    repo: request.repo.fullName,
    workflowRunId: request.workflowRunId,
    environment: request.environment,
    sha: request.sha ?? '',
    decision: v.decision,
    code: v.why.code,
    deploymentRun: v.run,
    answer,
    createdAt: ctx.clock.now(),
  });
  ctx.log.info(
    {
      repo: request.repo.fullName,
      environment: request.environment,
      sha: request.sha,
      workflowRun: request.workflowRunId,
      sender: request.sender,
      event: request.event,
      decision: v.decision,
      code: v.why.code,
      run: v.run,
    },
    `protection rule: ${v.decision}`,
  );
  return { ...v, answered: answer === 'answered' };
}

/** DP03: requests whose answer GitHub could not be sent are decided again, on what the store says now, and sent. */
export async function sweepProtectionReviews(ctx: DeliveryContext): Promise<number> {
  let sent = 0;
  for (const r of await ctx.store.stageDeployments.unsentReviews()) {
    const repo = await repoRefOf(ctx.store, r.repo);
    if (!repo) continue;
    // The event that started it is GitHub's to say again: a run it cannot read is decided as one of an event it did not name.
    const run = await ctx.forge.getWorkflowRun(repo, r.workflowRunId).catch(() => null);
    const again = await reviewProtectionRequest(ctx, {
      repo,
      environment: r.environment,
      sha: r.sha || null,
      workflowRunId: r.workflowRunId,
      sender: null,
      event: run?.event ?? null,
    });
    if (again.answered) sent++;
  }
  return sent;
}

/**
 * DP03 without webhooks: the workflow runs of each delivery repository that
 * wait at a protection rule (`status=waiting`) and the environments each
 * waits on. Each one whose environment has yoke's rule and that yoke has not
 * answered yet (by webhook or an earlier sweep) is decided and answered, once.
 */
export async function sweepWaitingRuns(ctx: DeliveryContext): Promise<number> {
  const slug = (await ctx.forge.botLogin()).replace(/\[bot\]$/, '');
  let answered = 0;
  for (const r of await ctx.store.repos.list()) {
    const repo = await repoRefOf(ctx.store, r.fullName);
    const dr = repo ? await deliveryRepo(ctx, r.fullName) : null;
    if (!repo || !dr?.ok) continue;
    try {
      const waiting = await ctx.forge.listWaitingRuns(repo);
      if (waiting.length === 0) continue;
      const done = await ctx.store.stageDeployments.reviews(repo.fullName);
      const rules = new Map<string, boolean>();
      for (const run of waiting) {
        for (const environment of await ctx.forge.listPendingDeployments(repo, run.id)) {
          if (done.some((d) => d.workflowRunId === run.id && d.environment === environment && d.answer !== 'unsent'))
            continue;
          if (!rules.has(environment)) {
            const env = await ctx.forge.readEnvironmentRules(repo, environment);
            rules.set(environment, env.exists && env.ruleApps.includes(slug));
          }
          // Waiting on someone else's rule (required reviewers, another app): not yoke's to answer.
          if (!rules.get(environment)) continue;
          const v = await reviewProtectionRequest(ctx, {
            repo,
            environment,
            sha: run.headSha ?? null,
            workflowRunId: run.id,
            sender: null,
            event: run.event,
          });
          if (v.answered) answered++;
        }
      }
    } catch (err) {
      ctx.log.warn(
        { repo: r.fullName, err: errorStack(err) },
        'could not read the workflow runs waiting at protection rules; the next sweep reads again',
      );
    }
  }
  return answered;
}
