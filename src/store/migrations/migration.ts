/** A versioned, forward-only migration, in SQLite's types for both engines (PostgreSQL's: postgresDdl in sql.ts). `postgres`: what PostgreSQL runs instead of `sql` with its types substituted (a function SQLite has no need of). */
export type Migration = { version: number; name: string; sql: string; postgres?: string };
