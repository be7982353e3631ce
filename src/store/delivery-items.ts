import type { Db } from './db.js';

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

interface Row {
  repo: string;
  issue_number: number;
  pr_number: number;
  merge_sha: string;
  state: 'owed' | 'delivered';
  owed_at: number;
  labelled: number;
  delivered_at: number | null;
}

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
  constructor(private readonly db: Db) {}

  /** Records that an item's delivery is owed; false when it was already known. */
  recordOwed(item: { repo: string; issueNumber: number; prNumber: number; mergeSha: string; at: number }): boolean {
    const res = this.db
      .prepare("INSERT OR IGNORE INTO delivery_items (repo, issue_number, pr_number, merge_sha, state, owed_at) VALUES (?, ?, ?, ?, 'owed', ?)")
      .run(item.repo, item.issueNumber, item.prNumber, item.mergeSha, item.at);
    return res.changes === 1;
  }

  markLabelled(repo: string, issueNumber: number): void {
    this.db.prepare('UPDATE delivery_items SET labelled = 1 WHERE repo = ? AND issue_number = ?').run(repo, issueNumber);
  }

  markDelivered(repo: string, issueNumber: number, at: number): void {
    this.db.prepare("UPDATE delivery_items SET state = 'delivered', delivered_at = ? WHERE repo = ? AND issue_number = ?").run(at, repo, issueNumber);
  }

  get(repo: string, issueNumber: number): DeliveryItem | undefined {
    const row = this.db.prepare('SELECT * FROM delivery_items WHERE repo = ? AND issue_number = ?').get(repo, issueNumber) as Row | undefined;
    return row && toItem(row);
  }

  listOwed(repo: string): DeliveryItem[] {
    return (this.db.prepare("SELECT * FROM delivery_items WHERE repo = ? AND state = 'owed' ORDER BY owed_at, issue_number").all(repo) as Row[]).map(toItem);
  }

  listUnlabelled(): DeliveryItem[] {
    return (this.db.prepare("SELECT * FROM delivery_items WHERE state = 'owed' AND labelled = 0").all() as Row[]).map(toItem);
  }
}
