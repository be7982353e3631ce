import { describe, expect, it } from 'vitest';
import { urlConnectTimeoutMs } from '../../src/store/sql/open-sql.js';

// A PostgreSQL URL's connect_timeout, as libpq reads it: yoke's driver (pg) ignores it, so yoke reads it itself.

describe("a PostgreSQL URL's connect_timeout", () => {
  it('is whole seconds, 1 counted as 2 and 0 or less as no bound, as libpq reads it; absent, it is not there', () => {
    const at = (q: string) => urlConnectTimeoutMs(`postgres://yoke@db:5432/yoke${q}`);
    expect([
      at('?connect_timeout=10'),
      at('?connect_timeout=1'),
      at('?connect_timeout=0'),
      at('?connect_timeout=-3'),
    ]).toEqual([10_000, 2_000, 0, 0]);
    expect([at(''), at('?sslmode=require'), urlConnectTimeoutMs('.yoke/yoke.db')]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('refuses what is no whole number of seconds, naming it and the fix', () => {
    for (const bad of ['soon', '2.5', '10s', ''])
      expect(() => urlConnectTimeoutMs(`postgres://yoke@db/yoke?connect_timeout=${bad}`)).toThrow(
        `The PostgreSQL URL's connect_timeout=${bad} is not a whole number of seconds: write it as libpq reads it (connect_timeout=10), or leave it out for yoke's 10 s.`,
      );
  });
});
