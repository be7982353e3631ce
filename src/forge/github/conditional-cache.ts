import { fieldOf, recordOf, textField } from '../../kernel/guards.js';
import type { HttpCacheStore } from '../../store/http-cache.js';
import { routeOf } from './routes.js';

// An Octokit plugin that makes every GET conditional: it sends the stored
// ETag as If-None-Match and, on 304 (which GitHub does not count against the
// rate limit), answers with the stored body. Pagination keeps working because
// the stored `link` header comes back too.

export const CACHE_HIT_HEADER = 'x-yoke-cache';

export interface CacheStats {
  requests: number;
  notModified: number;
  /** Requests by `METHOD STATUS /route/{template}` (304: answered from the cache; `error`: no answer), for the metrics. */
  byRoute?: Map<string, number>;
}

const KEPT_HEADERS = ['link', 'content-type', 'etag', 'last-modified'];

interface RequestOptions {
  method: string;
  url: string;
  headers: Record<string, string>;
  [key: string]: unknown;
}

/** What yoke's Octokit plugins use of the client: its request hook, and its parser of a request's URL. */
export interface Hooked<O, R> {
  hook: { wrap(name: 'request', fn: (request: (o: O) => Promise<R>, o: O) => Promise<R>): void };
  request: { endpoint: { parse(o: O): { url: string; method: string } } };
}

/**
 * The client a plugin is handed, as the plugins use it. The one assumption of the plugin API: Octokit calls
 * each plugin with itself, whose `hook` and `request.endpoint` are these.
 */
export const hooked = <O = Record<string, unknown>, R = unknown>(octokit: unknown): Hooked<O, R> =>
  octokit as Hooked<O, R>;

interface Response {
  status: number;
  url: string;
  headers: Record<string, string | number | undefined>;
  data: unknown;
}

/** Whose limits and cache a client's requests count against: its installation's (`i42`), or the app's own. */
export const scopeOf = (options: { auth?: { installationId?: number | string } }): string =>
  options.auth?.installationId !== undefined ? `i${options.auth.installationId}` : 'app';

export function conditionalCache(
  cache: HttpCacheStore,
  now: () => number,
  stats: CacheStats = { requests: 0, notModified: 0 },
) {
  const plugin = (octokit: unknown, options: { auth?: { installationId?: number | string } }) => {
    const o = hooked<RequestOptions, Response>(octokit);
    const scope = scopeOf(options);
    const answer = async (request: (o: RequestOptions) => Promise<Response>, opts: RequestOptions) => {
      if (opts.method !== 'GET') return request(opts);
      const { url } = o.request.endpoint.parse(opts);
      const accept = opts.headers?.accept ?? '';
      const key = `${scope} ${accept} ${url}`;
      const cached = await cache.get(key);
      if (cached?.etag) opts.headers = { ...opts.headers, 'if-none-match': cached.etag };
      try {
        const res = await request(opts);
        const etag = res.headers.etag;
        if (typeof etag === 'string') {
          const headers: Record<string, string> = {};
          for (const h of KEPT_HEADERS) if (res.headers[h] !== undefined) headers[h] = String(res.headers[h]);
          await cache.put(
            key,
            { etag, lastModified: textField(res.headers, 'last-modified') ?? null, headers, body: res.data },
            now(),
          );
        }
        return res;
      } catch (err) {
        if (fieldOf(err, 'status') === 304 && cached) {
          stats.notModified++;
          return {
            status: 200,
            url,
            headers: {
              ...recordOf(fieldOf(fieldOf(err, 'response'), 'headers')),
              ...cached.headers,
              [CACHE_HIT_HEADER]: 'hit',
            },
            data: cached.body,
          };
        }
        throw err;
      }
    };
    o.hook.wrap('request', async (request, opts) => {
      stats.requests++;
      const route = routeOf(opts.url);
      const count = (status: unknown) => {
        const key = `${opts.method} ${String(status)} ${route}`;
        stats.byRoute?.set(key, (stats.byRoute.get(key) ?? 0) + 1);
      };
      try {
        const res = await answer(request, opts);
        count(res.headers[CACHE_HIT_HEADER] === 'hit' ? 304 : res.status);
        return res;
      } catch (err) {
        count(fieldOf(err, 'status') ?? 'error');
        throw err;
      }
    });
    return {};
  };
  return plugin;
}
