import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { revParse } from '../git.js';
import { runBuffered } from '../spawner.js';
import type { Credential, ForgeRepo, ForgeState, PushCommit } from './state.js';

// Git over HTTPS, as github.com serves it: `https://host/owner/repo.git`,
// Basic auth with a token as the password (how actions/checkout and git's
// credential helpers send it). Reads need a token of the repository; a push
// needs write, and an installation token scoped to other repositories or
// without `contents: write` is refused, as GitHub refuses it. Served by
// `git http-backend`.

export const GIT_PATH = /^\/([\w.-]+)\/([\w.-]+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;

export interface GitAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

function tokenOf(req: IncomingMessage): string | null {
  const h = req.headers.authorization ?? '';
  const basic = /^basic\s+(.+)$/i.exec(h);
  if (basic) {
    const [, password] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(/:(.*)/s);
    return password || null;
  }
  return /^(?:token|bearer)\s+(.+)$/i.exec(h)?.[1] ?? null;
}

/** Whether a credential may read, or push to, a repository. */
export function gitAccess(
  state: ForgeState,
  repo: ForgeRepo,
  cred: Credential | undefined,
  push: boolean,
  now: number,
): 'ok' | 'unauthenticated' | 'denied' {
  if (!cred || cred.expiresAt < now) return 'unauthenticated';
  if (cred.kind === 'workflow') return cred.repo === repo.fullName && (!push || cred.write) ? 'ok' : 'denied';
  if (cred.kind === 'installation') {
    if (cred.installationId !== repo.installationId) return 'denied';
    if (cred.scope && !cred.scope.repos.includes(repo.name)) return 'denied';
    if (push && cred.scope && cred.scope.permissions.contents !== 'write') return 'denied';
    return 'ok';
  }
  const role = repo.collaborators[cred.user.login];
  if (!push) return 'ok';
  return role === 'admin' || role === 'maintain' || role === 'write' ? 'ok' : 'denied';
}

/**
 * GitHub's refusals as a pre-receive hook: a push to a branch a protection
 * rule or ruleset covers (it takes changes through a pull request only), and
 * a workflow change pushed without the `workflows` permission.
 */
const PRE_RECEIVE = `#!/bin/sh
z=0000000000000000000000000000000000000000
while read old new ref; do
  # LD04: the merge queue's branches are GitHub's own: nobody pushes to them.
  case "$ref" in refs/heads/gh-readonly-queue/*)
    echo "GH013: Repository rule violations found for $ref." >&2
    echo "- Merge queue branches are read-only." >&2
    exit 1;;
  esac
  for b in $FORGE_PROTECTED; do
    if [ "$ref" = "refs/heads/$b" ]; then
      echo "GH013: Repository rule violations found for $ref." >&2
      echo "- Changes must be made through a pull request." >&2
      exit 1
    fi
  done
  [ "$FORGE_NO_WORKFLOWS" = 1 ] || continue
  [ "$new" = "$z" ] && continue
  if [ "$old" = "$z" ]; then set -- "$new" --not --all; else set -- "$old..$new"; fi
  f=$(git rev-list "$@" | while read c; do git diff-tree --no-commit-id --name-only -r --root "$c" -- .github/workflows; done | head -n 1)
  if [ -n "$f" ]; then
    echo "refusing to allow a GitHub App to create or update workflow \\\`$f\\\` without \\\`workflows\\\` permission" >&2
    exit 1
  fi
done
`;

function forgeHooks(root: string): string {
  const dir = join(root, '.forge-hooks');
  if (!existsSync(join(dir, 'pre-receive'))) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'pre-receive'), PRE_RECEIVE, { mode: 0o755 });
  }
  return dir;
}

