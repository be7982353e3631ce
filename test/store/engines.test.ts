import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { storeBusy } from '../../src/delivery/gate/busy.js';
import { openDb } from '../../src/store/sql/db.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { postgresSql } from '../../src/store/sql/postgres-sql.js';
import { LATEST_VERSION, SchemaTooNewError, migrateSql, schemaVersion } from '../../src/store/sql/schema.js';
import { numberPlaceholders, postgresDdl, type Sql } from '../../src/store/sql/sql.js';
import { StuckTransaction, sqliteSql } from '../../src/store/sql/sqlite-sql.js';
import { havePostgres, usePostgres } from '../helpers/postgres.js';
import { int, pick, text } from '../../src/store/sql/columns.js';
import { TABLES } from '../../src/store/tables.js';

// The store's one SQL interface on both engines: SQLite (`:memory:`) and a
// real PostgreSQL. The same migrations, the same statements, the same answers.

const pgServer = usePostgres();
const open: Sql[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close().catch(() => undefined);
});

const engines: { name: string; skip: boolean; make: () => Promise<Sql> }[] = [
  { name: 'SQLite', skip: false, make: async () => sqliteSql(new Database(':memory:')) },
  { name: 'PostgreSQL', skip: !havePostgres, make: async () => postgresSql(await pgServer.db()) },
];

for (const engine of engines) {
  const make = async () => {
    const s = await engine.make();
    open.push(s);
    return s;
  };

  describe.skipIf(engine.skip)(`the store's SQL on ${engine.name}`, () => {
    it('applies every migration once, in order, and records them', async () => {
      const sql = await make();
      expect(await migrateSql(sql)).toBe(MIGRATIONS.length);
      expect(await migrateSql(sql)).toBe(0);
      expect(
        (await sql.all({ version: int }, 'SELECT version FROM schema_migrations ORDER BY version')).map(
          (r) => r.version,
        ),
      ).toEqual(MIGRATIONS.map((m) => m.version));
      expect(await schemaVersion(sql)).toBe(LATEST_VERSION);
    });

    it('refuses a store a newer yoke migrated, saying what to do', async () => {
      const sql = await make();
      await migrateSql(sql);
      await sql.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
        LATEST_VERSION + 1,
        'from the future',
        'now',
      ]);
      await expect(migrateSql(sql)).rejects.toThrow(new SchemaTooNewError(LATEST_VERSION + 1, LATEST_VERSION).message);
      expect(new SchemaTooNewError(12, 11).message).toBe(
        "The store's schema is at version 12, newer than this yoke knows (11): a newer yoke migrated it. Run that version of yoke (or newer) against it, or restore a backup taken before the upgrade.",
      );
    });

    it('answers the same: whole numbers as numbers, ON CONFLICT, RETURNING, changes', async () => {
      const sql = await make();
      await migrateSql(sql);
      const at = Date.UTC(2026, 11, 1); // milliseconds: past 2^31, so 64-bit
      expect(
        await sql.run('INSERT INTO repos (full_name, installation_id, first_seen_at, updated_at) VALUES (?, ?, ?, ?)', [
          'acme/api',
          7,
          at,
          at,
        ]),
      ).toEqual({ changes: 1 });
      expect(
        await sql.run(
          'INSERT INTO repos (full_name, installation_id, first_seen_at, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (full_name) DO NOTHING',
          ['acme/api', 7, at, at],
        ),
      ).toEqual({ changes: 0 });
      expect(
        await sql.get(
          pick(TABLES.repos, 'full_name', 'installation_id', 'first_seen_at', 'consecutive_failures'),
          'SELECT full_name, installation_id, first_seen_at, consecutive_failures FROM repos WHERE full_name = ?',
          ['acme/api'],
        ),
      ).toEqual({ full_name: 'acme/api', installation_id: 7, first_seen_at: at, consecutive_failures: 0 });
      expect(await sql.get({ n: int }, 'SELECT COUNT(*) AS n FROM repos')).toEqual({ n: 1 });
      const made = await sql.get(
        { id: int },
        "INSERT INTO requests (repo, kind, number, requested_by, requested_at) VALUES ('acme/api', 'start', 3, 'maint', ?) RETURNING id",
        [at],
      );
      expect(made?.id).toBeGreaterThan(0);
      // A question mark inside quoted text is text, not a placeholder.
      expect(await sql.get({ t: text }, "SELECT 'why?' AS t")).toEqual({ t: 'why?' });
    });

    it('a transaction commits when it resolves and rolls back when it throws', async () => {
      const sql = await make();
      await migrateSql(sql);
      await sql.transaction(
        async (tx) =>
          void (await tx.run('INSERT INTO repos (full_name, first_seen_at, updated_at) VALUES (?, 1, 1)', ['a/kept'])),
      );
      await expect(
        sql.transaction(async (tx) => {
          await tx.run('INSERT INTO repos (full_name, first_seen_at, updated_at) VALUES (?, 1, 1)', ['a/lost']);
          throw new Error('changed my mind');
        }),
      ).rejects.toThrow('changed my mind');
      expect(
        (await sql.all({ full_name: text }, 'SELECT full_name FROM repos ORDER BY full_name')).map((r) => r.full_name),
      ).toEqual(['a/kept']);
    });

    it('a statement from outside an open transaction is not part of it: it is kept when the transaction rolls back', async () => {
      const sql = await make();
      await migrateSql(sql);
      const insert = (via: Sql, name: string) =>
        via.run('INSERT INTO repos (full_name, first_seen_at, updated_at) VALUES (?, 1, 1)', [name]);
      let release!: () => void;
      let opened!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const open = new Promise<void>((r) => (opened = r));
      const failing = sql.transaction(async (tx) => {
        await insert(tx, 'a/inside');
        await tx.transaction(async (inner) => void (await insert(inner, 'a/nested')));
        opened();
        // (PostgreSQL may wait on anything; SQLite's transaction must end within its turn, so it is held only there.)
        if (tx.dialect === 'postgres') await held;
        throw new Error('rolled back');
      });
      await open;
      const outsider = insert(sql, 'a/outside');
      release();
      await expect(failing).rejects.toThrow('rolled back');
      await outsider;
      expect(
        (await sql.all({ full_name: text }, 'SELECT full_name FROM repos ORDER BY full_name')).map((r) => r.full_name),
      ).toEqual(['a/outside']);
    });
  });
}

