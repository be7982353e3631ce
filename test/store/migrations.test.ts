import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/sql/db.js';
import { MIGRATIONS, type Migration } from '../../src/store/migrations/index.js';
import { checksumOf, MigrationEditedError, migrateSql } from '../../src/store/sql/schema.js';
import type { Sql, SqlParam } from '../../src/store/sql/sql.js';
import { catalogue, type CatalogueColumn } from '../helpers/catalogue.js';
import { useEngines } from '../helpers/engines.js';
import { int, text } from '../../src/store/sql/columns.js';

// The one migration runner on both engines: a shipped migration's text is
// recorded as it is applied and an edited one is refused; and every
// migration runs over a store that holds rows, one version at a time, not
// only over an empty one.

/** The shipped migrations with one of them edited (a comment added to its text). */
const editedAt = (version: number): Migration[] =>
  MIGRATIONS.map((m) => (m.version === version ? { ...m, sql: `${m.sql}\n-- edited after it shipped\n` } : m));

/** The values each CHECK (col IN (…)) of the migrations allows, by table and column (a rebuilt `x_new` table is `x`). */
function checkedValues(): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of MIGRATIONS)
    for (const table of m.sql.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?(\w+) \(([\s\S]*?)\n\)/g))
      for (const col of table[2]!.matchAll(/^\s*(\w+) [^\n]*?CHECK \(\1 IN \('([^']*)'/gm))
        out.set(`${table[1]!.replace(/_new$/, '')}.${col[1]}`, col[2]!);
  return out;
}

/** Columns a table-wide CHECK ties together: one of them is given a value. */
const TIED: Record<string, string[]> = { qa_verdicts: ['issue_number'] };

/** Tables only the database's triggers write (migration 30): the rows the others get give them theirs. */
const WRITTEN_BY_TRIGGERS = new Set(['repo_versions']);

/** A row for each table, its values made from `n` so each round's rows are new (keys included), and references meet. */
async function addSampleRows(sql: Sql, n: number): Promise<void> {
  const checks = checkedValues();
  const value = (table: string, c: CatalogueColumn): SqlParam =>
    checks.get(`${table}.${c.name}`) ?? (c.type === 'integer' ? n : c.type === 'real' ? n + 0.5 : `s${n}`);
  let left = [...(await catalogue(sql)).entries()].filter(([table]) => !WRITTEN_BY_TRIGGERS.has(table));
  const errors: string[] = [];
  // Referenced tables first: what cannot go in yet is tried again after the rest.
  for (let round = 0; left.length && round < 5; round++) {
    const failed: typeof left = [];
    errors.length = 0;
    for (const [table, cols] of left) {
      const given = cols.filter(
        (c) => (c.notNull && !(c.hasDefault && c.primaryKey)) || TIED[table]?.includes(c.name) || c.primaryKey,
      );
      const text = `INSERT INTO ${table} (${given.map((c) => `"${c.name}"`).join(', ')}) VALUES (${given.map(() => '?').join(', ')})`;
      try {
        await sql.run(
          text,
          given.map((c) => value(table, c)),
        );
      } catch (err) {
        failed.push([table, cols]);
        errors.push(`${table}: ${String(err)}`);
      }
    }
    left = failed;
  }
  if (left.length) throw new Error(`no sample row fits:\n${errors.join('\n')}`);
}

const counts = async (sql: Sql): Promise<Record<string, number>> => {
  const out: Record<string, number> = {};
  for (const table of (await catalogue(sql)).keys())
    out[table] = Number((await sql.get({ n: int }, `SELECT COUNT(*) AS n FROM ${table}`))!.n);
  return out;
};

for (const engine of useEngines()) {
  const make = () => engine.empty();

  describe.skipIf(engine.skip)(`migrations on ${engine.name}`, () => {
    it("records each applied migration's checksum, and refuses a shipped migration that was edited", async () => {
      const sql = await make();
      await migrateSql(sql);
      expect(
        await sql.all(
          { version: int, checksum: text },
          'SELECT version, checksum FROM schema_checksums ORDER BY version',
        ),
      ).toEqual(MIGRATIONS.map((m) => ({ version: m.version, checksum: checksumOf(m) })));
      const edited = editedAt(13);
      await expect(migrateSql(sql, edited)).rejects.toThrow(new MigrationEditedError(edited[12]!).message);
      expect(new MigrationEditedError(edited[12]!).message).toBe(
        `Migration 13 (${edited[12]!.name}) is not the text this store applied: it was edited after it shipped. A shipped migration is never changed; restore its text and put the change in a new migration (the next version).`,
      );
      expect(await migrateSql(sql)).toBe(0);
    });

    it('records the checksums of a store an older yoke migrated (none kept), then holds it to them', async () => {
      const sql = await make();
      await migrateSql(sql, MIGRATIONS.slice(0, 10));
      await sql.run('DELETE FROM schema_checksums');
      expect(await migrateSql(sql)).toBe(MIGRATIONS.length - 10);
      expect((await sql.get({ n: int }, 'SELECT COUNT(*) AS n FROM schema_checksums'))!.n).toBe(MIGRATIONS.length);
      await expect(migrateSql(sql, editedAt(2))).rejects.toThrow(MigrationEditedError);
    });

    it('runs each migration over a store holding rows, one version at a time, and loses none of them', async () => {
      const sql = await make();
      for (const [i, m] of MIGRATIONS.entries()) {
        if (i > 0) await addSampleRows(sql, i);
        const before = await counts(sql);
        expect(await migrateSql(sql, MIGRATIONS.slice(0, i + 1)), `migration ${m.version}`).toBe(1);
        const after = await counts(sql);
        for (const [table, n] of Object.entries(before))
          if (table in after) expect(after[table], `${table} after migration ${m.version}`).toBe(n);
      }
      await addSampleRows(sql, MIGRATIONS.length);
    });
  });
}

describe('the embedded store runs the same runner as it opens', () => {
  it("records checksums and refuses an edited migration (db.ts migrate, better-sqlite3's own transactions)", () => {
    const db = new Database(':memory:');
    expect(migrate(db)).toBe(MIGRATIONS.length);
    expect(migrate(db)).toBe(0);
    expect((db.prepare('SELECT COUNT(*) AS n FROM schema_checksums').get() as { n: number }).n).toBe(MIGRATIONS.length);
    expect(() => migrate(db, editedAt(1))).toThrow(MigrationEditedError);
    db.close();
  });
});