export async function serveGit(
  state: ForgeState,
  req: IncomingMessage,
  url: URL,
  body: Buffer,
  now: number,
): Promise<GitAnswer | null> {
  const m = GIT_PATH.exec(url.pathname);
  if (!m) return null;
  const repo = state.repos.get(`${m[1]}/${m[2]}`);
  const text = (status: number, msg: string, headers: Record<string, string> = {}) => ({
    status,
    headers: { 'content-type': 'text/plain', ...headers },
    body: Buffer.from(`${msg}\n`),
  });
  if (!repo) return text(404, 'Repository not found.');
  const push = m[3] === 'git-receive-pack' || url.searchParams.get('service') === 'git-receive-pack';
  const cred = (() => {
    const t = tokenOf(req);
    return t ? state.credential(t) : undefined;
  })();
  const access = gitAccess(state, repo, cred, push, now);
  if (access === 'unauthenticated')
    return text(401, 'Invalid username or token.', { 'www-authenticate': 'Basic realm="GitHub"' });
  if (access === 'denied') return text(403, `Permission to ${repo.fullName}.git denied.`);
  const gitDir = repo.gitDir;
  const root = gitDir.slice(0, gitDir.lastIndexOf('/'));
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: `/${gitDir.slice(root.length + 1)}/${m[3]}`,
    REQUEST_METHOD: req.method ?? 'GET',
    QUERY_STRING: url.search.slice(1),
    CONTENT_TYPE: String(req.headers['content-type'] ?? ''),
    // git gzips larger requests; http-backend inflates them when told.
    HTTP_CONTENT_ENCODING: String(req.headers['content-encoding'] ?? ''),
    GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
    CONTENT_LENGTH: String(body.length),
    REMOTE_USER: 'x-access-token',
    GIT_CONFIG_COUNT: '3',
    GIT_CONFIG_KEY_0: 'http.receivepack',
    GIT_CONFIG_VALUE_0: 'true',
    GIT_CONFIG_KEY_1: 'uploadpack.allowAnySHA1InWant',
    GIT_CONFIG_VALUE_1: 'true',
    GIT_CONFIG_KEY_2: 'core.hooksPath',
    GIT_CONFIG_VALUE_2: forgeHooks(root),
    // An app's token (and a job's GITHUB_TOKEN) has no `workflows` permission: GitHub refuses its push of a workflow change.
    FORGE_NO_WORKFLOWS: push && cred && (cred.kind === 'installation' || cred.kind === 'workflow') ? '1' : '0',
    // Branch names the forge's own state holds (never a request's), one word each.
    FORGE_PROTECTED: push ? [...repo.protectedBranches].join(' ') : '',
  };
  const branchBefore = push ? revParse(gitDir, `refs/heads/${repo.defaultBranch}`) : null;
  const backend = await runBuffered({ file: 'git', args: ['http-backend'], env, input: body });
  if (backend.code === null) throw new Error(`git http-backend did not run for ${repo.fullName}`);
  const out = backend.stdout;
  const split = out.indexOf('\r\n\r\n');
  const headText = split >= 0 ? out.subarray(0, split).toString('latin1') : '';
  const headers: Record<string, string> = {};
  let status = 200;
  for (const line of headText.split('\r\n')) {
    const i = line.indexOf(':');
    if (i < 0) continue;
    const k = line.slice(0, i).trim().toLowerCase();
    const v = line.slice(i + 1).trim();
    if (k === 'status') status = Number(v.split(' ')[0]);
    else headers[k] = v;
  }
  if (push) {
    state.syncPulls(repo);
    // GitHub's push webhook for the default branch, with each new commit's added, modified and removed files.
    const after = revParse(gitDir, `refs/heads/${repo.defaultBranch}`);
    const pusher = (() => {
      const t = tokenOf(req);
      return t ? state.credential(t)?.user : undefined;
    })();
    if (after && after !== branchBefore && pusher)
      state.pushed(
        repo,
        `refs/heads/${repo.defaultBranch}`,
        branchBefore,
        after,
        await commitsBetween(gitDir, branchBefore, after),
        pusher,
      );
  }
  return { status, headers, body: split >= 0 ? out.subarray(split + 4) : out };
}

/** The commits a push added (oldest first, at most 20), each with the files it added, modified and removed. */
async function commitsBetween(gitDir: string, before: string | null, after: string): Promise<PushCommit[]> {
  const range = before ? [`${before}..${after}`] : ['-1', after];
  const log = await runBuffered({
    file: 'git',
    args: ['--git-dir', gitDir, 'log', '--reverse', '--max-count=20', '--name-status', '--format=commit %H', ...range],
    env: process.env,
  });
  const text = log.code === 0 ? log.stdout.toString('utf8') : '';
  const commits: PushCommit[] = [];
  for (const line of text.split('\n')) {
    const c = /^commit ([0-9a-f]{40})$/.exec(line);
    if (c) {
      commits.push({ id: c[1]!, added: [], modified: [], removed: [] });
      continue;
    }
    const f = /^([AMDR])\d*\t(.+?)(?:\t(.+))?$/.exec(line);
    const last = commits.at(-1);
    if (!f || !last) continue;
    if (f[1] === 'A') last.added.push(f[2]!);
    else if (f[1] === 'D') last.removed.push(f[2]!);
    else if (f[1] === 'R') (last.removed.push(f[2]!), last.added.push(f[3]!));
    else last.modified.push(f[2]!);
  }
  return commits;
}
