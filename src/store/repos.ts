import type { Db } from './db.js';

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

/** What a pass last read of a repository: its opt-in file as yoke parsed it, and its open claim PRs. */
export interface RepoRead {
  readAt: number;
  /** The parsed opt-in file (defaults filled in), or null when it was absent or refused. */
  settings: unknown;
  openClaims: { number: number; title: string; headSha: string; author: string }[];
}

interface RepoRow {
  full_name: string;
  installation_id: number | null;
  auto_loop: number | null;
  consecutive_failures: number;
  paused_since: number | null;
  disabled_reason: string | null;
  disabled_notified: string | null;
  first_seen_at: number;
  updated_at: number;
}

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

export class RepoStore {
  constructor(private readonly db: Db) {}

  /** The repo's state, created on first sight. */
  ensure(fullName: string, installationId: number | null, now: number): RepoState {
    this.db
      .prepare(
        `INSERT INTO repos (full_name, installation_id, first_seen_at, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT(full_name) DO UPDATE SET installation_id = COALESCE(excluded.installation_id, repos.installation_id)`,
      )
      .run(fullName, installationId, now, now);
    return this.get(fullName)!;
  }

  get(fullName: string): RepoState | undefined {
    const row = this.db.prepare('SELECT * FROM repos WHERE full_name = ?').get(fullName) as RepoRow | undefined;
    return row && toState(row);
  }

  list(): RepoState[] {
    return (this.db.prepare('SELECT * FROM repos ORDER BY full_name').all() as RepoRow[]).map(toState);
  }

  setAutoLoop(fullName: string, on: boolean, now: number): void {
    this.db.prepare('UPDATE repos SET auto_loop = ?, updated_at = ? WHERE full_name = ?').run(on ? 1 : 0, now, fullName);
  }

  /** +1 failure; pauses at the threshold. Returns the new state. */
  addFailure(fullName: string, threshold: number, now: number): RepoState {
    this.db
      .prepare(
        `UPDATE repos SET consecutive_failures = consecutive_failures + 1,
           paused_since = CASE WHEN paused_since IS NULL AND consecutive_failures + 1 >= ? THEN ? ELSE paused_since END,
           updated_at = ?
         WHERE full_name = ?`,
      )
      .run(threshold, now, now, fullName);
    return this.get(fullName)!;
  }

  /** A success resets the counter; it never un-pauses (only an explicit reset does). */
  resetFailures(fullName: string, now: number): void {
    this.db.prepare('UPDATE repos SET consecutive_failures = 0, updated_at = ? WHERE full_name = ?').run(now, fullName);
  }

  /** The explicit reset: clears the counter and the pause. */
  unpause(fullName: string, now: number): void {
    this.db
      .prepare('UPDATE repos SET consecutive_failures = 0, paused_since = NULL, updated_at = ? WHERE full_name = ?')
      .run(now, fullName);
  }

  setDisabled(fullName: string, reason: string | null, now: number): void {
    this.db.prepare('UPDATE repos SET disabled_reason = ?, updated_at = ? WHERE full_name = ?').run(reason, now, fullName);
  }

  /** Records what a pass read; a read that found the same as the last one writes nothing, so `readAt` is when it was first found so. */
  recordRead(fullName: string, read: RepoRead): void {
    const { readAt: _at, ...found } = read;
    const last = this.lastRead(fullName);
    if (last) {
      const { readAt: _was, ...before } = last;
      if (JSON.stringify(before) === JSON.stringify(found)) return;
    }
    this.db.prepare('UPDATE repos SET last_read = ? WHERE full_name = ?').run(JSON.stringify(read), fullName);
  }

  lastRead(fullName: string): RepoRead | null {
    const row = this.db.prepare('SELECT last_read FROM repos WHERE full_name = ?').get(fullName) as { last_read: string | null } | undefined;
    return row?.last_read ? (JSON.parse(row.last_read) as RepoRead) : null;
  }

  markDisabledNotified(fullName: string, reason: string): void {
    this.db.prepare('UPDATE repos SET disabled_notified = ? WHERE full_name = ?').run(reason, fullName);
  }
}
