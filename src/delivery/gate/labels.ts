import type { RepoRef } from '../../forge/types.js';
import { canWrite } from '../../kernel/permission.js';
import { commandReply, refusalText } from '../../kernel/reply.js';
import { attachPlan, QA_LABEL_PREFIX } from './attach.js';
import { deliveryRepoAt, type DeliveryContext } from '../context.js';
import { refOfState } from '../../fleet/repo-state.js';
import { errorStack } from '../../kernel/error-text.js';

// A `qa:<id-or-name>` label attaches a plan only when a writer added it, and
// the writer gets a reply. A non-writer's label makes yoke write nothing
// (TR05), as a non-writer's command does. yoke's own labels (it adds one for
// every command attachment) are displays, not attachments. The webhook is one
// way yoke sees a label; the poll is the other, so a lost delivery loses no QA.

export type LabelOutcome = 'ignored' | 'attached' | 'refused';

/** What an `issues.labeled` delivery says, as the webhook edge parsed it. */
export interface LabelEvent {
  repo: RepoRef;
  issueNumber: number;
  isPull: boolean;
  label: string;
  sender: string;
  senderIsBot: boolean;
}

type LabelCtx = DeliveryContext;

/** Acts on one qa: label added by `sender`: attaches (and replies) for a writer, writes nothing for anyone else. */
async function actOnLabel(
  ctx: LabelCtx,
  { repo, issue, label }: { repo: RepoRef; issue: number; label: string },
  sender: { login: string; isBot: boolean } | null,
): Promise<LabelOutcome> {
  if (!sender || sender.isBot) return 'ignored';
  const permission = await ctx.forge.getPermission(repo, sender.login);
  if (!canWrite(permission)) {
    ctx.log.info(
      { repo: repo.fullName, issue, sender: sender.login, permission },
      'qa label from a non-writer ignored',
    );
    return 'refused';
  }
  const result = await attachPlan(
    ctx,
    { repo, issue },
    { ref: label.slice(QA_LABEL_PREFIX.length), by: sender.login, source: 'label' },
  );
  await ctx.forge.createComment(
    repo,
    issue,
    commandReply(sender.login, result.ok ? result.value.message : refusalText(result.refusal)),
  );
  return result.ok ? 'attached' : 'refused';
}

/**
 * The `issues.labeled` webhook, marked so the poll leaves it. A label the
 * poll already attached is not answered twice; one it refused (a non-writer's)
 * is acted on again, for this event may be a writer adding it anew.
 */
export async function handleQaLabel(ctx: LabelCtx, e: LabelEvent): Promise<LabelOutcome> {
  if (!e.label.startsWith(QA_LABEL_PREFIX) || e.isPull || e.senderIsBot) return 'ignored';
  const cfg = await ctx.forge.readConfig(e.repo, { maxAgeMs: ctx.policy.configRefreshMs });
  if (cfg.state === 'absent') return 'ignored';
  if ((await ctx.store.qaLabels.outcome(e.repo.fullName, e.issueNumber, e.label)) === 'attached') return 'ignored';
  await ctx.store.qaLabels.mark(e.repo.fullName, e.issueNumber, e.label, ctx.clock.now());
  const outcome = await actOnLabel(
    ctx,
    { repo: e.repo, issue: e.issueNumber, label: e.label },
    { login: e.sender, isBot: false },
  );
  await ctx.store.qaLabels.setOutcome(e.repo.fullName, e.issueNumber, e.label, outcome);
  return outcome;
}

/**
 * The qa: labels of one issue that neither the webhook nor an earlier read
 * handled: each is marked first (so it is handled once), then acted on as
 * whoever its newest `labeled` event names.
 */
export async function reconcileIssueLabels(
  ctx: LabelCtx,
  repo: RepoRef,
  issue: number,
  labels: readonly string[],
): Promise<{ label: string; outcome: LabelOutcome }[]> {
  const attached = new Set(
    (await ctx.store.qa.attachments(repo.fullName, issue)).map((a) => `${QA_LABEL_PREFIX}${a.planId}`),
  );
  const out: { label: string; outcome: LabelOutcome }[] = [];
  for (const label of labels.filter((l) => l.startsWith(QA_LABEL_PREFIX) && !attached.has(l))) {
    if (
      (await ctx.store.qaLabels.marked(repo.fullName, issue, label)) ||
      !(await ctx.store.qaLabels.mark(repo.fullName, issue, label, ctx.clock.now()))
    )
      continue;
    const outcome = await actOnLabel(ctx, { repo, issue, label }, await ctx.forge.labelledBy(repo, issue, label));
    await ctx.store.qaLabels.setOutcome(repo.fullName, issue, label, outcome);
    out.push({ label, outcome });
  }
  return out;
}

/**
 * The poll's side: the issues of a delivery repository updated since it last
 * read, each one's qa: labels reconciled. A label younger than the grace is
 * left to its webhook, and read on the next round.
 */
export async function reconcileQaLabels(
  ctx: LabelCtx,
  repo: RepoRef,
): Promise<{ issue: number; label: string; outcome: LabelOutcome }[]> {
  const now = ctx.clock.now();
  const settledBefore = now - ctx.policy.labelGraceMs;
  const cursor = await ctx.store.qaLabels.cursor(repo.fullName);
  // GitHub's `since` has one-second precision: read a second back, and let the marks drop what was handled.
  const since = cursor ? cursor.readUntil - 1000 : now - ctx.policy.labelLookbackMs;
  const out: { issue: number; label: string; outcome: LabelOutcome }[] = [];
  let readUntil = cursor?.readUntil ?? since;
  for (const i of await ctx.forge.listIssuesUpdatedSince(repo, since)) {
    if (i.updatedAt > settledBefore) break;
    for (const r of await reconcileIssueLabels(ctx, repo, i.number, i.labels)) out.push({ issue: i.number, ...r });
    readUntil = Math.max(readUntil, i.updatedAt);
  }
  await ctx.store.qaLabels.setCursor(repo.fullName, readUntil, now);
  return out;
}

/** Every repository with a delivery section, each read at most once per `labelSyncMs`. */
export async function syncQaLabels(ctx: LabelCtx): Promise<number> {
  let handled = 0;
  // SC01: the repositories and their cursors in two queries, not a few per repository at every sweep.
  const cursors = await ctx.store.qaLabels.cursors();
  for (const r of await ctx.store.repos.list()) {
    const cursor = cursors.get(r.fullName);
    if (cursor && ctx.clock.now() - cursor.readAt < ctx.policy.labelSyncMs) continue;
    const repo = refOfState(r);
    if (!repo || !(await deliveryRepoAt(ctx, repo)).ok) continue;
    try {
      handled += (await reconcileQaLabels(ctx, repo)).length;
    } catch (err) {
      ctx.log.warn(
        { repo: r.fullName, err: errorStack(err) },
        'could not reconcile qa labels; the next round tries again',
      );
    }
  }
  return handled;
}
