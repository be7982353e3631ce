import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { openDb } from '../../src/store/sql/db.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { postgresSql } from '../../src/store/sql/postgres-sql.js';
import { LATEST_VERSION, migrateSql } from '../../src/store/sql/schema.js';
import { sqliteSql } from '../../src/store/sql/sqlite-sql.js';
import { openStore } from '../../src/store/store.js';
import { havePostgres, usePostgres } from '../helpers/postgres.js';
import { int, pick } from '../../src/store/sql/columns.js';
import { TABLES } from '../../src/store/tables.js';

// `yoke db migrate` and `yoke db copy` as an operator runs them: whole output compared.

const pgServer = usePostgres();
const dir = mkdtempSync(join(tmpdir(), 'yoke-db-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const file = () => join(dir, `store-${++files}.db`);

async function yoke(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { out: (l) => out.push(l), err: (l) => err.push(l), env, fetch });
  return { code, out, err };
}

/** A SQLite store with some of everything yoke keeps, written through the store itself. */
async function storeWithData(path: string): Promise<void> {
  const s = openStore(path);
  const at = Date.UTC(2026, 11, 1);
  await s.repos.ensure('acme/api', 7, at);
  await s.repos.addFailure('acme/api', 3, at);
  for (let i = 1; i <= 3; i++)
    await s.runs.insert({
      id: `r${i}`,
      repo: 'acme/api',
      kind: 'afk_auto',
      subject: `issue#${i}`,
      issueNumber: i,
      prNumber: null,
      headSha: null,
      launchedAt: at + i,
      budgetDeadline: at + 3600_000,
      launcher: 'command',
      launcherRef: null,
      secretHash: null,
      capAtLaunch: 2,
      liveAtLaunch: 1,
    });
  await s.runs.end('r1', 'failure', 'ran out of budget', at + 10);
  for (let i = 1; i <= 2; i++) await s.requests.add('acme/api', 'start', i, 'maint', at);
  await s.close();
}

describe('yoke db migrate', () => {
  it('brings a SQLite store up to the latest schema, once', async () => {
    const path = file();
    const old = sqliteSql(openDb(path, { migrate: false }));
    await migrateSql(old, MIGRATIONS.slice(0, 4));
    await old.close();
    expect(await yoke(['db', 'migrate', '--db', path])).toEqual({
      code: 0,
      out: [`${path}: migrated from schema version 4 to ${LATEST_VERSION} (${LATEST_VERSION - 4} migration(s)).`],
      err: [],
    });
    expect(await yoke(['db', 'migrate'], { YOKE_DB_PATH: path })).toEqual({
      code: 0,
      out: [`${path}: at schema version ${LATEST_VERSION}, the latest; nothing to do.`],
      err: [],
    });
  });

  it('refuses a store a newer yoke migrated, and changes nothing', async () => {
    const path = file();
    const db = openDb(path);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
      LATEST_VERSION + 1,
      'future',
      'now',
    );
    db.close();
    expect(await yoke(['db', 'migrate', '--db', path])).toEqual({
      code: 1,
      out: [],
      err: [
        `The store's schema is at version ${LATEST_VERSION + 1}, newer than this yoke knows (${LATEST_VERSION}): a newer yoke migrated it. Run that version of yoke (or newer) against it, or restore a backup taken before the upgrade.`,
      ],
    });
  });

  it.skipIf(!havePostgres)('migrates a PostgreSQL database named by YOKE_DATABASE_URL', async () => {
    const url = await pgServer.db();
    expect(await yoke(['db', 'migrate'], { YOKE_DATABASE_URL: url, YOKE_DB_PATH: file() })).toEqual({
      code: 0,
      out: [`${url}: migrated from schema version 0 to ${LATEST_VERSION} (${LATEST_VERSION} migration(s)).`],
      err: [],
    });
  });

  it('names an unreachable PostgreSQL and what to check', async () => {
    const r = await yoke(['db', 'migrate', '--db', 'postgres://yoke:secret@127.0.0.1:1/yoke']);
    expect(r.code).toBe(1);
    expect(r.err).toEqual([
      expect.stringMatching(
        /^Could not use PostgreSQL at postgres:\/\/yoke:\*\*\*@127\.0\.0\.1:1\/yoke: connect ECONNREFUSED 127\.0\.0\.1:1\. Check that it is running and that the URL names a database and a user that may connect\.$/,
      ),
    ]);
  });
});

