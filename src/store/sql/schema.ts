import { MIGRATIONS, type Migration } from '../migrations/index.js';
import { createHash } from 'node:crypto';
import { int, nullable, text, type RowOf, type Shape } from './columns.js';
import { postgresDdl, type Dialect, type Sql, type SqlParam } from './sql.js';

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

/** The store's own bookkeeping: which migrations it applied, and the text of each as it ran (a checksum). */
export const SCHEMA_TABLES = ['schema_migrations', 'schema_checksums'] as const;

const SCHEMA_DDL = [
  'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
  'CREATE TABLE IF NOT EXISTS schema_checksums (version INTEGER PRIMARY KEY, checksum TEXT NOT NULL)',
];

/** A migration's checksum: of its text for both engines, so an edit to either is seen. */
export const checksumOf = (m: Migration): string =>
  createHash('sha256')
    .update(`${m.sql}\0${m.postgres ?? ''}`)
    .digest('hex');

/** A shipped migration whose text changed after this store applied it. */
export class MigrationEditedError extends Error {
  constructor(readonly migration: Migration) {
    super(
      `Migration ${migration.version} (${migration.name}) is not the text this store applied: it was edited after it shipped. A shipped migration is never changed; restore its text and put the change in a new migration (the next version).`,
    );
  }
}

/** One statement the runner asks its driver for; a `rows` step is answered with the rows it read. */
type Step =
  { exec: string } | { rows: string; shape: Shape; params?: SqlParam[] } | { run: string; params: SqlParam[] };
type Row = Record<string, unknown>;
const APPLIED = { version: int, checksum: nullable(text) };

/**
 * The one migration runner, as the steps of one transaction: it checks the
 * checksums of what the store applied (recording those an older yoke did not)
 * and applies the next migration the store needs. Returns the one it applied,
 * or null when the store is up to date. Each engine's driver runs the steps:
 * synchronously on better-sqlite3 as the embedded store opens (`db.ts`
 * `migrate`), through the async interface otherwise (`migrateSql`).
 */
export function* migrationTransaction(
  dialect: Dialect,
  known: readonly Migration[],
  appliedAt: string,
): Generator<Step, Migration | null, Row[] | undefined> {
  const ddl = (s: string) => (dialect === 'postgres' ? postgresDdl(s) : s);
  if (dialect === 'postgres') yield { rows: 'SELECT pg_advisory_xact_lock(?)', shape: {}, params: [MIGRATION_LOCK] };
  for (const s of SCHEMA_DDL) yield { exec: ddl(s) };
  const applied = ((yield {
    rows: 'SELECT m.version AS version, c.checksum AS checksum FROM schema_migrations m LEFT JOIN schema_checksums c ON c.version = m.version',
    shape: APPLIED,
  }) ?? []) as RowOf<typeof APPLIED>[];
  const next = planMigrations(
    applied.map((r) => r.version),
    known,
  )[0];
  for (const r of applied) {
    const m = known.find((k) => k.version === r.version);
    if (!m) continue;
    if (r.checksum === null)
      yield {
        run: 'INSERT INTO schema_checksums (version, checksum) VALUES (?, ?)',
        params: [m.version, checksumOf(m)],
      };
    else if (r.checksum !== checksumOf(m)) throw new MigrationEditedError(m);
  }
  if (!next) return null;
  yield { exec: dialect === 'postgres' && next.postgres !== undefined ? next.postgres : ddl(next.sql) };
  yield {
    run: 'INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)',
    params: [next.version, next.name, appliedAt],
  };
  yield {
    run: 'INSERT INTO schema_checksums (version, checksum) VALUES (?, ?)',
    params: [next.version, checksumOf(next)],
  };
  return next;
}

/** Runs one transaction's steps through `step`, which answers each (the async driver). */
async function driveAsync(steps: ReturnType<typeof migrationTransaction>, tx: Sql): Promise<Migration | null> {
  let r = steps.next();
  while (!r.done) {
    const s = r.value;
    if ('exec' in s) r = steps.next(void (await tx.exec(s.exec)));
    else if ('rows' in s) r = steps.next(await tx.all(s.shape, s.rows, s.params));
    else r = steps.next(void (await tx.run(s.run, s.params)));
  }
  return r.value;
}

/** Applies what the store still needs, each migration in its own transaction; returns how many. */
export async function migrateSql(sql: Sql, known: readonly Migration[] = MIGRATIONS): Promise<number> {
  let count = 0;
  while (
    await sql.transaction((tx) => driveAsync(migrationTransaction(tx.dialect, known, new Date().toISOString()), tx))
  )
    count++;
  return count;
}

/** The version a store is at (0: never migrated). */
export async function schemaVersion(sql: Sql): Promise<number> {
  try {
    return (await sql.get({ v: nullable(int) }, 'SELECT MAX(version) AS v FROM schema_migrations'))?.v ?? 0;
  } catch {
    return 0;
  }
}
