import type { Sql } from './sql/sql.js';
import { int } from './sql/columns.js';

// Until when GitHub told yoke to send nothing for an installation, kept where
// every process sees it. A hold only grows: a later, shorter answer never cuts it.

export class RateHoldStore {
  constructor(private readonly sql: Sql) {}

  async hold(scope: string, until: number): Promise<void> {
    await this.sql.run(
      'INSERT INTO rate_holds (scope, until_ms) VALUES (?, ?) ON CONFLICT (scope) DO UPDATE SET until_ms = excluded.until_ms WHERE rate_holds.until_ms < excluded.until_ms',
      [scope, until],
    );
  }

  /** Until when the scope is held, or 0. */
  async until(scope: string): Promise<number> {
    return (
      (await this.sql.get({ until_ms: int }, 'SELECT until_ms FROM rate_holds WHERE scope = ?', [scope]))?.until_ms ?? 0
    );
  }
}
