import type { Sql } from '../sql/sql.js';

export class DeliveryStore {
  constructor(private readonly sql: Sql) {}

  /** Records a webhook delivery id; false when it was seen before. */
  async firstSight(id: string, event: string, at: number): Promise<boolean> {
    return (
      (
        await this.sql.run('INSERT INTO deliveries (id, event, received_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', [
          id,
          event,
          at,
        ])
      ).changes === 1
    );
  }
}
