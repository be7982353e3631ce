import type { Db } from './db.js';

// Named contention points held across an await (an ownership freeze reads
// GitHub before it writes; a start reads before it creates). Another caller
// meanwhile is answered busy, naming the holder. A lock older than staleMs
// (its holder crashed) may be taken.

export class WorkLockStore {
  constructor(private readonly db: Db) {}

  /** Takes the lock; null when taken, else who holds it and since when. */
  take(name: string, holder: string, now: number, staleMs: number): { holder: string; since: number } | null {
    return this.db.transaction(() => {
      const row = this.db.prepare('SELECT holder, since FROM work_locks WHERE name = ?').get(name) as { holder: string; since: number } | undefined;
      if (row && row.holder !== holder && now - row.since < staleMs) return row;
      this.db.prepare('INSERT INTO work_locks (name, holder, since) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, since = excluded.since').run(name, holder, now);
      return null;
    }).immediate();
  }

  held(name: string, now: number, staleMs: number): { holder: string; since: number } | null {
    const row = this.db.prepare('SELECT holder, since FROM work_locks WHERE name = ?').get(name) as { holder: string; since: number } | undefined;
    return row && now - row.since < staleMs ? row : null;
  }

  release(name: string, holder: string): void {
    this.db.prepare('DELETE FROM work_locks WHERE name = ? AND holder = ?').run(name, holder);
  }
}
