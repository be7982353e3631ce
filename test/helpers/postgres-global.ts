import type { TestProject } from 'vitest/node';
import { findPostgresBin, startPostgres } from '../../sandbox/postgres.js';
import { postgresSql } from '../../src/store/sql/postgres-sql.js';
import { migrateSql } from '../../src/store/sql/schema.js';

// With YOKE_TEST_ENGINE=postgres, the tests' stores (test/helpers/test-store.ts)
// are PostgreSQL databases instead of SQLite's :memory:, each a copy of one
// migrated template on a real server started here for the whole run.

declare module 'vitest' {
  export interface ProvidedContext {
    postgresTemplate: string | null;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | void> {
  if (process.env.YOKE_TEST_ENGINE !== 'postgres') {
    project.provide('postgresTemplate', null);
    return;
  }
  const bin = findPostgresBin();
  if (!bin)
    throw new Error('YOKE_TEST_ENGINE=postgres, but PostgreSQL is not installed: `apt-get install -y postgresql`.');
  const server = await startPostgres({ bin, maxConnections: 400 });
  const url = await server.createDatabase('yoke_template');
  const sql = postgresSql(url, { max: 1 });
  await migrateSql(sql);
  await sql.close();
  project.provide('postgresTemplate', url);
  return () => server.stop();
}
