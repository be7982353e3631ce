import type { Wait } from '../gate/waits.js';
import { isBotLogin } from './people.js';
import { OPEN_NOTICE_STATES, type Notice, type RecipientKind } from '../../store/delivery/notices.js';

// Which notices to post, edit, withdraw or leave alone: a pure decision over
// the waits of one dispatch, the notices already out, and who is live.

/** One thing somebody is waited on for: a member's item QA (its holder) or a driver-owned subject. */
export interface NoticeSubject {
  subject: string;
  audience: 'holder' | 'driver';
  waits: readonly Wait[];
  /** Where a holder's notice goes: the member's claim PR. */
  holderThread: number | null;
  /** The member's holder, for a holder subject. */
  holder: { id: string; live: boolean } | null;
}

export interface Recipients {
  driver: { id: string; live: boolean } | null;
  creator: string | null;
  steering: string | null;
  trackingIssue: number | null;
}

export interface Target {
  kind: RecipientKind;
  id: string;
  thread: number;
}

export type NoticeAction =
  | {
      type: 'post';
      subject: string;
      audience: 'holder' | 'driver';
      to: Target;
      waitKey: string;
      waits: readonly Wait[];
      supersedes: number | null;
    }
  | { type: 'edit'; notice: Notice; waitKey: string; waits: readonly Wait[] }
  | { type: 'keep'; notice: Notice }
  | { type: 'withdraw'; notice: Notice; group: string }
  | { type: 'resolve'; notice: Notice };

export interface NoticeInput {
  subjects: readonly NoticeSubject[];
  existing: readonly Notice[];
  recipients: Recipients;
  /** Groups of this stage that closed: their notices are withdrawn (QA22). */
  closedGroups: ReadonlySet<string>;
}

export const waitKeyOf = (waits: readonly Wait[]): string => [...new Set(waits.map((w) => w.key))].sort().join('|');
const identity = (n: { subject: string; audience: string }) => `${n.audience}\u0000${n.subject}`;
const isOpen = (n: Notice) => OPEN_NOTICE_STATES.includes(n.state);

/** QA21: who may carry a wait, in order: the holder (for item QA), then the live driver, the run's creator, steering. */
function chain(s: NoticeSubject, r: Recipients): (Target & { live: boolean })[] {
  const out: (Target & { live: boolean })[] = [];
  if (s.audience === 'holder' && s.holder && s.holderThread !== null)
    out.push({ kind: 'holder', id: s.holder.id, thread: s.holderThread, live: s.holder.live });
  if (r.trackingIssue !== null) {
    if (r.driver) out.push({ kind: 'driver', id: r.driver.id, thread: r.trackingIssue, live: r.driver.live });
    // A bot that created the run, or is named as steering, is no person to tell (the report flags a wait left with nobody).
    if (r.creator && !isBotLogin(r.creator))
      out.push({ kind: 'creator', id: r.creator, thread: r.trackingIssue, live: true });
    if (r.steering && !isBotLogin(r.steering))
      out.push({ kind: 'steering', id: r.steering, thread: r.trackingIssue, live: true });
  }
  return out;
}

export function planNotices(input: NoticeInput): NoticeAction[] {
  const actions: NoticeAction[] = [];
  const bySubject = new Map<string, Notice[]>();
  for (const n of input.existing) bySubject.set(identity(n), [...(bySubject.get(identity(n)) ?? []), n]);
  const waiting = new Set<string>();

  for (const s of input.subjects) {
    if (s.waits.length === 0) continue;
    waiting.add(identity(s));
    const key = waitKeyOf(s.waits);
    const notices = bySubject.get(identity(s)) ?? [];
    const current = [...notices].reverse().find(isOpen) ?? null;
    const declined = new Set(
      notices.filter((n) => n.state === 'cancelled').map((n) => `${n.recipientKind}:${n.recipient}`),
    );
    const candidates = chain(s, input.recipients).filter((t) => !declined.has(`${t.kind}:${t.id}`));
    const stillLive =
      current && candidates.some((t) => t.kind === current.recipientKind && t.id === current.recipient && t.live);
    if (current && stillLive && current.state !== 'failed' && current.state !== 'pending') {
      // QA20: an unchanged wait reuses its notice; a changed one is edited in place.
      actions.push(
        current.waitKey === key
          ? { type: 'keep', notice: current }
          : { type: 'edit', notice: current, waitKey: key, waits: s.waits },
      );
      continue;
    }
    const to =
      current && stillLive
        ? candidates.find((t) => t.kind === current.recipientKind && t.id === current.recipient)!
        : candidates.find((t) => t.live);
    if (!to) continue; // nobody to tell: the fleet report flags it (QA23)
    actions.push({
      type: 'post',
      subject: s.subject,
      audience: s.audience,
      to: { kind: to.kind, id: to.id, thread: to.thread },
      waitKey: key,
      waits: s.waits,
      supersedes: current?.id ?? null,
    });
  }

  // Notices whose wait is over: a closed group's is withdrawn (QA22), any other resolved.
  for (const [id, notices] of bySubject) {
    if (waiting.has(id)) continue;
    for (const n of notices.filter((x) => isOpen(x) && x.commentId !== null)) {
      actions.push(
        n.audience === 'driver' && input.closedGroups.has(n.subject)
          ? { type: 'withdraw', notice: n, group: n.subject }
          : { type: 'resolve', notice: n },
      );
    }
  }
  return actions;
}
