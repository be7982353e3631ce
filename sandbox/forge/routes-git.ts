import { MERGE_QUEUE_RULE } from '../../src/config/landing.js';
import { git, hashObject, isAncestor, revParse } from '../git.js';
import { HttpError } from '../http-error.js';
import { repoOf, requireWrite, type RouteEnv } from './routes-common.js';
import type { ForgeRepo } from './state.js';

// Commits, comparisons and trees: what delivery reads to pin a commit, order
// merges before it, and list the QA plans at it. And the git data API's
// writes (blobs, trees, commits), as yoke publishes its runner with them.

const SHA = /^[0-9a-f]{4,40}$/;

function commitOf(r: ForgeRepo, ref: string): string | null {
  if (ref === 'HEAD') return revParse(r.gitDir, `refs/heads/${r.defaultBranch}`);
  if (!SHA.test(ref) && !/^[\w./-]+$/.test(ref)) return null;
  return revParse(r.gitDir, SHA.test(ref) ? ref : `refs/heads/${ref}`);
}

/** A commit as GitHub's commits and merges answers show it, less its parents and accounts. */
function commitJson(
  shapes: RouteEnv['shapes'],
  r: ForgeRepo,
  sha: string,
  tree: string,
  commit: { message: string; author?: object; committer?: object },
) {
  return {
    sha,
    node_id: `C_${sha}`,
    url: shapes.apiUrl(`/repos/${r.fullName}/commits/${sha}`),
    html_url: `${shapes.url}/${r.fullName}/commit/${sha}`,
    comments_url: shapes.apiUrl(`/repos/${r.fullName}/commits/${sha}/comments`),
    commit: {
      ...commit,
      tree: { sha: tree, url: shapes.apiUrl(`/repos/${r.fullName}/git/trees/${tree}`) },
      url: shapes.apiUrl(`/repos/${r.fullName}/git/commits/${sha}`),
      comment_count: 0,
    },
  };
}

/** A commit as the git database API shows it (`/git/commits`): its tree, its parents in order, its people. */
export function gitCommitJson(
  shapes: RouteEnv['shapes'],
  r: ForgeRepo,
  c: { sha: string; tree: string; parents: readonly string[]; message: string; person: object },
) {
  return {
    sha: c.sha,
    node_id: `C_${c.sha}`,
    url: shapes.apiUrl(`/repos/${r.fullName}/git/commits/${c.sha}`),
    html_url: `${shapes.url}/${r.fullName}/commit/${c.sha}`,
    author: c.person,
    committer: c.person,
    message: c.message,
    tree: { sha: c.tree, url: shapes.apiUrl(`/repos/${r.fullName}/git/trees/${c.tree}`) },
    parents: c.parents.map((p) => ({
      sha: p,
      url: shapes.apiUrl(`/repos/${r.fullName}/git/commits/${p}`),
      html_url: `${shapes.url}/${r.fullName}/commit/${p}`,
    })),
    verification: { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null },
  };
}

