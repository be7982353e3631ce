import { describe, expect, it } from 'vitest';
import { int, jsonOf, nullable, oneOf, RowShapeError, text, type Shape } from '../../src/store/sql/columns.js';
import type { Sql } from '../../src/store/sql/sql.js';
import { TABLES } from '../../src/store/tables.js';
import { useEngines } from '../helpers/engines.js';
import { catalogue } from '../helpers/catalogue.js';

// Each table is declared once (src/store/tables.ts), and the declaration is
// what the migrations made: the same tables, the same columns in the same
// order, of the same kinds, nullable the same, and each CHECK (col IN (…))
// allowing the values the declaration lists. On both engines.

/** The values each column's CHECK (col IN (…)) allows, by `table.column`, as the engine itself keeps the constraint. */
async function checkedValues(sql: Sql): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const add = (table: string, column: string, list: string) =>
    out.set(
      `${table}.${column}`,
      [...list.matchAll(/'([^']*)'/g)].map((m) => m[1]!),
    );
  if (sql.dialect === 'sqlite') {
    for (const t of await sql.all(
      { name: text, sql: text },
      "SELECT name, sql FROM sqlite_master WHERE type = 'table'",
    ))
      for (const m of t.sql.matchAll(/(\w+) [^,\n]*?CHECK \(\1 IN \(([^)]*)\)\)/g)) add(t.name, m[1]!, m[2]!);
  } else {
    const rows = await sql.all(
      { table_name: text, def: text },
      `SELECT c.conrelid::regclass::text AS table_name, pg_get_constraintdef(c.oid) AS def
       FROM pg_constraint c WHERE c.contype = 'c' AND c.connamespace = current_schema()::regnamespace`,
    );
    for (const r of rows) {
      const m = /^CHECK \(\(\(?(\w+) = ANY \(ARRAY\[(.*)\]\)\)\)?\)$/.exec(r.def);
      if (m) add(r.table_name, m[1]!, m[2]!);
    }
  }
  return out;
}

/** What a declaration says of each column, in the catalogue's terms. */
const declared = (shape: Shape) =>
  Object.entries(shape).map(([name, c]) => ({
    name,
    type: c.kind === 'int' ? 'integer' : c.kind,
    notNull: !c.nullable,
  }));

/** Where a declaration and the database disagree, in words (empty: they agree). */
async function disagreements(sql: Sql, tables: Record<string, Shape>): Promise<string[]> {
  const found = await catalogue(sql);
  const checks = await checkedValues(sql);
  const out: string[] = [];
  for (const t of found.keys()) if (!(t in tables)) out.push(`${t}: a table no declaration names`);
  for (const [t, shape] of Object.entries(tables)) {
    const cols = found.get(t);
    if (!cols) {
      out.push(`${t}: declared, but no such table`);
      continue;
    }
    const real = cols.map((c) => ({ name: c.name, type: c.type, notNull: c.notNull }));
    if (JSON.stringify(real) !== JSON.stringify(declared(shape)))
      out.push(`${t}: declared ${JSON.stringify(declared(shape))}, the database has ${JSON.stringify(real)}`);
    for (const [name, c] of Object.entries(shape)) {
      const allowed = checks.get(`${t}.${name}`);
      // A textOf column's values are yoke's own (no CHECK): the database must keep none for it.
      const want = c.checked === false ? null : (c.values ?? null);
      if (JSON.stringify(allowed ?? null) !== JSON.stringify(want))
        out.push(
          `${t}.${name}: declared ${JSON.stringify(want ?? 'any value')}, CHECK allows ${JSON.stringify(allowed ?? 'any value')}`,
        );
    }
  }
  return out;
}

for (const engine of useEngines()) {
  describe.skipIf(engine.skip)(`the declared tables on ${engine.name}`, () => {
    it("are the migrations' tables: columns, kinds, nullability and CHECK values, all of them", async () => {
      expect(await disagreements(await engine.fresh(), TABLES)).toEqual([]);
    });

    it('a declaration that drifted is named (the check itself can fail)', async () => {
      const sql = await engine.fresh();
      const drifted = {
        ...TABLES,
        claims: { ...TABLES.claims, pr_number: nullable(int), extra: text },
        runs: { ...TABLES.runs, kind: oneOf(['afk_manual', 'afk_auto', 'lander']) },
      };
      delete (drifted as Partial<typeof drifted>).enqueues;
      expect(await disagreements(sql, drifted)).toEqual([
        'enqueues: a table no declaration names',
        expect.stringMatching(
          /^claims: declared .*"name":"pr_number","type":"integer","notNull":false.*"name":"extra"/,
        ),
        'runs.kind: declared ["afk_manual","afk_auto","lander"], CHECK allows ["afk_manual","afk_auto","lander","fix"]',
      ]);
    });

    it('a value its column does not take is refused as it is read, naming the column: a number, one of a CHECK, JSON', async () => {
      const sql = await engine.fresh();
      await expect(sql.get({ n: int }, "SELECT 'x' AS n")).rejects.toThrow(RowShapeError);
      await expect(sql.get({ s: oneOf(['a', 'b']) }, "SELECT 'c' AS s")).rejects.toThrow(
        /column s, which holds one of a, b/,
      );
      await expect(sql.get({ j: jsonOf<string[]>() }, 'SELECT \'["a"\' AS j')).rejects.toThrow(
        /column j, which holds text/,
      );
      expect(await sql.get({ j: jsonOf<string[]>() }, 'SELECT \'["a"]\' AS j')).toEqual({ j: ['a'] });
    });
  });
}
