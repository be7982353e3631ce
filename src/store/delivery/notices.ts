import type { Sql } from '../sql/sql.js';
import { int } from '../sql/columns.js';
import { TABLES, type TableRow } from '../tables.js';

// Notices and their delivery state (QA20-QA23).

/** The states a notice moves through, as its table declares them (the database CHECKs the same). */
export const NOTICE_STATES = TABLES.notices.state.values;
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

type Row = TableRow<'notices'>;

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
  constructor(private readonly sql: Sql) {}

  async create(
    n: Pick<
      Notice,
      'runId' | 'stage' | 'subject' | 'audience' | 'recipientKind' | 'recipient' | 'waitKey' | 'thread'
    > & { at: number },
  ): Promise<number> {
    const row = await this.sql.get(
      { id: int },
      "INSERT INTO notices (run_id, stage, subject, audience, recipient_kind, recipient, wait_key, thread, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?) RETURNING id",
      [n.runId, n.stage, n.subject, n.audience, n.recipientKind, n.recipient, n.waitKey, n.thread, n.at, n.at],
    );
    return row!.id;
  }

  async update(
    id: number,
    change: {
      state?: NoticeState;
      commentId?: number;
      bodyHash?: string;
      waitKey?: string;
      detail?: string | null;
      at: number;
    },
  ): Promise<void> {
    await this.sql.run(
      `UPDATE notices SET state = COALESCE(?, state), comment_id = COALESCE(?, comment_id), body_hash = COALESCE(?, body_hash),
         wait_key = COALESCE(?, wait_key), detail = CASE WHEN ? = 1 THEN ? ELSE detail END, updated_at = ? WHERE id = ?`,
      [
        change.state ?? null,
        change.commentId ?? null,
        change.bodyHash ?? null,
        change.waitKey ?? null,
        change.detail === undefined ? 0 : 1,
        change.detail ?? null,
        change.at,
        id,
      ],
    );
  }

  async forRun(runId: string): Promise<Notice[]> {
    return (await this.sql.all(TABLES.notices, 'SELECT * FROM notices WHERE run_id = ? ORDER BY id', [runId])).map(
      toNotice,
    );
  }

  async get(id: number): Promise<Notice | undefined> {
    const row = await this.sql.get(TABLES.notices, 'SELECT * FROM notices WHERE id = ?', [id]);
    return row && toNotice(row);
  }

  /** Open notices on a thread, for replies and declines found there. */
  async onThread(runIds: readonly string[], thread: number): Promise<Notice[]> {
    if (runIds.length === 0) return [];
    return (
      await this.sql.all(
        TABLES.notices,
        `SELECT * FROM notices WHERE thread = ? AND run_id IN (${runIds.map(() => '?').join(', ')}) ORDER BY id`,
        [thread, ...runIds],
      )
    ).map(toNotice);
  }
}