describe.skipIf(!havePostgres)('yoke db copy', () => {
  it('moves a SQLite store into an empty PostgreSQL, counts every table, and ids go on after the copied ones', async () => {
    const from = file();
    await storeWithData(from);
    const to = await pgServer.db();
    const r = await yoke(['db', 'copy', '--from', from, '--to', to]);
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('  runs: 3');
    expect(r.out).toContain('  requests: 2');
    expect(r.out).toContain('  repos: 1');
    expect(r.out.at(-1)).toMatch(
      new RegExp(
        `^Copied \\d+ row\\(s\\) in \\d+ tables from ${from.replace(/[.]/g, '\\.')} to ${to.replace(/[.]/g, '\\.')}; every count matches\\.$`,
      ),
    );
    const pg = postgresSql(to);
    try {
      expect(
        await pg.get(
          pick(TABLES.repos, 'consecutive_failures', 'installation_id'),
          'SELECT consecutive_failures, installation_id FROM repos',
        ),
      ).toEqual({
        consecutive_failures: 1,
        installation_id: 7,
      });
      expect(
        await pg.get(
          pick(TABLES.runs, 'outcome', 'outcome_reason'),
          "SELECT outcome, outcome_reason FROM runs WHERE id = 'r1'",
        ),
      ).toEqual({
        outcome: 'failure',
        outcome_reason: 'ran out of budget',
      });
      const next = await pg.get(
        { id: int },
        "INSERT INTO requests (repo, kind, number, requested_by, requested_at) VALUES ('acme/api', 'start', 9, 'maint', 1) RETURNING id",
      );
      expect(next!.id).toBe(3);
    } finally {
      await pg.close();
    }
    // A second copy into the same database is refused, and adds nothing.
    const again = await yoke(['db', 'copy', '--from', from, '--to', to]);
    expect(again).toEqual({
      code: 1,
      out: [],
      err: [
        expect.stringMatching(
          /^.+ already holds yoke data \(\d+ row\(s\) in \w+\)\. Copy into an empty database: nothing was copied\.$/,
        ),
      ],
    });
  });

  it('TR28 refuses a store file that names a table or column yoke did not make, so nothing it names reaches SQL as text', async () => {
    for (const [sql, said] of [
      [
        'CREATE TABLE "runs; DROP TABLE repos; --" (a TEXT)',
        'a table "runs; DROP TABLE repos; --" that yoke\'s schema does not',
      ],
      [
        'ALTER TABLE repos ADD COLUMN "x"", (SELECT 1)) --" TEXT',
        'table repos has a column "x\\", (SELECT 1)) --" that yoke\'s schema does not',
      ],
    ] as const) {
      const from = file();
      await storeWithData(from);
      const db = openDb(from, { migrate: false });
      db.exec(sql);
      db.close();
      const to = await pgServer.db();
      const r = await yoke(['db', 'copy', '--from', from, '--to', to]);
      expect(r.code).toBe(1);
      expect(r.err).toEqual([
        `${from}${said.startsWith('table') ? "'s " : ' has '}${said}: it is not a store yoke wrote. Nothing was copied.`,
      ]);
      const pg = postgresSql(to);
      try {
        expect(await pg.get({ n: int }, 'SELECT COUNT(*) AS n FROM repos')).toEqual({ n: 0 });
      } finally {
        await pg.close();
      }
    }
  });

  it('refuses a store that is not up to date, with the command that brings it up', async () => {
    const from = file();
    const old = sqliteSql(openDb(from, { migrate: false }));
    await migrateSql(old, MIGRATIONS.slice(0, 6));
    await old.close();
    expect(await yoke(['db', 'copy', '--from', from, '--to', await pgServer.db()])).toEqual({
      code: 1,
      out: [],
      err: [
        `${from} is at schema version 6; this yoke's is ${LATEST_VERSION}. Bring it up to date first: \`yoke db migrate --db ${from}\`, then copy again.`,
      ],
    });
  });

  it('names the fix for a missing file or the wrong kind of target', async () => {
    expect(await yoke(['db', 'copy', '--from', join(dir, 'nope.db'), '--to', 'postgres://yoke@127.0.0.1:1/x'])).toEqual(
      {
        code: 1,
        out: [],
        err: [
          `${join(dir, 'nope.db')}: There is no SQLite store at ${join(dir, 'nope.db')}. Name yoke's database file (YOKE_DB_PATH; .yoke/yoke.db by default).`,
        ],
      },
    );
    expect(await yoke(['db', 'copy', '--from', file(), '--to', join(dir, 'other.db')])).toEqual({
      code: 1,
      out: [],
      err: [`--to must be a postgres:// URL, not ${join(dir, 'other.db')}.`],
    });
  });
});
