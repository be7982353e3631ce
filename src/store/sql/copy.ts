import { LATEST_VERSION, migrateSql, SCHEMA_TABLES, schemaVersion } from './schema.js';
import type { Sql } from './sql.js';
import { int, text, value } from './columns.js';

// `yoke db copy`: a SQLite store moved into an empty PostgreSQL, table by
// table in one transaction, referenced tables first, then every count checked
// on both sides. Either it all arrives, counted, or nothing does.

export class CopyRefused extends Error {}

export interface CopiedTable {
  table: string;
  rows: number;
}

/** An identifier quoted for SQL: what a source file names never reaches SQL as text. */
export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** The tables of a migrated SQLite store, each after the tables it references. */
async function tablesInOrder(from: Sql): Promise<string[]> {
  const names = (
    await from.all(
      { name: text },
      `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT IN (${SCHEMA_TABLES.map((t) => `'${t}'`).join(', ')}) ORDER BY name`,
    )
  ).map((t) => t.name);
  const refs = new Map<string, string[]>();
  for (const t of names)
    refs.set(
      t,
      (await from.all({ table: text }, 'SELECT "table" FROM pragma_foreign_key_list(?)', [t])).map((r) => r.table),
    );
  const out: string[] = [];
  const visit = (t: string) => {
    if (out.includes(t)) return;
    for (const r of refs.get(t) ?? []) if (r !== t) visit(r);
    out.push(t);
  };
  names.forEach(visit);
  return out;
}

const BATCH = 500;

export async function copyStore(from: Sql, to: Sql, names: { from: string; to: string }): Promise<CopiedTable[]> {
  if (from.dialect !== 'sqlite' || to.dialect !== 'postgres')
    throw new CopyRefused('yoke db copy moves a SQLite store (--from PATH) to PostgreSQL (--to postgres://…).');
  const version = await schemaVersion(from);
  if (version !== LATEST_VERSION) {
    throw new CopyRefused(
      version > LATEST_VERSION
        ? `${names.from} is at schema version ${version}, newer than this yoke knows (${LATEST_VERSION}): copy it with the yoke that migrated it.`
        : `${names.from} is at schema version ${version}; this yoke's is ${LATEST_VERSION}. Bring it up to date first: \`yoke db migrate --db ${names.from}\`, then copy again.`,
    );
  }
  await migrateSql(to);
  const tables = await tablesInOrder(from);
  // TR28: the source file is data: it may name only the tables and columns yoke's own migrations made.
  const known = new Map<string, Set<string>>();
  for (const c of await to.all(
    { table_name: text, column_name: text },
    'SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()',
  )) {
    if (!known.has(c.table_name)) known.set(c.table_name, new Set());
    known.get(c.table_name)!.add(c.column_name);
  }
  const columnsOf = new Map<string, string[]>();
  for (const t of tables) {
    if (!known.has(t))
      throw new CopyRefused(
        `${names.from} has a table ${JSON.stringify(t)} that yoke's schema does not: it is not a store yoke wrote. Nothing was copied.`,
      );
    const columns = (await from.all({ name: text }, 'SELECT name FROM pragma_table_info(?) ORDER BY cid', [t])).map(
      (c) => c.name,
    );
    const odd = columns.find((c) => !known.get(t)!.has(c));
    if (odd !== undefined)
      throw new CopyRefused(
        `${names.from}'s table ${t} has a column ${JSON.stringify(odd)} that yoke's schema does not: it is not a store yoke wrote. Nothing was copied.`,
      );
    columnsOf.set(t, columns);
  }
  return to.transaction(async (tx) => {
    for (const t of tables) {
      const n = (await tx.get({ n: int }, `SELECT COUNT(*) AS n FROM ${ident(t)}`))!.n;
      if (n > 0)
        throw new CopyRefused(
          `${names.to} already holds yoke data (${n} row(s) in ${t}). Copy into an empty database: nothing was copied.`,
        );
    }
    const copied: CopiedTable[] = [];
    for (const t of tables) {
      const columns = columnsOf.get(t)!;
      const list = columns.map(ident).join(', ');
      let rows = 0;
      for (let offset = 0; ; offset += BATCH) {
        const batch = await from.all(
          Object.fromEntries(columns.map((c) => [c, value])),
          `SELECT ${list} FROM ${ident(t)} ORDER BY rowid LIMIT ? OFFSET ?`,
          [BATCH, offset],
        );
        if (!batch.length) break;
        const values = batch.map(() => `(${columns.map(() => '?').join(', ')})`).join(', ');
        await tx.run(
          `INSERT INTO ${ident(t)} (${list}) VALUES ${values}`,
          batch.flatMap((r) => columns.map((c) => r[c] ?? null)),
        );
        rows += batch.length;
      }
      // An identity column goes on from the highest id copied, not from 1.
      const identity = await tx.all(
        { column_name: text },
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? AND is_identity = 'YES'",
        [t],
      );
      for (const { column_name } of identity) {
        await tx.get(
          {},
          `SELECT setval(pg_get_serial_sequence(?, ?), COALESCE((SELECT MAX(${ident(column_name)}) FROM ${ident(t)}), 0) + 1, false)`,
          [t, column_name],
        );
      }
      const there = (await tx.get({ n: int }, `SELECT COUNT(*) AS n FROM ${ident(t)}`))!.n;
      const here = (await from.get({ n: int }, `SELECT COUNT(*) AS n FROM ${ident(t)}`))!.n;
      if (there !== here || there !== rows)
        throw new CopyRefused(
          `${t}: ${here} row(s) in ${names.from} but ${there} in ${names.to} after the copy; nothing was copied.`,
        );
      copied.push({ table: t, rows });
    }
    return copied;
  });
}
