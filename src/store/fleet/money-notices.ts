import type { Sql } from '../sql/sql.js';
import { int } from '../sql/columns.js';

// BU03: which claim PRs were told, on which UTC day, that their fix waits for money.

export class MoneyNoticeStore {
  constructor(private readonly sql: Sql) {}

  async told(repo: string, thread: number, day: string): Promise<boolean> {
    return (
      (await this.sql.get(
        { told: int },
        'SELECT 1 AS told FROM money_notices WHERE repo = ? AND thread = ? AND day = ?',
        [repo, thread, day],
      )) !== undefined
    );
  }

  async record(repo: string, thread: number, day: string, commentId: number, at: number): Promise<void> {
    await this.sql.run(
      'INSERT INTO money_notices (repo, thread, day, comment_id, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (repo, thread, day) DO NOTHING',
      [repo, thread, day, commentId, at],
    );
  }
}
