import type { Sql } from '../../src/store/sql/sql.js';
import { int, nullable, text } from '../../src/store/sql/columns.js';

// What a database itself says its tables are (SQLite's table_info, PostgreSQL's
// information_schema), in one shape for both engines: the migrations' result,
// read back, to check declarations and fill sample rows against.

export type ColumnType = 'integer' | 'real' | 'text';

export interface CatalogueColumn {
  name: string;
  type: ColumnType;
  notNull: boolean;
  hasDefault: boolean;
  primaryKey: boolean;
}

const typeOf = (declared: string): ColumnType => {
  const t = declared.toLowerCase();
  if (/int/.test(t)) return 'integer';
  if (/real|double|float|numeric/.test(t)) return 'real';
  return 'text';
};

/** Every table of the store but the migrations' own bookkeeping, each with its columns in order. */
export async function catalogue(sql: Sql): Promise<Map<string, CatalogueColumn[]>> {
  const out = new Map<string, CatalogueColumn[]>();
  if (sql.dialect === 'sqlite') {
    const tables = await sql.all(
      { name: text },
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'schema_%' ORDER BY name",
    );
    for (const { name } of tables) {
      const cols = await sql.all(
        { name: text, type: text, notnull: int, dflt_value: nullable(text), pk: int },
        'SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY cid',
        [name],
      );
      out.set(
        name,
        cols.map((c) => ({
          name: c.name,
          type: typeOf(c.type),
          notNull: c.notnull === 1 || c.pk > 0,
          hasDefault: c.dflt_value !== null || (c.pk > 0 && typeOf(c.type) === 'integer'),
          primaryKey: c.pk > 0,
        })),
      );
    }
    return out;
  }
  const cols = await sql.all(
    {
      table_name: text,
      column_name: text,
      data_type: text,
      is_nullable: text,
      column_default: nullable(text),
      is_identity: text,
      pk: int,
    },
    `SELECT c.table_name, c.column_name, c.data_type, c.is_nullable, c.column_default, c.is_identity,
       (SELECT COUNT(*) FROM information_schema.key_column_usage k JOIN information_schema.table_constraints t
          ON t.constraint_name = k.constraint_name AND t.table_name = k.table_name AND t.table_schema = k.table_schema
        WHERE t.constraint_type = 'PRIMARY KEY' AND k.table_name = c.table_name AND k.column_name = c.column_name
          AND k.table_schema = c.table_schema) AS pk
     FROM information_schema.columns c JOIN information_schema.tables t
       ON t.table_name = c.table_name AND t.table_schema = c.table_schema AND t.table_type = 'BASE TABLE'
     WHERE c.table_schema = current_schema() AND c.table_name NOT LIKE 'schema\\_%'
     ORDER BY c.table_name, c.ordinal_position`,
  );
  for (const c of cols) {
    const list = out.get(c.table_name) ?? [];
    list.push({
      name: c.column_name,
      type: typeOf(c.data_type),
      notNull: c.is_nullable === 'NO',
      hasDefault: c.column_default !== null || c.is_identity === 'YES',
      primaryKey: Number(c.pk) > 0,
    });
    out.set(c.table_name, list);
  }
  return out;
}
