import { allGrouped, type Sql } from './sql/sql.js';
import { TABLES } from './tables.js';
import { int, text } from './sql/columns.js';

// SC09: what each installation's reader found on GitHub, kept for the pass, whichever process runs it. A body is the
// reader's own text (JSON of a listing or a view); the store keeps it with its digest, so a pass asks for the digests
// of everything and the bodies of what changed only. A webhook that reached a process other than the reader marks the
// view wanted: its reader reads it again first, whatever its age.

/** What a reader found, under its key. */
export interface SharedRead {
  key: string;
  installationId: number;
  body: string;
  digest: string;
  /** The process that read it. */
  readBy: string;
  readAt: number;
}

/** The key of an installation's listing of its repositories. */
export const listingKey = (installationId: number): string => `listing:${installationId}`;
/** The key of a repository's view: its name as GitHub compares names, without regard to case. */
export const viewKey = (repo: string): string => `view:${repo.toLowerCase()}`;

export class SharedReadStore {
  constructor(
    private readonly sql: Sql,
    /** The database's clock, which leases are read by. */
    private readonly now: () => Promise<number>,
  ) {}

  /**
   * Keeps what a reader found, in place of what was there, while `readBy` holds the installation's lease (by the
   * database's clock): a process that lost it mid-read cannot write an older view over its successor's. A view read
   * again is no longer wanted. True when it was kept.
   */
  async put(read: SharedRead): Promise<boolean> {
    const res = await this.sql.run(
      `INSERT INTO shared_reads (key, installation_id, body, digest, read_by, read_at, wanted)
       SELECT ?, ?, ?, ?, ?, ?, 0 WHERE EXISTS (
         SELECT 1 FROM installation_leases l WHERE l.installation_id = ? AND l.holder = ? AND l.lease_until > ?)
       ON CONFLICT (key) DO UPDATE SET installation_id = excluded.installation_id, body = excluded.body,
         digest = excluded.digest, read_by = excluded.read_by, read_at = excluded.read_at, wanted = 0`,
      [
        read.key,
        read.installationId,
        read.body,
        read.digest,
        read.readBy,
        read.readAt,
        read.installationId,
        read.readBy,
        await this.now(),
      ],
    );
    return res.changes === 1;
  }

  /** The digest of everything read of these installations, by key, in one query. */
  async digests(installationIds: readonly number[]): Promise<Map<string, string>> {
    const rows = await allGrouped(
      this.sql,
      {
        shape: { key: text, digest: text },
        statement: 'SELECT key, digest FROM shared_reads WHERE installation_id IN (?)',
        values: installationIds,
      },
      { keyOf: (r) => r.key, map: (r) => r.digest },
    );
    return new Map([...rows].map(([key, [digest]]) => [key, digest!]));
  }

  /** What was read under these keys (a key never read is left out). */
  async get(keys: readonly string[]): Promise<Map<string, SharedRead>> {
    const rows = await allGrouped(
      this.sql,
      { shape: TABLES.shared_reads, statement: 'SELECT * FROM shared_reads WHERE key IN (?)', values: keys },
      {
        keyOf: (r) => r.key,
        map: (r): SharedRead => ({
          key: r.key,
          installationId: Number(r.installation_id),
          body: r.body,
          digest: r.digest,
          readBy: r.read_by,
          readAt: Number(r.read_at),
        }),
      },
    );
    return new Map([...rows].map(([key, [read]]) => [key, read!]));
  }

  /** A webhook asks for a repository's view to be read again by whichever process reads it. */
  async want(key: string): Promise<void> {
    await this.sql.run('UPDATE shared_reads SET wanted = 1 WHERE key = ?', [key]);
  }

  /** The keys wanted again among these installations' reads. */
  async wanted(installationIds: readonly number[]): Promise<string[]> {
    if (installationIds.length === 0) return [];
    const rows = await this.sql.all(
      { key: text, wanted: int },
      `SELECT key, wanted FROM shared_reads WHERE wanted = 1 AND installation_id IN (${installationIds.map(() => '?').join(', ')}) ORDER BY key`,
      installationIds,
    );
    return rows.map((r) => r.key);
  }
}