describe.skipIf(!havePostgres)('both engines hold one schema', () => {
  it('every table has the same columns on SQLite and on PostgreSQL', async () => {
    const lite = sqliteSql(new Database(':memory:'));
    const post = postgresSql(await pgServer.db());
    open.push(lite, post);
    await migrateSql(lite);
    await migrateSql(post);
    const tables = (
      await lite.all(
        { name: text },
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
    ).map((t) => t.name);
    const liteColumns: Record<string, string[]> = {};
    for (const t of tables)
      liteColumns[t] = (await lite.all({ name: text }, `SELECT name FROM pragma_table_info('${t}') ORDER BY name`)).map(
        (c) => c.name,
      );
    const rows = await post.all(
      { table_name: text, column_name: text },
      "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, column_name",
    );
    const postColumns: Record<string, string[]> = {};
    for (const r of rows) (postColumns[r.table_name] ??= []).push(r.column_name);
    for (const t of Object.keys(postColumns)) postColumns[t]!.sort();
    for (const t of Object.keys(liteColumns)) liteColumns[t]!.sort();
    expect(postColumns).toEqual(liteColumns);
    expect(tables.length).toBeGreaterThan(20);
  });

  it('two processes migrating one PostgreSQL at once apply each migration once', async () => {
    const url = await pgServer.db();
    const a = postgresSql(url);
    const b = postgresSql(url);
    open.push(a, b);
    const [na, nb] = await Promise.all([migrateSql(a), migrateSql(b)]);
    expect(na + nb).toBe(MIGRATIONS.length);
    expect(await a.get({ n: int }, 'SELECT COUNT(*) AS n FROM schema_migrations')).toEqual({ n: MIGRATIONS.length });
  });
});

describe.skipIf(!havePostgres)("PostgreSQL's busy answers", () => {
  it('a real lock_timeout is lock_not_available (55P03), answered as lock_timeout', async () => {
    const url = await pgServer.db();
    const holder = postgresSql(url);
    const waiter = postgresSql(url, { lockTimeoutMs: 100 });
    open.push(holder, waiter);
    await migrateSql(holder);
    await holder.run("INSERT INTO repos (full_name, first_seen_at, updated_at) VALUES ('acme/api', 1, 1)");
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const holding = holder.transaction(async (tx) => {
      await tx.run("UPDATE repos SET updated_at = 2 WHERE full_name = 'acme/api'");
      await held;
    });
    await new Promise((r) => setTimeout(r, 100));
    const err = await waiter
      .run("UPDATE repos SET updated_at = 3 WHERE full_name = 'acme/api'")
      .catch((e: unknown) => e);
    release();
    await holding;
    expect((err as { code?: string }).code).toBe('55P03');
    expect(storeBusy(err)).toEqual({
      code: 'lock_timeout',
      status: 503,
      message: expect.stringContaining('lock timeout'),
      recovery: expect.any(String),
    });
  });

  it('a real statement_timeout is query_canceled (57014), answered as statement_cancelled', async () => {
    const slow = postgresSql(await pgServer.db(), { statementTimeoutMs: 100 });
    open.push(slow);
    const err = await slow.get({}, 'SELECT pg_sleep(2)').catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('57014');
    expect(storeBusy(err)?.code).toBe('statement_cancelled');
    expect(storeBusy(new Error('syntax error'))).toBeNull();
  });
});

describe('SQLite transactions', () => {
  it('one that waits on anything but its own statements (here the outer handle, which would wait for it forever) is rolled back with an error that says so', async () => {
    const sql = sqliteSql(new Database(':memory:'));
    open.push(sql);
    await migrateSql(sql);
    const err = await sql
      .transaction(async (tx) => {
        await tx.run("INSERT INTO repos (full_name, first_seen_at, updated_at) VALUES ('a/in', 1, 1)");
        await sql.run("INSERT INTO repos (full_name, first_seen_at, updated_at) VALUES ('a/outer', 1, 1)");
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StuckTransaction);
    expect((err as Error).message).toBe(
      "A store transaction waited on something other than its own statements (a statement through the outer store instead of the transaction's, or I/O) and was rolled back. Inside store.write, use the store it hands you, and do no I/O.",
    );
    // The outer statement ran once the transaction was out of its way; the transaction's own did not stay.
    await new Promise((r) => setTimeout(r, 10));
    expect((await sql.all({ full_name: text }, 'SELECT full_name FROM repos')).map((r) => r.full_name)).toEqual([
      'a/outer',
    ]);
  });
});

describe('the SQL written once', () => {
  it('numbers placeholders for PostgreSQL, leaving quoted text and comments alone', () => {
    expect(numberPlaceholders('SELECT ? , \'?\', "a?" -- why?\n, ?')).toBe('SELECT $1 , \'?\', "a?" -- why?\n, $2');
    // TR28: block comments, dollar quotes, doubled quotes and E'' escapes hold no placeholder.
    expect(numberPlaceholders("SELECT /* ? */ ?, $$ ? $$, $t$ ? $t$, 'it''s ?', E'a\\' ?', ?")).toBe(
      "SELECT /* ? */ $1, $$ ? $$, $t$ ? $t$, 'it''s ?', E'a\\' ?', $2",
    );
    expect(numberPlaceholders('SELECT $1::text, ?')).toBe('SELECT $1::text, $1');
  });

  it("takes PostgreSQL's types for SQLite's in a migration", () => {
    expect(postgresDdl('id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, usd REAL')).toBe(
      'id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, at BIGINT NOT NULL, usd DOUBLE PRECISION',
    );
  });

  it('the embedded store refuses a newer schema at open, before anything reads it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'yoke-schema-'));
    try {
      const path = join(dir, 'yoke.db');
      const db = openDb(path);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        LATEST_VERSION + 5,
        'future',
        'now',
      );
      db.close();
      expect(() => openDb(path)).toThrow(new SchemaTooNewError(LATEST_VERSION + 5, LATEST_VERSION).message);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
