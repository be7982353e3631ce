import { describe, expect, it } from 'vitest';
import { planNotices, type NoticeInput, type NoticeSubject } from '../../../src/delivery/notices/plan.js';
import type { Wait } from '../../../src/delivery/gate/waits.js';
import type { Notice } from '../../../src/store/delivery/notices.js';

// Which notices to post, edit, withdraw or keep: a pure decision.

const wait = (subject: string, key: string, recipient: Wait['recipient'] = 'holder'): Wait => ({
  key,
  code: 'item_case_pending',
  recipient,
  subject,
  detail: `waiting on ${key}`,
  command: `yoke qa plan run --item ${subject} --stage qa`,
});
const holderSubject = (waits: Wait[], live = true): NoticeSubject => ({
  subject: 'APP-1',
  audience: 'holder',
  waits,
  holderThread: 101,
  holder: { id: 'alice', live },
});
const groupSubject = (waits: Wait[]): NoticeSubject => ({
  subject: 'dr-1-g1',
  audience: 'driver',
  waits,
  holderThread: null,
  holder: null,
});

let ids = 1;
const notice = (
  n: Partial<Notice> & Pick<Notice, 'subject' | 'audience' | 'recipientKind' | 'recipient' | 'waitKey'>,
): Notice => ({
  id: ids++,
  runId: 'dr-1',
  stage: 'qa',
  thread: n.recipientKind === 'holder' ? 101 : 7,
  commentId: 900 + ids,
  state: 'posted',
  bodyHash: null,
  detail: null,
  createdAt: 0,
  updatedAt: 0,
  ...n,
});

function plan(over: Partial<NoticeInput>) {
  return planNotices({
    subjects: [],
    existing: [],
    recipients: { driver: { id: 'drv', live: true }, creator: 'maint', steering: 'lead', trackingIssue: 7 },
    closedGroups: new Set(),
    ...over,
  });
}
const summary = (actions: ReturnType<typeof planNotices>) =>
  actions.map((a) =>
    a.type === 'post'
      ? `post ${a.to.kind}:${a.to.id} on #${a.to.thread}${a.supersedes ? ` (supersedes ${a.supersedes})` : ''}`
      : `${a.type} ${a.notice.id}`,
  );

describe('planning notices', () => {
  it('QA08 a holder is told on the claim PR; QA20 an unchanged wait keeps its notice; a changed one is edited in place', () => {
    const w = [wait('APP-1', 'a')];
    expect(summary(plan({ subjects: [holderSubject(w)] }))).toEqual(['post holder:alice on #101']);
    const out = notice({
      subject: 'APP-1',
      audience: 'holder',
      recipientKind: 'holder',
      recipient: 'alice',
      waitKey: 'a',
    });
    expect(summary(plan({ subjects: [holderSubject(w)], existing: [out] }))).toEqual([`keep ${out.id}`]);
    expect(summary(plan({ subjects: [holderSubject([wait('APP-1', 'b')])], existing: [out] }))).toEqual([
      `edit ${out.id}`,
    ]);
  });

  it('QA21 a cancelled notice or an ended holder is redelivered: the live driver, then the creator, then steering', () => {
    const w = [wait('APP-1', 'a')];
    const cancelledHolder = notice({
      subject: 'APP-1',
      audience: 'holder',
      recipientKind: 'holder',
      recipient: 'alice',
      waitKey: 'a',
      state: 'cancelled',
    });
    expect(summary(plan({ subjects: [holderSubject(w)], existing: [cancelledHolder] }))).toEqual([
      'post driver:drv on #7',
    ]);
    const held = notice({
      subject: 'APP-1',
      audience: 'holder',
      recipientKind: 'holder',
      recipient: 'alice',
      waitKey: 'a',
    });
    expect(summary(plan({ subjects: [holderSubject(w, false)], existing: [held] }))).toEqual([
      `post driver:drv on #7 (supersedes ${held.id})`,
    ]);
    const noDriver = { driver: { id: 'drv', live: false }, creator: 'maint', steering: 'lead', trackingIssue: 7 };
    expect(summary(plan({ subjects: [holderSubject(w)], existing: [cancelledHolder], recipients: noDriver }))).toEqual([
      'post creator:maint on #7',
    ]);
    const cancelledCreator = notice({
      subject: 'APP-1',
      audience: 'holder',
      recipientKind: 'creator',
      recipient: 'maint',
      waitKey: 'a',
      state: 'cancelled',
    });
    expect(
      summary(
        plan({ subjects: [holderSubject(w)], existing: [cancelledHolder, cancelledCreator], recipients: noDriver }),
      ),
    ).toEqual(['post steering:lead on #7']);
    const everyone = notice({
      subject: 'APP-1',
      audience: 'holder',
      recipientKind: 'steering',
      recipient: 'lead',
      waitKey: 'a',
      state: 'cancelled',
    });
    expect(
      plan({
        subjects: [holderSubject(w)],
        existing: [cancelledHolder, cancelledCreator, everyone],
        recipients: noDriver,
      }),
    ).toEqual([]);
  });

  it('QA21 a driver whose lease lapsed hands its notice to the creator', () => {
    const w = [wait('dr-1-g1', 'g', 'driver')];
    const toDriver = notice({
      subject: 'dr-1-g1',
      audience: 'driver',
      recipientKind: 'driver',
      recipient: 'drv',
      waitKey: 'g',
    });
    expect(summary(plan({ subjects: [groupSubject(w)], existing: [toDriver] }))).toEqual([`keep ${toDriver.id}`]);
    const lapsed = { driver: { id: 'drv', live: false }, creator: 'maint', steering: null, trackingIssue: 7 };
    expect(summary(plan({ subjects: [groupSubject(w)], existing: [toDriver], recipients: lapsed }))).toEqual([
      `post creator:maint on #7 (supersedes ${toDriver.id})`,
    ]);
  });

  it('QA22 closing a group withdraws its notice; a member that stops waiting has its notice resolved', () => {
    const g = notice({
      subject: 'dr-1-g1',
      audience: 'driver',
      recipientKind: 'driver',
      recipient: 'drv',
      waitKey: 'g',
    });
    const m = notice({
      subject: 'APP-1',
      audience: 'holder',
      recipientKind: 'holder',
      recipient: 'alice',
      waitKey: 'a',
    });
    expect(
      summary(plan({ subjects: [holderSubject([])], existing: [g, m], closedGroups: new Set(['dr-1-g1']) })),
    ).toEqual([`withdraw ${g.id}`, `resolve ${m.id}`]);
  });

  it('a notice that failed to post is posted again to the same recipient', () => {
    const failed = notice({
      subject: 'APP-1',
      audience: 'holder',
      recipientKind: 'holder',
      recipient: 'alice',
      waitKey: 'a',
      state: 'failed',
      commentId: null,
    });
    expect(summary(plan({ subjects: [holderSubject([wait('APP-1', 'a')])], existing: [failed] }))).toEqual([
      `post holder:alice on #101 (supersedes ${failed.id})`,
    ]);
  });
});
