import type { Migration } from './migration.js';

// SC10: what the pass reads of each repository from the store (its row, runs, claims, AFK labels and asks) carries
// a version, moved by the database itself on every write to any of them, in the writing transaction, whichever
// process or command wrote. A pass that finds a repository's version where it left it reads none of its rows.
const TABLE = `
CREATE TABLE repo_versions (
  full_name TEXT PRIMARY KEY,
  version INTEGER NOT NULL
);
`;

/** The tables a pass reads of a repository, each with the column that names it. */
const VERSIONED = [
  ['repos', 'full_name'],
  ['runs', 'repo'],
  ['claims', 'repo'],
  ['afk_labels', 'repo'],
  ['asks', 'repo'],
] as const;

/** Moves on by one the version of the repository `rows` names (`VALUES (…, 1)` or a `SELECT`); the first is 1. */
const bump = (rows: string) => `  INSERT INTO repo_versions (full_name, version) ${rows}
    ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;`;
const bumpOf = (name: string) => bump(`VALUES (${name}, 1)`);

/** SQLite: a trigger per table and kind of write; an update that renames the repository moves both names. */
const sqliteTriggers = VERSIONED.flatMap(([table, column]) => [
  `CREATE TRIGGER ${table}_changed_insert AFTER INSERT ON ${table} FOR EACH ROW BEGIN\n${bumpOf(`NEW.${column}`)}\nEND;`,
  `CREATE TRIGGER ${table}_changed_update AFTER UPDATE ON ${table} FOR EACH ROW BEGIN\n${bumpOf(`NEW.${column}`)}\n${bump(
    `SELECT OLD.${column}, 1 WHERE OLD.${column} IS NOT NEW.${column}`,
  )}\nEND;`,
  `CREATE TRIGGER ${table}_changed_delete AFTER DELETE ON ${table} FOR EACH ROW BEGIN\n${bumpOf(`OLD.${column}`)}\nEND;`,
]).join('\n');

/** PostgreSQL: one trigger per table, on every kind of write, calling one function. */
const postgresTriggers = VERSIONED.map(
  ([table, column]) =>
    `CREATE TRIGGER ${table}_changed AFTER INSERT OR UPDATE OR DELETE ON ${table}\n  FOR EACH ROW EXECUTE FUNCTION yoke_repo_changed('${column}');`,
).join('\n');

export const migration: Migration = {
  version: 30,
  name: 'repository versions',
  sql: `${TABLE}
${sqliteTriggers}
`,
  postgres: `${TABLE.replace('INTEGER', 'BIGINT')}
-- One function for every table: TG_ARGV[0] names the column that holds the repository's name.
CREATE FUNCTION yoke_repo_changed() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  was TEXT := CASE WHEN TG_OP = 'INSERT' THEN NULL ELSE to_jsonb(OLD) ->> TG_ARGV[0] END;
  now_named TEXT := CASE WHEN TG_OP = 'DELETE' THEN NULL ELSE to_jsonb(NEW) ->> TG_ARGV[0] END;
BEGIN
  IF now_named IS NOT NULL THEN
    INSERT INTO repo_versions (full_name, version) VALUES (now_named, 1)
      ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
  END IF;
  IF was IS NOT NULL AND was IS DISTINCT FROM now_named THEN
    INSERT INTO repo_versions (full_name, version) VALUES (was, 1)
      ON CONFLICT (full_name) DO UPDATE SET version = repo_versions.version + 1;
  END IF;
  RETURN NULL;
END
$fn$;
${postgresTriggers}
`,
};
