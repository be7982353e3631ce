import type { Sql } from './sql/sql.js';
import { TABLES } from './tables.js';

export interface CachedResponse {
  etag: string | null;
  lastModified: string | null;
  headers: Record<string, string>;
  body: unknown;
}

/** The conditional-request cache: the last 200 answer of each GET, with its validators. */
export class HttpCacheStore {
  constructor(private readonly sql: Sql) {}

  async get(key: string): Promise<CachedResponse | undefined> {
    const r = await this.sql.get(TABLES.http_cache, 'SELECT * FROM http_cache WHERE key = ?', [key]);
    if (!r) return undefined;
    return { etag: r.etag, lastModified: r.last_modified, headers: JSON.parse(r.headers), body: JSON.parse(r.body) };
  }

  async put(key: string, value: CachedResponse, at: number): Promise<void> {
    await this.sql.run(
      `INSERT INTO http_cache (key, etag, last_modified, headers, body, stored_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET etag = excluded.etag, last_modified = excluded.last_modified, headers = excluded.headers, body = excluded.body, stored_at = excluded.stored_at`,
      [key, value.etag, value.lastModified, JSON.stringify(value.headers), JSON.stringify(value.body ?? null), at],
    );
  }
}
