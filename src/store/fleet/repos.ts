import { createHash } from 'node:crypto';
import { allGrouped, type Sql } from '../sql/sql.js';
import { pick, type RowOf } from '../sql/columns.js';
import { TABLES } from '../tables.js';
import type { RepoRead } from '../sql/stored-json.js';

export type { RepoRead } from '../sql/stored-json.js';

export interface RepoState {
  fullName: string;
  installationId: number | null;
  /** null: follow the opt-in file's `auto` default. */
  autoLoop: boolean | null;
  consecutiveFailures: number;
  pausedSince: number | null;
  disabledReason: string | null;
  disabledNotified: string | null;
  firstSeenAt: number;
  updatedAt: number;
}

/** SC10: a repository's state, without what a pass last read of it (a document each, read on its own when wanted). */
const STATE = pick(
  TABLES.repos,
  'full_name',
  'installation_id',
  'auto_loop',
  'consecutive_failures',
  'paused_since',
  'disabled_reason',
  'disabled_notified',
  'first_seen_at',
  'updated_at',
);
const STATE_COLUMNS = Object.keys(STATE).join(', ');
type RepoRow = RowOf<typeof STATE>;

const toState = (r: RepoRow): RepoState => ({
  fullName: r.full_name,
  installationId: r.installation_id,
  autoLoop: r.auto_loop === null ? null : r.auto_loop === 1,
  consecutiveFailures: r.consecutive_failures,
  pausedSince: r.paused_since,
  disabledReason: r.disabled_reason,
  disabledNotified: r.disabled_notified,
  firstSeenAt: r.first_seen_at,
  updatedAt: r.updated_at,
});

/** SC10: the digest of each settings object read with no open claim, kept with the object (which nothing changes). */
const unclaimedDigests = new WeakMap<object, string>();

/** What a read found (the time it was made aside), as a digest: an idle repository's is computed once per settings read. */
function readDigest(read: RepoRead): string {
  const { readAt: _at, ...found } = read;
  const settings = read.settings;
  const memo = read.openClaims.length === 0 && typeof settings === 'object' && settings !== null ? settings : null;
  const kept = memo && unclaimedDigests.get(memo);
  if (kept) return kept;
  const digest = createHash('sha1').update(JSON.stringify(found)).digest('base64');
  if (memo) unclaimedDigests.set(memo, digest);
  return digest;
}

export class RepoStore {
  constructor(private readonly sql: Sql) {}

  /** The repo's state, created on first sight. */
  async ensure(fullName: string, installationId: number | null, now: number): Promise<RepoState> {
    await this.sql.run(
      `INSERT INTO repos (full_name, installation_id, first_seen_at, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT(full_name) DO UPDATE SET installation_id = COALESCE(excluded.installation_id, repos.installation_id)`,
      [fullName, installationId, now, now],
    );
    return (await this.get(fullName))!;
  }

  async get(fullName: string): Promise<RepoState | undefined> {
    const row = await this.sql.get(STATE, `SELECT ${STATE_COLUMNS} FROM repos WHERE full_name = ?`, [fullName]);
    return row && toState(row);
  }

  /** TR25: the repository by its name as GitHub compares names (without regard to case), under the name yoke keeps. */
  async find(name: string): Promise<RepoState | undefined> {
    const row = await this.sql.get(
      STATE,
      `SELECT ${STATE_COLUMNS} FROM repos WHERE lower(full_name) = lower(?) ORDER BY full_name LIMIT 1`,
      [name],
    );
    return row && toState(row);
  }

  async list(): Promise<RepoState[]> {
    return (await this.sql.all(STATE, `SELECT ${STATE_COLUMNS} FROM repos ORDER BY full_name`)).map(toState);
  }

  /** SC10: the states of these repositories (those yoke keeps), in one statement however many. */
  async listFor(names: readonly string[]): Promise<RepoState[]> {
    const rows = await allGrouped(
      this.sql,
      { shape: STATE, statement: `SELECT ${STATE_COLUMNS} FROM repos WHERE full_name IN (?)`, values: names },
      { keyOf: (r) => r.full_name, map: toState },
    );
    return [...rows.values()].flat();
  }

  /**
   * SC10: each repository's version, which the database moves on every write to its row, runs, claims, AFK labels
   * or asks (migration 30); a repository none of those was ever written for has none.
   */
  async versions(): Promise<Map<string, number>> {
    const rows = await this.sql.all(TABLES.repo_versions, 'SELECT full_name, version FROM repo_versions');
    return new Map(rows.map((r) => [r.full_name, r.version]));
  }

