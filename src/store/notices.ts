import type { Db } from './db.js';

// Notices and their delivery state (QA20-QA23).

export const NOTICE_STATES = ['pending', 'posted', 'edited', 'withdrawn', 'cancelled', 'failed', 'answered', 'resolved', 'superseded'] as const;
export type NoticeState = (typeof NOTICE_STATES)[number];
export type RecipientKind = 'holder' | 'driver' | 'creator' | 'steering';

export interface Notice {
  id: number;
  runId: string;
  stage: string;
  /** The item or group the notice is about. */
  subject: string;
  /** Whose wait it is: a member's holder, or the run's driver. */
  audience: 'holder' | 'driver';
  recipientKind: RecipientKind;
  recipient: string;
  waitKey: string;
  /** The issue or PR the comment is on. */
  thread: number;
  commentId: number | null;
  state: NoticeState;
  bodyHash: string | null;
  detail: string | null;
  createdAt: number;
  updatedAt: number;
}

interface Row {
  id: number;
  run_id: string;
  stage: string;
  subject: string;
  audience: 'holder' | 'driver';
  recipient_kind: RecipientKind;
  recipient: string;
  wait_key: string;
  thread: number;
  comment_id: number | null;
  state: NoticeState;
  body_hash: string | null;
  detail: string | null;
  created_at: number;
  updated_at: number;
}

const toNotice = (r: Row): Notice => ({
  id: r.id,
  runId: r.run_id,
  stage: r.stage,
  subject: r.subject,
  audience: r.audience,
  recipientKind: r.recipient_kind,
  recipient: r.recipient,
  waitKey: r.wait_key,
  thread: r.thread,
  commentId: r.comment_id,
  state: r.state,
  bodyHash: r.body_hash,
  detail: r.detail,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** States in which a notice still stands for its wait. */
export const OPEN_NOTICE_STATES: readonly NoticeState[] = ['pending', 'posted', 'edited', 'failed', 'answered'];

export class NoticeStore {
  constructor(private readonly db: Db) {}

  create(n: Pick<Notice, 'runId' | 'stage' | 'subject' | 'audience' | 'recipientKind' | 'recipient' | 'waitKey' | 'thread'> & { at: number }): number {
    const res = this.db
      .prepare(
        "INSERT INTO notices (run_id, stage, subject, audience, recipient_kind, recipient, wait_key, thread, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)",
      )
      .run(n.runId, n.stage, n.subject, n.audience, n.recipientKind, n.recipient, n.waitKey, n.thread, n.at, n.at);
    return Number(res.lastInsertRowid);
  }

  update(id: number, change: { state?: NoticeState; commentId?: number; bodyHash?: string; waitKey?: string; detail?: string | null; at: number }): void {
    this.db
      .prepare(
        `UPDATE notices SET state = COALESCE(@state, state), comment_id = COALESCE(@commentId, comment_id), body_hash = COALESCE(@bodyHash, body_hash),
           wait_key = COALESCE(@waitKey, wait_key), detail = CASE WHEN @setDetail THEN @detail ELSE detail END, updated_at = @at WHERE id = @id`,
      )
      .run({
        id,
        state: change.state ?? null,
        commentId: change.commentId ?? null,
        bodyHash: change.bodyHash ?? null,
        waitKey: change.waitKey ?? null,
        setDetail: change.detail === undefined ? 0 : 1,
        detail: change.detail ?? null,
        at: change.at,
      });
  }

  forRun(runId: string): Notice[] {
    return (this.db.prepare('SELECT * FROM notices WHERE run_id = ? ORDER BY id').all(runId) as Row[]).map(toNotice);
  }

  get(id: number): Notice | undefined {
    const row = this.db.prepare('SELECT * FROM notices WHERE id = ?').get(id) as Row | undefined;
    return row && toNotice(row);
  }

  /** Open notices on a thread, for replies and declines found there. */
  onThread(runIds: readonly string[], thread: number): Notice[] {
    if (runIds.length === 0) return [];
    return (
      this.db.prepare(`SELECT * FROM notices WHERE thread = ? AND run_id IN (${runIds.map(() => '?').join(', ')}) ORDER BY id`).all(thread, ...runIds) as Row[]
    ).map(toNotice);
  }
}