export function registerGitRoutes(env: RouteEnv): void {
  const { http, shapes } = env;
  // LD03: GitHub's merges API: merges a commit into a branch with a merge commit (201), nothing when the branch
  // already holds it (204), 409 on a conflict, 404 when either is missing.
  http.on('POST', '/repos/{owner}/{repo}/merges', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    requireWrite(env, r, ctx);
    const base = String(ctx.body.base ?? '');
    const head = String(ctx.body.head ?? '');
    const onto = /^[\w./-]+$/.test(base) && !base.includes('..') ? revParse(r.gitDir, `refs/heads/${base}`) : null;
    if (!onto) throw new HttpError(404, 'Base does not exist');
    const from = commitOf(r, head);
    if (!from) throw new HttpError(404, 'Head does not exist');
    if (isAncestor(r.gitDir, from, onto)) return { status: 204 };
    if (r.protectedBranches.has(base))
      throw new HttpError(409, `Repository rule violations found for refs/heads/${base}.`);
    let tree: string;
    try {
      tree = git(r.gitDir, ['merge-tree', '--write-tree', onto, from]).split('\n')[0]!;
    } catch {
      throw new HttpError(409, 'Merge conflict');
    }
    const message = String(ctx.body.commit_message ?? `Merge ${head} into ${base}`);
    const sha = git(r.gitDir, ['commit-tree', tree, '-p', onto, '-p', from, '-m', message]);
    const [name, email, date] = git(r.gitDir, ['show', '-s', '--format=%an%n%ae%n%aI', sha]).split('\n') as [
      string,
      string,
      string,
    ];
    const who = { name, email, date };
    git(r.gitDir, ['update-ref', `refs/heads/${base}`, sha, onto]);
    return {
      status: 201,
      body: {
        ...commitJson(shapes, r, sha, tree, { message, author: who, committer: who }),
        // Made with the requester's token: its account is the commit's author and committer.
        author: shapes.simpleUser(ctx.actor!),
        committer: shapes.simpleUser(ctx.actor!),
        parents: [onto, from].map((p) => ({ sha: p, url: shapes.apiUrl(`/repos/${r.fullName}/commits/${p}`) })),
      },
    };
  });
  http.on('GET', '/repos/{owner}/{repo}/commits/{ref}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const sha = commitOf(r, decodeURIComponent(ctx.params.ref!));
    if (!sha) throw new HttpError(422, `No commit found for SHA: ${ctx.params.ref}`);
    const [tree, message] = git(r.gitDir, ['show', '-s', '--format=%T%n%s', sha]).split('\n') as [string, string];
    return {
      status: 200,
      body: {
        ...commitJson(shapes, r, sha, tree, { message }),
        parents: [],
      },
    };
  });
  // The rules in force on a branch, as rulesets set them: the status checks they require (each from the app it
  // names) and GitHub's merge queue (LD04).
  http.on('GET', '/repos/{owner}/{repo}/rules/branches/{branch}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const name = decodeURIComponent(ctx.params.branch!);
    const source = { ruleset_source_type: 'Repository', ruleset_source: r.fullName, ruleset_id: 1 };
    const checks = r.requiredChecks.get(name) ?? [];
    const rules = [
      ...(checks.length > 0
        ? [
            {
              type: 'required_status_checks',
              parameters: {
                strict_required_status_checks_policy: false,
                required_status_checks: checks.map((c) => ({
                  context: c.context,
                  ...(c.integrationId === null ? {} : { integration_id: c.integrationId }),
                })),
              },
              ...source,
            },
          ]
        : []),
      ...(r.mergeQueue.has(name)
        ? [
            {
              // The rule as `yoke init --landing queue` prints it, merging by the repository's method.
              type: 'merge_queue',
              parameters: { ...MERGE_QUEUE_RULE.parameters, merge_method: r.mergeQueueMethod },
              ...source,
            },
          ]
        : []),
    ];
    return { status: 200, body: rules };
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
  const FULL_SHA = /^[0-9a-f]{40}$/;
  const objectType = (r: ForgeRepo, sha: string): string | null => {
    try {
      return git(r.gitDir, ['cat-file', '-t', sha]);
    } catch {
      return null;
    }
  };
  http.on('POST', '/repos/{owner}/{repo}/git/blobs', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    requireWrite(env, r, ctx);
    const encoding = String(ctx.body.encoding ?? 'utf-8');
    if (typeof ctx.body.content !== 'string') throw new HttpError(422, 'content is not a string');
    if (encoding !== 'utf-8' && encoding !== 'base64')
      throw new HttpError(422, `encoding ${encoding} is not supported`);
    const data = Buffer.from(ctx.body.content, encoding === 'base64' ? 'base64' : 'utf8');
    const sha = hashObject(r.gitDir, data);
    return { status: 201, body: { sha, url: shapes.apiUrl(`/repos/${r.fullName}/git/blobs/${sha}`) } };
  });
  http.on('POST', '/repos/{owner}/{repo}/git/trees', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    requireWrite(env, r, ctx);
    if (ctx.body.base_tree !== undefined) throw new HttpError(422, 'base_tree is not supported by the embedded forge');
    const entries = Array.isArray(ctx.body.tree) ? (ctx.body.tree as Record<string, unknown>[]) : null;
    if (!entries) throw new HttpError(422, 'tree is not an array');
    const lines = entries.map((e) => {
      const path = String(e.path ?? '');
      const sha = String(e.sha ?? '');
      if (!/^[\w.-]+$/.test(path)) throw new HttpError(422, `tree.path ${path} is not a plain file name here`);
      if (e.mode !== '100644' || e.type !== 'blob') throw new HttpError(422, 'only blobs of mode 100644 are supported');
      if (!FULL_SHA.test(sha) || objectType(r, sha) !== 'blob')
        throw new HttpError(422, `tree.sha ${sha} is not a valid blob`);
      return `100644 blob ${sha}\t${path}`;
    });
    const sha = git(r.gitDir, ['mktree'], `${lines.join('\n')}\n`);
    const tree = entries.map((e) => ({
      path: String(e.path),
      mode: '100644',
      type: 'blob',
      sha: String(e.sha),
      url: shapes.apiUrl(`/repos/${r.fullName}/git/blobs/${String(e.sha)}`),
    }));
    return {
      status: 201,
      body: { sha, url: shapes.apiUrl(`/repos/${r.fullName}/git/trees/${sha}`), tree, truncated: false },
    };
  });
  http.on('POST', '/repos/{owner}/{repo}/git/commits', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    requireWrite(env, r, ctx);
    const tree = String(ctx.body.tree ?? '');
    const parents = Array.isArray(ctx.body.parents) ? ctx.body.parents.map(String) : [];
    if (!FULL_SHA.test(tree) || objectType(r, tree) !== 'tree') throw new HttpError(422, 'Tree SHA does not exist');
    for (const p of parents)
      if (!FULL_SHA.test(p) || objectType(r, p) !== 'commit')
        throw new HttpError(422, 'Parent SHA does not exist or is not a commit object');
    const message = String(ctx.body.message ?? '');
    const sha = git(r.gitDir, ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-m', message]);
    const when = git(r.gitDir, ['show', '-s', '--format=%aI', sha]);
    const person = { name: 'yoke sandbox', email: 'sandbox@yoke.invalid', date: when };
    return {
      status: 201,
      body: gitCommitJson(shapes, r, { sha, tree, parents, message, person }),
    };
  });
}
