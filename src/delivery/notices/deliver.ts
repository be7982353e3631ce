import { createHash } from 'node:crypto';
import { qaNotice, qaNoticeResolved, qaNoticeWithdrawn } from '../messages.js';
import type { DeliveryContext, StageAt } from '../context.js';
import type { StageEvaluation } from '../gate/evaluate.js';
import type { Wait } from '../gate/waits.js';
import type { DeploymentRun } from '../../store/delivery/deployment-runs.js';
import { planNotices, type NoticeAction, type NoticeSubject, type Recipients } from './plan.js';
import { errorStack } from '../../kernel/error-text.js';

// Notices' edges: read the standing of the notices out (deleted comments are
// cancelled, reactions answer), plan, then post and edit. Every write records
// what became of it: posted, edited, withdrawn, resolved, cancelled or failed.

export interface NoticeReport {
  posted: { subject: string; to: string; kind: string }[];
  edited: number;
  kept: number;
  withdrawn: number;
  resolved: number;
}

const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);

/** A holder is live while it still holds the member: a yoke run while it runs; a person always. */
async function holderLive(ctx: DeliveryContext, holder: string): Promise<boolean> {
  return holder.startsWith('run:') ? (await ctx.store.runs.get(holder.slice(4)))?.status === 'live' : true;
}

export function recipientsOf(ctx: DeliveryContext, run: DeploymentRun): Recipients {
  const now = ctx.clock.now();
  return {
    driver: run.driverId ? { id: run.driverId, live: run.leaseUntil !== null && run.leaseUntil > now } : null,
    creator: run.creator,
    steering: run.settings.steering ?? null,
    trackingIssue: run.trackingIssue,
  };
}

/** The notice subjects of a stage: each member's holder waits, and the driver's (groups, reviews, stage refusals). */
export async function subjectsOf(
  { ctx, run, stage }: Pick<StageAt, 'ctx' | 'run' | 'stage'>,
  evaluation: StageEvaluation,
  extra: ReadonlyMap<string, Wait[]>,
): Promise<NoticeSubject[]> {
  const frozen = new Map((await ctx.store.qa.memberStages(run.id, stage)).map((m) => [m.issueNumber, m]));
  const prs = new Map((await ctx.store.deploymentRuns.members(run.id)).map((m) => [m.issueNumber, m.prNumber]));
  const subjects: NoticeSubject[] = [];
  const driver = new Map<string, Wait[]>();
  for (const w of evaluation.waits) {
    // A member's wait on a group is carried by the group's own notice (QA10: never the holder's).
    if (w.code === 'awaits_group') continue;
    if (w.recipient !== 'holder') driver.set(w.subject, [...(driver.get(w.subject) ?? []), w]);
  }
  for (const m of evaluation.members) {
    const waits = [...m.waits.filter((w) => w.recipient === 'holder'), ...(extra.get(m.item) ?? [])];
    const f = frozen.get(m.issueNumber);
    const holder = f?.holder ?? null;
    subjects.push({
      subject: m.item,
      audience: 'holder',
      waits,
      holderThread: prs.get(m.issueNumber) ?? null,
      holder: holder ? { id: holder, live: await holderLive(ctx, holder) } : null,
    });
  }
  for (const [subject, waits] of driver)
    subjects.push({ subject, audience: 'driver', waits, holderThread: null, holder: null });
  return subjects;
}

