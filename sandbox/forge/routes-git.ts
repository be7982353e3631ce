import { git, revParse } from '../git.js';
import { HttpError } from '../http-error.js';
import { repoOf, type RouteEnv } from './routes-common.js';
import type { ForgeRepo } from './state.js';

// Commits, comparisons and trees: what delivery reads to pin a commit, order
// merges before it, and list the QA plans at it.

const SHA = /^[0-9a-f]{4,40}$/;

function commitOf(r: ForgeRepo, ref: string): string | null {
  if (ref === 'HEAD') return revParse(r.gitDir, `refs/heads/${r.defaultBranch}`);
  if (!SHA.test(ref) && !/^[\w./-]+$/.test(ref)) return null;
  return revParse(r.gitDir, SHA.test(ref) ? ref : `refs/heads/${ref}`);
}

function isAncestor(gitDir: string, a: string, b: string): boolean {
  try {
    git(gitDir, ['merge-base', '--is-ancestor', a, b]);
    return true;
  } catch {
    return false;
  }
}

export function registerGitRoutes(env: RouteEnv): void {
  const { http, shapes } = env;
  http.on('GET', '/repos/{owner}/{repo}/commits/{ref}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const sha = commitOf(r, decodeURIComponent(ctx.params.ref!));
    if (!sha) throw new HttpError(422, `No commit found for SHA: ${ctx.params.ref}`);
    const [tree, message] = git(r.gitDir, ['show', '-s', '--format=%T%n%s', sha]).split('\n') as [string, string];
    return {
      status: 200,
      body: {
        sha,
        node_id: `C_${sha}`,
        url: shapes.apiUrl(`/repos/${r.fullName}/commits/${sha}`),
        html_url: `${shapes.url}/${r.fullName}/commit/${sha}`,
        comments_url: shapes.apiUrl(`/repos/${r.fullName}/commits/${sha}/comments`),
        commit: {
          message,
          tree: { sha: tree, url: shapes.apiUrl(`/repos/${r.fullName}/git/trees/${tree}`) },
          url: shapes.apiUrl(`/repos/${r.fullName}/git/commits/${sha}`),
          comment_count: 0,
        },
        parents: [],
      },
    };
  });
  http.on('GET', '/repos/{owner}/{repo}/branches/{branch}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const name = decodeURIComponent(ctx.params.branch!);
    const sha = /^[\w./-]+$/.test(name) ? revParse(r.gitDir, `refs/heads/${name}`) : null;
    if (!sha) throw new HttpError(404, 'Branch not found');
    const covered = r.protectedBranches.has(name);
    const self = shapes.apiUrl(`/repos/${r.fullName}/branches/${encodeURIComponent(name)}`);
    return {
      status: 200,
      body: {
        name,
        commit: {
          sha,
          node_id: `C_${sha}`,
          url: shapes.apiUrl(`/repos/${r.fullName}/commits/${sha}`),
          html_url: `${shapes.url}/${r.fullName}/commit/${sha}`,
        },
        _links: { self, html: `${shapes.url}/${r.fullName}/tree/${name}` },
        protected: covered,
        protection: {
          enabled: covered,
          required_status_checks: { enforcement_level: 'off', contexts: [], checks: [] },
        },
        protection_url: `${self}/protection`,
      },
    };
  });
  http.on('GET', '/repos/{owner}/{repo}/compare/{basehead}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const [baseRef, headRef] = decodeURIComponent(ctx.params.basehead!).split('...') as [string, string | undefined];
    const base = commitOf(r, baseRef);
    const head = headRef === undefined ? null : commitOf(r, headRef);
    if (!base || !head) throw new HttpError(404, 'Not Found');
    const status =
      base === head
        ? 'identical'
        : isAncestor(r.gitDir, base, head)
          ? 'ahead'
          : isAncestor(r.gitDir, head, base)
            ? 'behind'
            : 'diverged';
    const count = (a: string, b: string) => Number(git(r.gitDir, ['rev-list', '--count', `${a}..${b}`]));
    return {
      status: 200,
      body: {
        url: shapes.apiUrl(`/repos/${r.fullName}/compare/${base}...${head}`),
        html_url: `${shapes.url}/${r.fullName}/compare/${base}...${head}`,
        permalink_url: `${shapes.url}/${r.fullName}/compare/${base}...${head}`,
        diff_url: `${shapes.url}/${r.fullName}/compare/${base}...${head}.diff`,
        patch_url: `${shapes.url}/${r.fullName}/compare/${base}...${head}.patch`,
        status,
        ahead_by: count(base, head),
        behind_by: count(head, base),
        total_commits: count(base, head),
        commits: [],
        files: [],
      },
    };
  });
  http.on('GET', '/repos/{owner}/{repo}/git/trees/{tree_sha}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const sha = commitOf(r, decodeURIComponent(ctx.params.tree_sha!));
    if (!sha) throw new HttpError(404, 'Not Found');
    const recursive = ctx.query.get('recursive') !== null;
    const entries = git(r.gitDir, ['ls-tree', ...(recursive ? ['-r', '-t'] : []), sha])
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [meta, path] = line.split('\t') as [string, string];
        const [mode, type, object] = meta.split(' ') as [string, string, string];
        return { path, mode, type, sha: object, url: shapes.apiUrl(`/repos/${r.fullName}/git/${type}s/${object}`) };
      });
    return {
      status: 200,
      body: { sha, url: shapes.apiUrl(`/repos/${r.fullName}/git/trees/${sha}`), tree: entries, truncated: false },
    };
  });
}
