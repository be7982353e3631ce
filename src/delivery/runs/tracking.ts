import { createHash } from 'node:crypto';
import { trackingIssueBody, trackingIssueTitle } from '../messages.js';
import type { DeliveryContext, DeliveryRepo } from '../context.js';
import { viewDeploymentRun, type KnownEvaluation } from './view.js';
import { errorStack } from '../../kernel/error-text.js';

// Each deployment run has a tracking issue (label yoke:deploy) whose body
// yoke keeps current. The body is written only when it changes; a failed
// write is retried by the next change or sync.

export const DEPLOY_LABEL = 'yoke:deploy';

/** `known`: a stage's evaluation the caller has just made (a gate check's), so the view does not gather it again. */
export async function syncTrackingIssue(
  ctx: DeliveryContext,
  dr: DeliveryRepo,
  runId: string,
  known?: KnownEvaluation,
): Promise<void> {
  const run = await ctx.store.deploymentRuns.get(runId);
  if (!run) return;
  try {
    const view = await viewDeploymentRun(ctx, dr, run, known);
    const body = trackingIssueBody(view);
    const hash = createHash('sha256').update(body).digest('hex');
    if (run.trackingIssue === null) {
      const number = await ctx.forge.createIssue(dr.repo, {
        title: trackingIssueTitle(view),
        body,
        labels: [DEPLOY_LABEL],
      });
      await ctx.store.deploymentRuns.setTracking(run.id, number, hash);
    } else if (run.trackingHash !== hash) {
      await ctx.forge.updateIssue(dr.repo, run.trackingIssue, { body });
      await ctx.store.deploymentRuns.setTracking(run.id, null, hash);
    }
  } catch (err) {
    ctx.log.warn(
      { run: runId, err: errorStack(err) },
      'could not update the tracking issue; the next change tries again',
    );
  }
}