export async function deliverNotices(
  at: StageAt,
  subjects: readonly NoticeSubject[],
  closedGroups: ReadonlySet<string>,
): Promise<NoticeReport> {
  const { ctx, dr, run, stage } = at;
  const report: NoticeReport = { posted: [], edited: 0, kept: 0, withdrawn: 0, resolved: 0 };
  const { store, forge, clock } = ctx;
  // What became of the notices out there: a deleted comment cancels its notice (QA21); a reaction answers it.
  for (const n of (await store.notices.forRun(run.id)).filter(
    (x) => x.stage === stage && x.commentId !== null && ['posted', 'edited'].includes(x.state),
  )) {
    const seen = await forge.readComment(dr.repo, n.commentId!);
    if (!seen)
      await store.notices.update(n.id, { state: 'cancelled', detail: 'the comment was deleted', at: clock.now() });
    // Only the recipient's own reaction answers its notice; anyone else's changes nothing (QA23 still flags it).
    else if (seen.reactors.includes(n.recipient))
      await store.notices.update(n.id, { state: 'answered', detail: 'the recipient reacted', at: clock.now() });
  }
  for (let round = 0; round < 2; round++) {
    const existing = (await store.notices.forRun(run.id)).filter((n) => n.stage === stage);
    const actions = planNotices({ subjects, existing, recipients: recipientsOf(ctx, run), closedGroups });
    let cancelled = false;
    for (const a of actions) cancelled = (await execute({ ctx, dr, run, stage }, a, report)) || cancelled;
    if (!cancelled) break; // a notice found deleted while editing: plan once more to redeliver it
  }
  return report;
}

/** Carries out one action; true when it found the notice's comment deleted. */
async function execute(at: StageAt, a: NoticeAction, report: NoticeReport): Promise<boolean> {
  const { ctx, dr, run, stage } = at;
  const { store, forge, clock } = ctx;
  const text = (kind: string, recipient: string, subject: string, waits: readonly Wait[]) =>
    qaNotice({ kind, recipient, repo: run.repo, run: run.id, stage, commit: run.commit, subject, waits });
  if (a.type === 'keep') {
    report.kept++;
    return false;
  }
  if (a.type === 'post') {
    if (a.supersedes !== null) await store.notices.update(a.supersedes, { state: 'superseded', at: clock.now() });
    const id = await store.notices.create({
      runId: run.id,
      stage,
      subject: a.subject,
      audience: a.audience,
      recipientKind: a.to.kind,
      recipient: a.to.id,
      waitKey: a.waitKey,
      thread: a.to.thread,
      at: clock.now(),
    });
    const body = text(a.to.kind, a.to.id, a.subject, a.waits);
    try {
      const commentId = await forge.createComment(dr.repo, a.to.thread, body);
      await store.notices.update(id, { state: 'posted', commentId, bodyHash: hash(body), at: clock.now() });
      report.posted.push({ subject: a.subject, to: a.to.id, kind: a.to.kind });
    } catch (err) {
      await store.notices.update(id, { state: 'failed', detail: String(err).slice(0, 300), at: clock.now() });
    }
    return false;
  }
  const n = a.notice;
  const body =
    a.type === 'edit'
      ? text(n.recipientKind, n.recipient, n.subject, a.waits)
      : a.type === 'withdraw'
        ? qaNoticeWithdrawn(n.recipientKind, n.recipient, run.id, a.group)
        : qaNoticeResolved({ kind: n.recipientKind, recipient: n.recipient, run: run.id, subject: n.subject, stage });
  try {
    if (!(await forge.editComment(dr.repo, n.commentId!, body))) {
      await store.notices.update(n.id, { state: 'cancelled', detail: 'the comment was deleted', at: clock.now() });
      return a.type === 'edit';
    }
  } catch (err) {
    ctx.log.warn(
      { run: run.id, notice: n.id, err: errorStack(err) },
      'could not edit a notice; the next dispatch tries again',
    );
    return false;
  }
  if (a.type === 'edit') {
    await store.notices.update(n.id, { state: 'edited', waitKey: a.waitKey, bodyHash: hash(body), at: clock.now() });
    report.edited++;
  } else if (a.type === 'withdraw') {
    await store.notices.update(n.id, { state: 'withdrawn', bodyHash: hash(body), at: clock.now() });
    report.withdrawn++;
  } else {
    await store.notices.update(n.id, { state: 'resolved', bodyHash: hash(body), at: clock.now() });
    report.resolved++;
  }
  return false;
}
