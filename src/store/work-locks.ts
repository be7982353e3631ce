import type { Sql } from './sql/sql.js';
import { int, text } from './sql/columns.js';

// Named contention points held across an await (an ownership freeze reads
// GitHub before it writes; a start reads before it creates). Another caller
// meanwhile is answered busy, naming the holder. A lock older than staleMs
// (its holder crashed) may be taken.

export class WorkLockStore {
  constructor(private readonly sql: Sql) {}

  /** Takes the lock; null when taken, else who holds it and since when. One statement, so two processes cannot both take it. */
  async take(
    name: string,
    holder: string,
    now: number,
    staleMs: number,
  ): Promise<{ holder: string; since: number } | null> {
    for (;;) {
      const res = await this.sql.run(
        `INSERT INTO work_locks (name, holder, since) VALUES (?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, since = excluded.since
         WHERE work_locks.holder = excluded.holder OR work_locks.since <= ?`,
        [name, holder, now, now - staleMs],
      );
      if (res.changes === 1) return null;
      const other = await this.sql.get(
        { holder: text, since: int },
        'SELECT holder, since FROM work_locks WHERE name = ?',
        [name],
      );
      if (other) return other; // else its holder released it in between: try again
    }
  }

  async held(name: string, now: number, staleMs: number): Promise<{ holder: string; since: number } | null> {
    const row = await this.sql.get(
      { holder: text, since: int },
      'SELECT holder, since FROM work_locks WHERE name = ?',
      [name],
    );
    return row && now - row.since < staleMs ? row : null;
  }

  async release(name: string, holder: string): Promise<void> {
    await this.sql.run('DELETE FROM work_locks WHERE name = ? AND holder = ?', [name, holder]);
  }
}
