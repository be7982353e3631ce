import type { Db } from './db.js';

export interface CachedResponse {
  etag: string | null;
  lastModified: string | null;
  headers: Record<string, string>;
  body: unknown;
}

/** The conditional-request cache: the last 200 answer of each GET, with its validators. */
export class HttpCacheStore {
  constructor(private readonly db: Db) {}

  get(key: string): CachedResponse | undefined {
    const r = this.db.prepare('SELECT * FROM http_cache WHERE key = ?').get(key) as
      | { etag: string | null; last_modified: string | null; headers: string; body: string }
      | undefined;
    if (!r) return undefined;
    return { etag: r.etag, lastModified: r.last_modified, headers: JSON.parse(r.headers), body: JSON.parse(r.body) };
  }

  put(key: string, value: CachedResponse, at: number): void {
    this.db
      .prepare('INSERT OR REPLACE INTO http_cache (key, etag, last_modified, headers, body, stored_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(key, value.etag, value.lastModified, JSON.stringify(value.headers), JSON.stringify(value.body ?? null), at);
  }
}
