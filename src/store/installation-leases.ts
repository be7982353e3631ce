import type { Sql } from './sql/sql.js';
import { TABLES, type TableRow } from './tables.js';
import { ownerGone } from './processes.js';

// SC08: which yoke process reads each installation's repositories: one lease per installation, by the database's
// clock (TR31). Taking one is one statement on either engine, so two processes that try at once cannot both hold it;
// another's is taken only once it has lapsed, or once its holder's process lease has (a process known dead).

export interface InstallationLease {
  installationId: number;
  /** The process (its process-lease id) that reads it. */
  holder: string;
  leaseUntil: number;
  /** When this holder took it (kept across its renewals). */
  since: number;
}

type Row = TableRow<'installation_leases'>;

const toLease = (r: Row): InstallationLease => ({
  installationId: Number(r.installation_id),
  holder: r.holder,
  leaseUntil: Number(r.lease_until),
  since: Number(r.since),
});

export class InstallationLeaseStore {
  constructor(
    private readonly sql: Sql,
    private readonly now: () => Promise<number>,
  ) {}

  /**
   * Takes an installation's lease, or renews it for its holder: another's only once it has lapsed or its holder's
   * process is gone. True when `holder` holds it now.
   */
  async claim(installationId: number, holder: string, leaseMs: number): Promise<boolean> {
    const now = await this.now();
    const res = await this.sql.run(
      `INSERT INTO installation_leases (installation_id, holder, lease_until, since) VALUES (?, ?, ?, ?)
       ON CONFLICT (installation_id) DO UPDATE SET
         since = CASE WHEN installation_leases.holder = excluded.holder THEN installation_leases.since ELSE excluded.since END,
         holder = excluded.holder,
         lease_until = excluded.lease_until
       WHERE installation_leases.holder = excluded.holder OR installation_leases.lease_until <= ?
         OR ${ownerGone('installation_leases.holder', '?')}`,
      [installationId, holder, now + leaseMs, now, now, now],
    );
    return res.changes === 1;
  }

  /** Gives an installation up (it is another process's to read now); only its holder can. */
  async release(installationId: number, holder: string): Promise<void> {
    await this.sql.run('DELETE FROM installation_leases WHERE installation_id = ? AND holder = ?', [
      installationId,
      holder,
    ]);
  }

  /** Every installation's lease, current or lapsed, by installation. */
  async list(): Promise<InstallationLease[]> {
    return (
      await this.sql.all(TABLES.installation_leases, 'SELECT * FROM installation_leases ORDER BY installation_id')
    ).map(toLease);
  }

  /** The leases that have not lapsed, by installation: who reads what now. */
  async current(): Promise<InstallationLease[]> {
    return (
      await this.sql.all(
        TABLES.installation_leases,
        'SELECT * FROM installation_leases WHERE lease_until > ? ORDER BY installation_id',
        [await this.now()],
      )
    ).map(toLease);
  }

  /** The installations `holder` reads now: its leases that have not lapsed. */
  async heldBy(holder: string): Promise<number[]> {
    const rows = await this.sql.all(
      TABLES.installation_leases,
      'SELECT * FROM installation_leases WHERE holder = ? AND lease_until > ? ORDER BY installation_id',
      [holder, await this.now()],
    );
    return rows.map((r) => Number(r.installation_id));
  }
}
