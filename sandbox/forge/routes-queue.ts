import { git, revParse } from '../git.js';
import { HttpError } from '../http-error.js';
import type { Ctx } from './http.js';
import { repoOf, type RouteEnv } from './routes-common.js';
import { gitCommitJson } from './routes-git.js';
import type { ForgeRepo } from './state.js';

// LD04: what yoke uses of GitHub's merge queue. The queue has no REST API: its entries are read, and a PR
// added to it, through GraphQL (`POST /api/graphql`), which answers 200 with `errors` when it refuses. Merge
// groups are branches (`gh-readonly-queue/…`), listed with the REST API's matching refs.

type GraphqlAnswer = {
  status: 200;
  body: { data: unknown; errors?: { type: string; path?: string[]; message: string }[] };
};

const refused = (type: string, message: string, path?: string): GraphqlAnswer => ({
  status: 200,
  body: { data: path ? { [path]: null } : null, errors: [{ type, ...(path ? { path: [path] } : {}), message }] },
});

/** The installation's grant of a permission (a person's token has what their role gives). */
function granted(env: RouteEnv, ctx: Ctx, permission: string): string | null {
  if (ctx.auth !== 'installation') return 'write';
  return env.grants(ctx.installationId!).permissions[permission] ?? null;
}

/** GraphQL's answer for a repository the caller may not see (or that is not there). */
const unknownRepo = (vars: Record<string, unknown>): GraphqlAnswer =>
  refused(
    'NOT_FOUND',
    `Could not resolve to a Repository with the name '${String(vars.owner)}/${String(vars.name)}'.`,
    'repository',
  );

export function registerQueueRoutes(env: RouteEnv): void {
  const { http, shapes, queues } = env;

  /** The repository a GraphQL document names, as the caller may see it; null when it may not. */
  const repoNamed = (ctx: Ctx, owner: unknown, name: unknown): ForgeRepo | null => {
    try {
      return repoOf(env, { ...ctx, params: { owner: String(owner), repo: String(name) } });
    } catch {
      return null;
    }
  };

  http.on('POST', '/graphql', 'repo', (ctx): GraphqlAnswer => {
    const query = String(ctx.body.query ?? '');
    const vars = (ctx.body.variables ?? {}) as Record<string, unknown>;
    if (/\bmergeQueue\(branch: \$branch\)/.test(query)) {
      const r = repoNamed(ctx, vars.owner, vars.name);
      if (!r) return unknownRepo(vars);
      if (!granted(env, ctx, 'merge_queues'))
        return refused('FORBIDDEN', 'Resource not accessible by integration', 'repository');
      const branch = String(vars.branch ?? '');
      if (!r.mergeQueue.has(branch)) return { status: 200, body: { data: { repository: { mergeQueue: null } } } };
      queues.settle(r, branch);
      const nodes = queues.entries(r, branch).map((e, i) => ({
        position: i + 1,
        pullRequest: { number: e.pr, headRefOid: e.head },
      }));
      return { status: 200, body: { data: { repository: { mergeQueue: { entries: { nodes } } } } } };
    }
    if (/^\s*query\b[\s\S]*\bpullRequest\(number: \$number\)/.test(query)) {
      const r = repoNamed(ctx, vars.owner, vars.name);
      if (!r) return unknownRepo(vars);
      const i = r.issues.get(Number(vars.number));
      const pullRequest = i?.pull ? { id: `PR_${r.id}_${i.number}`, headRefOid: i.pull.headSha } : null;
      return { status: 200, body: { data: { repository: { pullRequest } } } };
    }
    if (/^\s*mutation\b[\s\S]*\benqueuePullRequest\(/.test(query)) {
      const m = /^PR_(\d+)_(\d+)$/.exec(String(vars.id ?? ''));
      const r = m ? [...env.state.repos.values()].find((x) => x.id === Number(m[1])) : undefined;
      const visible = r && repoNamed(ctx, r.owner.login, r.name);
      if (!m || !visible)
        return refused(
          'NOT_FOUND',
          `Could not resolve to a node with the global id of '${String(vars.id)}'`,
          'enqueuePullRequest',
        );
      if (granted(env, ctx, 'merge_queues') !== 'write' || !env.state.canWrite(visible, ctx))
        return refused('FORBIDDEN', 'Resource not accessible by integration', 'enqueuePullRequest');
      const refusal = queues.enqueue(visible, Number(m[2]), String(vars.head ?? ''));
      if (refusal) return refused('UNPROCESSABLE', refusal, 'enqueuePullRequest');
      const pr = visible.issues.get(Number(m[2]))!;
      const position = queues.entries(visible, pr.pull!.baseRef).findIndex((e) => e.pr === pr.number) + 1;
      return { status: 200, body: { data: { enqueuePullRequest: { mergeQueueEntry: { position } } } } };
    }
    throw new HttpError(400, 'The embedded forge does not serve this GraphQL document');
  });

  // The refs whose names begin with `ref` (`heads/gh-readonly-queue/main/`), as GitHub lists them.
  http.on('GET', '/repos/{owner}/{repo}/git/matching-refs/{ref}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const prefix = `refs/${ctx.params.ref!}`;
    if (!/^refs\/[\w./-]*$/.test(prefix) || prefix.includes('..')) throw new HttpError(422, 'Invalid ref');
    for (const branch of r.mergeQueue) queues.settle(r, branch);
    const refs = git(r.gitDir, ['for-each-ref', '--format=%(refname) %(objectname)', 'refs/'])
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ') as [string, string])
      .filter(([name]) => name.startsWith(prefix))
      .map(([ref, sha]) => ({
        ref,
        node_id: `REF_${sha.slice(0, 8)}`,
        url: shapes.apiUrl(`/repos/${r.fullName}/git/${ref}`),
        object: { type: 'commit', sha, url: shapes.apiUrl(`/repos/${r.fullName}/git/commits/${sha}`) },
      }));
    return { status: 200, body: refs };
  });

  // A commit as the git database has it: its tree and its parents, in order.
  http.on('GET', '/repos/{owner}/{repo}/git/commits/{commit_sha}', 'repo', (ctx) => {
    const r = repoOf(env, ctx);
    const want = ctx.params.commit_sha!;
    const sha = /^[0-9a-f]{40}$/.test(want) ? revParse(r.gitDir, `${want}^{commit}`) : null;
    if (!sha) throw new HttpError(404, 'Not Found');
    const [tree, parents, name, email, date, ...message] = git(r.gitDir, [
      'show',
      '-s',
      '--format=%T%n%P%n%an%n%ae%n%aI%n%B',
      sha,
    ]).split('\n') as string[];
    const person = { name: name!, email: email!, date: date! };
    const body = gitCommitJson(shapes, r, {
      sha,
      tree: tree!,
      parents: parents!.split(' ').filter(Boolean),
      message: message.join('\n').trimEnd(),
      person,
    });
    return { status: 200, body };
  });
}
