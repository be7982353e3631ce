import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A minimal GitHub REST stand-in for measuring polling cost: the read routes
// a pass uses, with ETags, 304s and rate-limit headers, counting every
// request and whether it counted against the rate limit.

export interface FakeGitHubStats {
  requests: number;
  notModified: number;
  rateLimited: number;
  log: { path: string; status: number }[];
}

export interface FakeGitHub {
  url: string;
  stats: FakeGitHubStats;
  reset(): void;
  close(): Promise<void>;
}

export async function startFakeGitHub(opts: { repos: number; config: string }): Promise<FakeGitHub> {
  const stats: FakeGitHubStats = { requests: 0, notModified: 0, rateLimited: 0, log: [] };
  const repoNames = Array.from({ length: opts.repos }, (_, i) => `bench/repo-${String(i).padStart(4, '0')}`);
  const repoJson = (full: string) => ({ id: repoNames.indexOf(full) + 1, name: full.split('/')[1], full_name: full, owner: { login: 'bench' }, archived: false, default_branch: 'main' });

  const route = (req: IncomingMessage, url: URL): { status: number; body: unknown; headers?: Record<string, string> } => {
    const p = url.pathname.replace(/^\/api\/v3/, '');
    if (p === '/app/installations') return { status: 200, body: [{ id: 1, account: { login: 'bench' } }] };
    if (p === '/app/installations/1/access_tokens') return { status: 201, body: { token: 'ghs_bench', expires_at: new Date(Date.now() + 3600_000).toISOString() } };
    if (p === '/app') return { status: 200, body: { slug: 'yoke-bench' } };
    if (p === '/installation/repositories') {
      const per = Number(url.searchParams.get('per_page') ?? 30);
      const page = Number(url.searchParams.get('page') ?? 1);
      const slice = repoNames.slice((page - 1) * per, page * per);
      const last = Math.ceil(repoNames.length / per);
      const headers: Record<string, string> = {};
      if (page < last) headers.link = `<${url.origin}/api/v3/installation/repositories?per_page=${per}&page=${page + 1}>; rel="next", <${url.origin}/api/v3/installation/repositories?per_page=${per}&page=${last}>; rel="last"`;
      return { status: 200, body: { total_count: repoNames.length, repositories: slice.map(repoJson) }, headers };
    }
    const m = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(p);
    if (!m) return { status: 404, body: { message: 'Not Found' } };
    const full = `${m[1]}/${m[2]}`;
    const rest = m[3] ?? '';
    if (!repoNames.includes(full)) return { status: 404, body: { message: 'Not Found' } };
    if (rest === '') return { status: 200, body: repoJson(full) };
    if (/^\/contents\/\.github(%2F|\/)yoke\.yml$/.test(rest)) return { status: 200, body: opts.config, headers: { 'content-type': 'text/plain; charset=utf-8' } };
    if (rest === '/issues') return { status: 200, body: url.searchParams.get('state') === 'all' ? [{ number: 1, updated_at: '2026-11-01T00:00:00Z' }] : [] };
    if (rest === '/pulls' || rest === '/issues/comments') return { status: 200, body: [] };
    return { status: 404, body: { message: 'Not Found' } };
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
      stats.requests++;
      const { status, body, headers = {} } = route(req, url);
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      const etag = `"${createHash('sha1').update(text).digest('hex')}"`;
      const common = { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': String(5000 - stats.rateLimited), 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600) };
      if (req.method === 'GET' && status === 200 && req.headers['if-none-match'] === etag) {
        stats.notModified++;
        stats.log.push({ path: url.pathname, status: 304 });
        res.writeHead(304, { etag, ...common });
        res.end();
        return;
      }
      stats.rateLimited++;
      stats.log.push({ path: url.pathname, status });
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', etag, ...common, ...headers });
      res.end(text);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    stats,
    reset: () => {
      stats.requests = 0;
      stats.notModified = 0;
      stats.rateLimited = 0;
      stats.log = [];
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}
