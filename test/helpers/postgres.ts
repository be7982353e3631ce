import { afterAll, beforeAll } from 'vitest';
import { findPostgresBin, startPostgres, type LocalPostgres } from '../../sandbox/postgres.js';

// A real PostgreSQL for the tests that need one: Debian's package, started in
// a temporary folder on a free port. Absent, those tests skip with a message;
// .ci/run installs it and sets YOKE_REQUIRE_POSTGRES, so CI never skips them.

export const postgresBin = findPostgresBin();
export const havePostgres = postgresBin !== null;
if (!havePostgres) {
  if (process.env.YOKE_REQUIRE_POSTGRES)
    throw new Error(
      'PostgreSQL is not installed: `apt-get install -y postgresql` (its programs are looked for on PATH and in /usr/lib/postgresql/*/bin).',
    );
  console.warn(
    'The PostgreSQL store tests are skipped: PostgreSQL is not installed. Install it with `apt-get install -y postgresql`.',
  );
}

let seq = 0;

/** One server for the test file, started before its tests and removed after; each test takes a database of its own. */
export function usePostgres(): { db: () => Promise<string>; server: () => LocalPostgres } {
  let server: LocalPostgres | null = null;
  beforeAll(async () => {
    if (havePostgres) server = await startPostgres({ bin: postgresBin! });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  }, 20_000);
  return {
    db: () => server!.createDatabase(`t${process.pid}_${++seq}`),
    server: () => server!,
  };
}
