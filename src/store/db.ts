import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { MIGRATIONS } from './migrations/index.js';
import { planMigrations } from './schema.js';

export type Db = Database.Database;

/** Opens the store (a file in WAL mode, or `:memory:`) and applies pending migrations. */
export function openDb(path: string, opts: { busyTimeoutMs?: number; migrate?: boolean } = {}): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 5000}`);
  db.pragma('foreign_keys = ON');
  if (opts.migrate !== false) migrate(db);
  return db;
}

export function migrate(db: Db): number {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
  );
  const applied = (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map(
    (r) => r.version,
  );
  let count = 0;
  // A store a newer yoke migrated is refused here (SchemaTooNewError), before anything reads it.
  for (const m of planMigrations(applied, MIGRATIONS)) {
    db.transaction(() => {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        m.version,
        m.name,
        new Date().toISOString(),
      );
    })();
    count++;
  }
  return count;
}
