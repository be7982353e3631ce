import { MIGRATIONS, type Migration } from './migrations/index.js';
import { postgresDdl, type Sql } from './sql.js';

// One set of migrations for both engines. Which of them a store still needs
// is a pure decision; applying them is the engine's. A store a newer yoke has
// migrated is refused: this yoke does not know what its tables mean.

export class SchemaTooNewError extends Error {
  constructor(
    readonly found: number,
    readonly known: number,
  ) {
    super(
      `The store's schema is at version ${found}, newer than this yoke knows (${known}): a newer yoke migrated it. Run that version of yoke (or newer) against it, or restore a backup taken before the upgrade.`,
    );
  }
}

/** What a store at these applied versions still needs, or that it is too new. */
export function planMigrations(applied: readonly number[], known: readonly Migration[] = MIGRATIONS): Migration[] {
  const latest = Math.max(0, ...known.map((m) => m.version));
  const newest = Math.max(0, ...applied);
  if (newest > latest) throw new SchemaTooNewError(newest, latest);
  const done = new Set(applied);
  return known.filter((m) => !done.has(m.version));
}

export const LATEST_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));

/** PostgreSQL: one transaction lock for every migrating process, so two starting at once apply each migration once. */
const MIGRATION_LOCK = 7_079_001;

const SCHEMA_TABLE =
  'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)';

/** Applies what the store still needs, each migration in its own transaction; returns how many. */
export async function migrateSql(sql: Sql, known: readonly Migration[] = MIGRATIONS): Promise<number> {
  const ddl = (s: string) => (sql.dialect === 'postgres' ? postgresDdl(s) : s);
  let count = 0;
  for (;;) {
    const applied = await sql.transaction(async (tx) => {
      if (tx.dialect === 'postgres') await tx.get('SELECT pg_advisory_xact_lock(?)', [MIGRATION_LOCK]);
      await tx.exec(ddl(SCHEMA_TABLE));
      const versions = (await tx.all<{ version: number }>('SELECT version FROM schema_migrations')).map(
        (r) => r.version,
      );
      const next = planMigrations(versions, known)[0];
      if (!next) return false;
      await tx.exec(tx.dialect === 'postgres' && next.postgres !== undefined ? next.postgres : ddl(next.sql));
      await tx.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
        next.version,
        next.name,
        new Date().toISOString(),
      ]);
      return true;
    });
    if (!applied) return count;
    count++;
  }
}

/** The version a store is at (0: never migrated). */
export async function schemaVersion(sql: Sql): Promise<number> {
  try {
    return (await sql.get<{ v: number | null }>('SELECT MAX(version) AS v FROM schema_migrations'))?.v ?? 0;
  } catch {
    return 0;
  }
}
