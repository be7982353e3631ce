import { allGrouped, type Sql } from '../sql/sql.js';
import { TABLES, type TableRow } from '../tables.js';

// Items whose delivery is owed: from the merge of the claim PR until close-out.

export interface DeliveryItem {
  repo: string;
  issueNumber: number;
  prNumber: number;
  mergeSha: string;
  state: 'owed' | 'delivered';
  owedAt: number;
  labelled: boolean;
  deliveredAt: number | null;
}

type Row = TableRow<'delivery_items'>;

const toItem = (r: Row): DeliveryItem => ({
  repo: r.repo,
  issueNumber: r.issue_number,
  prNumber: r.pr_number,
  mergeSha: r.merge_sha,
  state: r.state,
  owedAt: r.owed_at,
  labelled: r.labelled === 1,
  deliveredAt: r.delivered_at,
});

export class DeliveryItemStore {
  constructor(private readonly sql: Sql) {}

  /** Records that an item's delivery is owed; false when it was already known. */
  async recordOwed(item: {
    repo: string;
    issueNumber: number;
    prNumber: number;
    mergeSha: string;
    at: number;
  }): Promise<boolean> {
    const res = await this.sql.run(
      "INSERT INTO delivery_items (repo, issue_number, pr_number, merge_sha, state, owed_at) VALUES (?, ?, ?, ?, 'owed', ?) ON CONFLICT DO NOTHING",
      [item.repo, item.issueNumber, item.prNumber, item.mergeSha, item.at],
    );
    return res.changes === 1;
  }

  async markLabelled(repo: string, issueNumber: number): Promise<void> {
    await this.sql.run('UPDATE delivery_items SET labelled = 1 WHERE repo = ? AND issue_number = ?', [
      repo,
      issueNumber,
    ]);
  }

  async markDelivered(repo: string, issueNumber: number, at: number): Promise<void> {
    await this.sql.run(
      "UPDATE delivery_items SET state = 'delivered', delivered_at = ? WHERE repo = ? AND issue_number = ?",
      [at, repo, issueNumber],
    );
  }

  async get(repo: string, issueNumber: number): Promise<DeliveryItem | undefined> {
    const row = await this.sql.get(
      TABLES.delivery_items,
      'SELECT * FROM delivery_items WHERE repo = ? AND issue_number = ?',
      [repo, issueNumber],
    );
    return row && toItem(row);
  }

  /** These issues' items, in one statement; an issue with no item is absent. */
  async forIssues(repo: string, issueNumbers: readonly number[]): Promise<Map<number, DeliveryItem>> {
    if (issueNumbers.length === 0) return new Map();
    const rows = await this.sql.all(
      TABLES.delivery_items,
      `SELECT * FROM delivery_items WHERE repo = ? AND issue_number IN (${issueNumbers.map(() => '?').join(', ')})`,
      [repo, ...issueNumbers],
    );
    return new Map(rows.map(toItem).map((i) => [i.issueNumber, i]));
  }

  /** SC01: the owed items of these repositories, by repository, each repository's as `listOwed` orders them. */
  async listOwedForRepos(repos: readonly string[]): Promise<Map<string, DeliveryItem[]>> {
    return allGrouped(
      this.sql,
      {
        shape: TABLES.delivery_items,
        statement: "SELECT * FROM delivery_items WHERE repo IN (?) AND state = 'owed' ORDER BY owed_at, issue_number",
        values: repos,
      },
      { keyOf: (r) => r.repo, map: toItem },
    );
  }

  async listOwed(repo: string): Promise<DeliveryItem[]> {
    return (
      await this.sql.all(
        TABLES.delivery_items,
        "SELECT * FROM delivery_items WHERE repo = ? AND state = 'owed' ORDER BY owed_at, issue_number",
        [repo],
      )
    ).map(toItem);
  }

  async listUnlabelled(): Promise<DeliveryItem[]> {
    return (
      await this.sql.all(TABLES.delivery_items, "SELECT * FROM delivery_items WHERE state = 'owed' AND labelled = 0")
    ).map(toItem);
  }
}