  async setAutoLoop(fullName: string, on: boolean, now: number): Promise<void> {
    await this.sql.run('UPDATE repos SET auto_loop = ?, updated_at = ? WHERE full_name = ?', [
      on ? 1 : 0,
      now,
      fullName,
    ]);
  }

  /** +1 failure; pauses at the threshold. Returns the new state. */
  async addFailure(fullName: string, threshold: number, now: number): Promise<RepoState> {
    await this.sql.run(
      `UPDATE repos SET consecutive_failures = consecutive_failures + 1,
         paused_since = CASE WHEN paused_since IS NULL AND consecutive_failures + 1 >= ? THEN ? ELSE paused_since END,
         updated_at = ?
       WHERE full_name = ?`,
      [threshold, now, now, fullName],
    );
    return (await this.get(fullName))!;
  }

  /** A success resets the counter; it never un-pauses (only an explicit reset does). */
  async resetFailures(fullName: string, now: number): Promise<void> {
    await this.sql.run('UPDATE repos SET consecutive_failures = 0, updated_at = ? WHERE full_name = ?', [
      now,
      fullName,
    ]);
  }

  /** The explicit reset: clears the counter and the pause. */
  async unpause(fullName: string, now: number): Promise<void> {
    await this.sql.run(
      'UPDATE repos SET consecutive_failures = 0, paused_since = NULL, updated_at = ? WHERE full_name = ?',
      [now, fullName],
    );
  }

  async setDisabled(fullName: string, reason: string | null, now: number): Promise<void> {
    await this.sql.run('UPDATE repos SET disabled_reason = ?, updated_at = ? WHERE full_name = ?', [
      reason,
      now,
      fullName,
    ]);
  }

  /** Records what a pass read; a read that found the same as the last one writes nothing, so `readAt` is when it was first found so. */
  /** Records a repository's read when it differs from the last one (`known`: that last one, read already for many). */
  /**
   * What a pass read of the repository, kept when it differs from what was kept (the time it was read aside).
   * `known`: the digest of what was kept, as `readDigests` gave it (SC10: the pass asks them of all at once).
   */
  async recordRead(fullName: string, read: RepoRead, known?: string | null): Promise<void> {
    const digest = readDigest(read);
    const last = known === undefined ? (await this.readDigests([fullName])).get(fullName) : known;
    if (last === digest) return;
    await this.sql.run('UPDATE repos SET last_read = ?, last_read_digest = ? WHERE full_name = ?', [
      JSON.stringify(read),
      digest,
      fullName,
    ]);
  }

  /** SC10: the digest of each repository's last read, without reading the reads; of these repositories, or all. */
  async readDigests(names?: readonly string[]): Promise<Map<string, string>> {
    const shape = pick(TABLES.repos, 'full_name', 'last_read_digest');
    const statement = 'SELECT full_name, last_read_digest FROM repos WHERE last_read_digest IS NOT NULL';
    if (!names) return new Map((await this.sql.all(shape, statement)).map((r) => [r.full_name, r.last_read_digest!]));
    const rows = await allGrouped(
      this.sql,
      { shape, statement: `${statement} AND full_name IN (?)`, values: names },
      { keyOf: (r) => r.full_name, map: (r) => r.last_read_digest! },
    );
    return new Map([...rows].map(([name, [digest]]) => [name, digest!]));
  }

  async lastRead(fullName: string): Promise<RepoRead | null> {
    const row = await this.sql.get(pick(TABLES.repos, 'last_read'), 'SELECT last_read FROM repos WHERE full_name = ?', [
      fullName,
    ]);
    return row?.last_read ?? null;
  }

  /** Every repository's last read, in one query (the fleet report's). */
  async lastReads(): Promise<Map<string, RepoRead>> {
    const rows = await this.sql.all(
      pick(TABLES.repos, 'full_name', 'last_read'),
      'SELECT full_name, last_read FROM repos WHERE last_read IS NOT NULL',
    );
    return new Map(rows.map((r) => [r.full_name, r.last_read!]));
  }

  async markDisabledNotified(fullName: string, reason: string): Promise<void> {
    await this.sql.run('UPDATE repos SET disabled_notified = ? WHERE full_name = ?', [reason, fullName]);
  }
}
