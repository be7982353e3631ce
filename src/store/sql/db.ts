import Database from 'better-sqlite3';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { MIGRATIONS, type Migration } from '../migrations/index.js';
import { decodeRow } from './columns.js';
import { migrationTransaction } from './schema.js';

export type Db = Database.Database;

/** Opens the store (a file in WAL mode, or `:memory:`) and applies pending migrations. */
export function openDb(path: string, opts: { busyTimeoutMs?: number; migrate?: boolean } = {}): Db {
  if (path !== ':memory:') makeFolder(dirname(path));
  const db = path === ':memory:' && opts.migrate !== false ? new Database(migratedImage()) : new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 5000}`);
  db.pragma('foreign_keys = ON');
  if (opts.migrate !== false) migrate(db);
  return db;
}

let image: Buffer | null = null;

/**
 * A `:memory:` store migrated once per process and copied for each one opened after it (SQLite's serialized
 * image): the migrations are most of what a fresh store costs, and the tests open hundreds. The copy is then
 * migrated as any store is, which finds nothing pending and checks each applied migration's checksum.
 */
function migratedImage(): Buffer {
  if (!image) {
    const db = new Database(':memory:');
    db.pragma('foreign_keys = ON');
    migrate(db);
    image = db.serialize();
    db.close();
  }
  return image;
}

/**
 * A folder and the ones above it, one at a time: each refusal names its folder, and a path no folder can be made
 * in (under /proc, say, where Node's recursive mkdir loops) fails at once.
 */
function makeFolder(dir: string): void {
  if (existsSync(dir)) {
    if (!statSync(dir).isDirectory()) throw new Error(`${dir} is a file, not a folder`);
    return;
  }
  if (dirname(dir) !== dir) makeFolder(dirname(dir));
  mkdirSync(dir);
}

/** Applies pending migrations as the embedded store opens: the one runner (schema.ts), driven synchronously. */
export function migrate(db: Db, known: readonly Migration[] = MIGRATIONS): number {
  let count = 0;
  const once = db.transaction(() => {
    const steps = migrationTransaction('sqlite', known, new Date().toISOString());
    let r = steps.next();
    while (!r.done) {
      const s = r.value;
      if ('exec' in s) r = steps.next(void db.exec(s.exec));
      else if ('rows' in s)
        r = steps.next(
          db
            .prepare(s.rows)
            .all(...(s.params ?? []))
            .map((row) => decodeRow(s.shape, row as Record<string, unknown>, s.rows)),
        );
      else r = steps.next(void db.prepare(s.run).run(...s.params));
    }
    return r.value;
  });
  // IMMEDIATE: the write lock first, as the async interface's transactions take it.
  while (once.immediate()) count++;
  return count;
}
