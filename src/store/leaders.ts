import type { Sql } from './sql/sql.js';
import { TABLES, type TableRow } from './tables.js';
import { int } from './sql/columns.js';

// Who leads a role (the fleet's ticks): one row per role, its holder and how
// long the lease lasts, by the database's clock (TR31). Taking it is one
// statement on either engine, so two processes that try at once cannot both
// win. Each change of holder raises the role's epoch, never lowered (a
// release keeps the row): a leader's fence is its holder and epoch.

export interface Leader {
  role: string;
  holder: string;
  leaseUntil: number;
  /** When this holder took the role (kept across its renewals). */
  since: number;
  /** Raised each time the role changes hands. */
  epoch: number;
}

type Row = TableRow<'leaders'>;

const toLeader = (r: Row): Leader => ({
  role: r.role,
  holder: r.holder,
  leaseUntil: Number(r.lease_until),
  since: Number(r.since),
  epoch: Number(r.epoch),
});

export class LeaderStore {
  constructor(
    private readonly sql: Sql,
    private readonly now: () => Promise<number>,
  ) {}

  /** Takes the role, or renews it for its holder; another's lease is taken only once it has lapsed. Returns who leads now. */
  async claim(role: string, holder: string, leaseMs: number): Promise<Leader> {
    const now = await this.now();
    await this.sql.run(
      `INSERT INTO leaders (role, holder, lease_until, since, epoch) VALUES (?, ?, ?, ?, 1)
       ON CONFLICT (role) DO UPDATE SET
         since = CASE WHEN leaders.holder = excluded.holder AND leaders.lease_until > ? THEN leaders.since ELSE excluded.since END,
         epoch = CASE WHEN leaders.holder = excluded.holder AND leaders.lease_until > ? THEN leaders.epoch ELSE leaders.epoch + 1 END,
         holder = excluded.holder,
         lease_until = excluded.lease_until
       WHERE leaders.holder = excluded.holder OR leaders.lease_until <= ?`,
      [role, holder, now + leaseMs, now, now, now, now],
    );
    return (await this.current(role))!;
  }

  /**
   * TR31: whether `holder` still leads `role` in the same epoch, with its
   * lease unexpired by the database's clock: the fence a leader passes before
   * each step that writes outside the store.
   */
  async stillLeads(role: string, holder: string, epoch: number): Promise<boolean> {
    const now = await this.now();
    return (
      (await this.sql.get(
        { one: int },
        'SELECT 1 AS one FROM leaders WHERE role = ? AND holder = ? AND epoch = ? AND lease_until > ?',
        [role, holder, epoch, now],
      )) !== undefined
    );
  }

  /** Gives the role up at once (a clean stop), so a follower need not wait out the lease; the epoch stays. */
  async release(role: string, holder: string): Promise<boolean> {
    return (
      (
        await this.sql.run('UPDATE leaders SET lease_until = 0 WHERE role = ? AND holder = ? AND lease_until > 0', [
          role,
          holder,
        ])
      ).changes === 1
    );
  }

  async current(role: string): Promise<Leader | null> {
    const row = await this.sql.get(TABLES.leaders, 'SELECT * FROM leaders WHERE role = ?', [role]);
    return row ? toLeader(row) : null;
  }
}
