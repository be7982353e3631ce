import { labelOpensTrace } from '../fleet/notices/issue-trace.js';
import type { Probot } from 'probot';
import { handleComment } from '../commands/handle.js';
import { touchesOptInFile } from '../config/repo-config.js';
import type { FleetContext } from '../fleet/context.js';
import { handleQaLabel } from '../delivery/gate/labels.js';
import { reviewProtectionRequest } from '../delivery/deployments/protection-rule.js';
import {
  IssueCommentPayload,
  IssueLabeledPayload,
  PushPayload,
  InstallationPayload,
  RepoOfInstallationPayload,
  RepoNamePayload,
  CommentEditedPayload,
  ProtectionRulePayload,
} from './payloads.js';
import { errorStack } from '../kernel/error-text.js';

// Webhooks only deliver commands and kick an early pass: a missed one costs
// latency, never correctness, for the poll reads the same state again.
// Probot verifies each signature.

/** Events whose only meaning to yoke is "something changed; look again soon". */
export const KICK_EVENTS = [
  'issues.labeled',
  'issues.opened',
  'issues.reopened',
  'pull_request.opened',
  'pull_request.reopened',
  'pull_request.synchronize',
  'pull_request.labeled',
  'pull_request.ready_for_review',
  'pull_request_review.submitted',
  // LD04: GitHub's merge queue built a merge group (its lander is owed), destroyed one, or let a PR go.
  'merge_group.checks_requested',
  'merge_group.destroyed',
  'pull_request.dequeued',
  // SC10: the installation's repositories changed: its listing is read again before the pass it asks for.
  'installation.created',
  'installation_repositories.added',
  'installation_repositories.removed',
] as const;

/**
 * SC10: a webhook from a repository yoke has not seen (new to its installation, which GitHub may announce no other
 * way): the installation is listed again before the pass it asks for.
 */
async function listIfUnseen(fleet: FleetContext, payload: unknown): Promise<void> {
  const about = RepoOfInstallationPayload.safeParse(payload);
  if (about.success && !(await fleet.store.repos.find(about.data.repo))) await fleet.relist(about.data.installationId);
}

/** Each webhook yoke handles, answered through the fleet; `reap`: a run may have ended, so reap now rather than at the next reaper tick. */
export function registerWebhooks(
  app: Probot,
  fleet: FleetContext,
  reap: () => void,
  /** Told of each delivery this process is sent, and whether it is the first of its id (the metrics). */
  tally: { delivered(event: string, first: boolean): void } = { delivered: () => {} },
): void {
  const { store, forge, clock } = fleet;
  // GH06: a repeated delivery id changes nothing.
  const firstSight = async (context: { id: string; name: string }): Promise<boolean> => {
    const first = await store.deliveries.firstSight(context.id, context.name, clock.now());
    tally.delivered(context.name, first);
    return first;
  };

  app.on('issue_comment.created', async (context) => {
    if (!(await firstSight(context))) return;
    const parsed = IssueCommentPayload.safeParse(context.payload);
    if (!parsed.success) {
      fleet.log.warn(
        { delivery: context.id, problems: parsed.error.issues.map((i) => i.path.join('.')) },
        'comment webhook without the fields yoke reads; ignored',
      );
      return;
    }
    const { repo, comment } = parsed.data;
    await listIfUnseen(fleet, context.payload);
    if (!(await store.repos.get(repo.fullName)))
      await store.repos.ensure(repo.fullName, repo.installationId, clock.now());
    await handleComment(fleet, { repo, comment, via: 'webhook' });
  });
  // An edited comment is never a command (TR05), but a person's edit of a marker or a comment is something to look at now.
  app.on('issue_comment.edited', async (context) => {
    if (!(await firstSight(context))) return;
    const edited = CommentEditedPayload.safeParse(context.payload);
    if (edited.success && !edited.data.byBot) fleet.wake(edited.data.repo);
  });
  app.on([...KICK_EVENTS], async (context) => {
    if (!(await firstSight(context))) return;
    await listIfUnseen(fleet, context.payload);
    if (context.name === 'issues') {
      const labeled = IssueLabeledPayload.safeParse(context.payload);
      if (labeled.success) {
        await handleQaLabel(fleet, labeled.data).catch((err) =>
          fleet.log.warn({ delivery: context.id, err: errorStack(err) }, 'could not handle a qa label'),
        );
        await labelOpensTrace(fleet, labeled.data).catch((err) =>
          fleet.log.warn({ delivery: context.id, err: errorStack(err) }, "could not open the issue's trace"),
        );
      }
    }
    if (context.name === 'installation' || context.name === 'installation_repositories') {
      const installation = InstallationPayload.safeParse(context.payload);
      if (installation.success) await fleet.relist(installation.data);
      return fleet.kick();
    }
    // SC02: the repository is active from now, so the pass this asks for probes it.
    const repo = RepoNamePayload.safeParse(context.payload);
    // A review leaves the issue listing the probe reads unchanged within its second: read the repository afresh (TR14's approvals).
    if (repo.success && context.name === 'pull_request_review') forge.invalidate(repo.data);
    if (repo.success) fleet.wake(repo.data);
    else fleet.kick();
  });
  app.on('push', async (context) => {
    if (!(await firstSight(context))) return;
    await listIfUnseen(fleet, context.payload);
    const parsed = PushPayload.safeParse(context.payload);
    if (!parsed.success || !parsed.data.toDefaultBranch || !touchesOptInFile(parsed.data.commits)) return;
    forge.invalidate(parsed.data.repo);
    fleet.wake(parsed.data.repo);
  });
  // DP03, DP04: a job waits on an environment with yoke's rule. Verified (Probot), once per delivery id (GH06), answered only for a run of the event's own repository.
  app.on('deployment_protection_rule.requested', async (context) => {
    if (await firstSight(context)) await onProtectionRequest(fleet, context);
  });
  app.on('workflow_run.completed', async (context) => {
    if (await firstSight(context)) reap();
  });
}

/** DP03, DP04: a protection rule request, parsed, and answered only for a workflow run of its own repository. */
async function onProtectionRequest(fleet: FleetContext, context: { id: string; payload: unknown }): Promise<void> {
  const { store, clock } = fleet;
  const parsed = ProtectionRulePayload.safeParse(context.payload);
  if (!parsed.success) {
    fleet.log.warn(
      { delivery: context.id, problems: parsed.error.issues.map((i) => i.path.join('.')) },
      'protection rule request without the fields yoke reads; ignored',
    );
    return;
  }
  const { workflowRunId, callbackUrl, ...request } = parsed.data;
  if (workflowRunId === null) {
    fleet.log.warn(
      { delivery: context.id, repo: request.repo.fullName, callbackUrl },
      'protection rule request whose callback is not a workflow run of its own repository; ignored',
    );
    return;
  }
  if (!(await store.repos.get(request.repo.fullName)))
    await store.repos.ensure(request.repo.fullName, request.repo.installationId, clock.now());
  await reviewProtectionRequest(fleet, { ...request, workflowRunId });
}
