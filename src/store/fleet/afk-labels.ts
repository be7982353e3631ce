import { allGrouped, type Sql } from '../sql/sql.js';
import { TABLES, type TableRow } from '../tables.js';

// TR24: each AFK issue's body as yoke first saw it labelled, and who applied the label.

export interface AfkLabel {
  repo: string;
  issueNumber: number;
  /** A digest of the body then (IssueView.bodyDigest). */
  bodyDigest: string;
  labelledBy: string | null;
  recordedAt: number;
  /** The edited body yoke last said it would not work unseen. */
  notifiedDigest: string | null;
}

const toLabel = (r: TableRow<'afk_labels'>): AfkLabel => ({
  repo: r.repo,
  issueNumber: Number(r.issue_number),
  bodyDigest: r.body_digest,
  labelledBy: r.labelled_by,
  recordedAt: Number(r.recorded_at),
  notifiedDigest: r.notified_digest,
});

export class AfkLabelStore {
  constructor(private readonly sql: Sql) {}

  async listForRepo(repo: string): Promise<AfkLabel[]> {
    return (await this.sql.all(TABLES.afk_labels, 'SELECT * FROM afk_labels WHERE repo = ?', [repo])).map(toLabel);
  }

  /** SC01: the AFK labels of each of these repositories, by repository. */
  async listForRepos(repos: readonly string[]): Promise<Map<string, AfkLabel[]>> {
    return allGrouped(
      this.sql,
      { shape: TABLES.afk_labels, statement: 'SELECT * FROM afk_labels WHERE repo IN (?)', values: repos },
      {
        keyOf: (r) => r.repo,
        map: toLabel,
      },
    );
  }

  /** Records (or, once confirmed, replaces) what the body was; the notice state goes with it. */
  async record(l: Omit<AfkLabel, 'notifiedDigest'>): Promise<void> {
    await this.sql.run(
      `INSERT INTO afk_labels (repo, issue_number, body_digest, labelled_by, recorded_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (repo, issue_number) DO UPDATE SET body_digest = excluded.body_digest, labelled_by = excluded.labelled_by, recorded_at = excluded.recorded_at, notified_digest = NULL`,
      [l.repo, l.issueNumber, l.bodyDigest, l.labelledBy, l.recordedAt],
    );
  }

  async setNotified(repo: string, issue: number, digest: string): Promise<void> {
    await this.sql.run('UPDATE afk_labels SET notified_digest = ? WHERE repo = ? AND issue_number = ?', [
      digest,
      repo,
      issue,
    ]);
  }
}
