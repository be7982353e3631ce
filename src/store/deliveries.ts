import type { Db } from './db.js';

export class DeliveryStore {
  constructor(private readonly db: Db) {}

  /** Records a webhook delivery id; false when it was seen before. */
  firstSight(id: string, event: string, at: number): boolean {
    return this.db.prepare('INSERT OR IGNORE INTO deliveries (id, event, received_at) VALUES (?, ?, ?)').run(id, event, at).changes === 1;
  }
}
