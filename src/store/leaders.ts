import type { Sql } from './sql.js';

// Who leads a role (the fleet's ticks): one row per role, its holder and how
// long the lease lasts. Taking it is one statement on either engine, so two
// processes that try at once cannot both win.

export interface Leader {
  role: string;
  holder: string;
  leaseUntil: number;
  /** When this holder took the role (kept across its renewals). */
  since: number;
}

interface Row {
  role: string;
  holder: string;
  lease_until: number;
  since: number;
}

const toLeader = (r: Row): Leader => ({ role: r.role, holder: r.holder, leaseUntil: r.lease_until, since: r.since });

export class LeaderStore {
  constructor(private readonly sql: Sql) {}

  /** Takes the role, or renews it for its holder; another's lease is taken only once it has lapsed. Returns who leads now. */
  async claim(role: string, holder: string, now: number, leaseMs: number): Promise<Leader> {
    await this.sql.run(
      `INSERT INTO leaders (role, holder, lease_until, since) VALUES (?, ?, ?, ?)
       ON CONFLICT (role) DO UPDATE SET
         since = CASE WHEN leaders.holder = excluded.holder THEN leaders.since ELSE excluded.since END,
         holder = excluded.holder,
         lease_until = excluded.lease_until
       WHERE leaders.holder = excluded.holder OR leaders.lease_until <= ?`,
      [role, holder, now + leaseMs, now, now],
    );
    return (await this.current(role))!;
  }

  /** Gives the role up at once (a clean stop), so a follower need not wait out the lease. */
  async release(role: string, holder: string): Promise<boolean> {
    return (await this.sql.run('DELETE FROM leaders WHERE role = ? AND holder = ?', [role, holder])).changes === 1;
  }

  async current(role: string): Promise<Leader | null> {
    const row = await this.sql.get<Row>('SELECT * FROM leaders WHERE role = ?', [role]);
    return row ? toLeader(row) : null;
  }
}
