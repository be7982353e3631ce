import type { Command } from 'commander';
import { CopyRefused, copyStore } from '../store/sql/copy.js';
import { defaultDatabase, isPostgresUrl, openSql, printable } from '../store/sql/open-sql.js';
import { LATEST_VERSION, SchemaTooNewError, migrateSql, schemaVersion } from '../store/sql/schema.js';
import type { Sql } from '../store/sql/sql.js';
import { CliFailure, type CliIo } from './client.js';
import { errorText } from '../kernel/error-text.js';
import { textField } from '../kernel/guards.js';

// `yoke db migrate` and `yoke db copy`: the store itself, offline from any
// running yoke. Both engines take the same migrations; a copy moves a SQLite
// store into an empty PostgreSQL and checks every count.

/** What went wrong reaching or using a database, as a person can act on it. */
function dbFailure(target: string, err: unknown): CliFailure {
  if (err instanceof SchemaTooNewError || err instanceof CopyRefused || err instanceof CliFailure)
    return new CliFailure(err.message);
  const code = textField(err, 'code');
  const detail = errorText(err);
  if (
    isPostgresUrl(target) &&
    (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === '3D000' || code === '28P01' || code === '28000')
  ) {
    return new CliFailure(
      `Could not use PostgreSQL at ${printable(target)}: ${detail}. Check that it is running and that the URL names a database and a user that may connect.`,
    );
  }
  return new CliFailure(`${printable(target)}: ${detail}`);
}

async function withSql<T>(
  target: string,
  opts: Parameters<typeof openSql>[1],
  fn: (sql: Sql) => Promise<T>,
): Promise<T> {
  let sql: Sql | null = null;
  try {
    sql = openSql(target, opts);
    return await fn(sql);
  } catch (err) {
    throw dbFailure(target, err);
  } finally {
    await sql?.close().catch(() => undefined);
  }
}

export function registerDbCommands(program: Command, io: CliIo): void {
  const db = program.command('db').description("yoke's store: SQLite (the default) or PostgreSQL");
  db.command('migrate')
    .description("bring a store up to this yoke's schema (start does the same)")
    .option(
      '--db <path-or-url>',
      'a SQLite file or a postgres:// URL (default $YOKE_DATABASE_URL, else $YOKE_DB_PATH, else .yoke/yoke.db)',
    )
    .action(async (o: { db?: string }) => {
      const target = o.db ?? defaultDatabase(io.env);
      await withSql(target, { migrate: false }, async (sql) => {
        const before = await schemaVersion(sql);
        const applied = await migrateSql(sql);
        io.out(
          applied
            ? `${printable(target)}: migrated from schema version ${before} to ${LATEST_VERSION} (${applied} migration(s)).`
            : `${printable(target)}: at schema version ${LATEST_VERSION}, the latest; nothing to do.`,
        );
      });
    });
  db.command('copy')
    .description('move a SQLite store into an empty PostgreSQL database, checking every count')
    .requiredOption('--from <path>', 'the SQLite file (yoke stopped)')
    .requiredOption('--to <url>', 'the postgres:// URL of an empty database')
    .action(async (o: { from: string; to: string }) => {
      if (isPostgresUrl(o.from)) throw new CliFailure(`--from names a SQLite file, not ${printable(o.from)}.`);
      if (!isPostgresUrl(o.to)) throw new CliFailure(`--to must be a postgres:// URL, not ${o.to}.`);
      await withSql(o.from, { mustExist: true, migrate: false }, (from) =>
        withSql(o.to, {}, async (to) => {
          const copied = await copyStore(from, to, { from: o.from, to: printable(o.to) });
          for (const t of copied.filter((c) => c.rows > 0)) io.out(`  ${t.table}: ${t.rows}`);
          io.out(
            `Copied ${copied.reduce((a, t) => a + t.rows, 0)} row(s) in ${copied.length} tables from ${o.from} to ${printable(o.to)}; every count matches.`,
          );
        }),
      );
    });
}
