// The REST routes yoke asks GitHub for, declared once as GitHub's own
// templates (its OpenAPI description names them so). A request's metric label,
// its span's name and the request budget's endpoint key are the template it
// matches, so their values are bounded by this list, not by the fleet: ten
// thousand repositories' issue listings are one endpoint, as GitHub counts
// them. A test holds that every route the forge's code names is here.

export const GITHUB_ROUTES = [
  'GET /app',
  'GET /app/installations',
  'POST /app/installations/{installation_id}/access_tokens',
  'POST /app-manifests/{code}/conversions',
  'GET /installation/repositories',
  'GET /repos/{owner}/{repo}',
  'GET /repos/{owner}/{repo}/installation',
  'GET /repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}',
  'GET /repos/{owner}/{repo}/actions/organization-secrets',
  'GET /repos/{owner}/{repo}/actions/secrets',
  'GET /repos/{owner}/{repo}/actions/runs',
  'GET /repos/{owner}/{repo}/actions/runs/{run_id}',
  'GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts',
  'GET /repos/{owner}/{repo}/actions/runs/{run_id}/pending_deployments',
  'POST /repos/{owner}/{repo}/actions/runs/{run_id}/cancel',
  'POST /repos/{owner}/{repo}/actions/runs/{run_id}/deployment_protection_rule',
  'GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs',
  'POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches',
  'GET /repos/{owner}/{repo}/branches/{branch}',
  'POST /repos/{owner}/{repo}/check-runs',
  'PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}',
  'GET /repos/{owner}/{repo}/collaborators/{username}/permission',
  'GET /repos/{owner}/{repo}/commits/{ref}',
  'GET /repos/{owner}/{repo}/compare/{basehead}',
  'GET /repos/{owner}/{repo}/contents/{path}',
  'POST /repos/{owner}/{repo}/deployments',
  'GET /repos/{owner}/{repo}/deployments/{deployment_id}/statuses',
  'POST /repos/{owner}/{repo}/deployments/{deployment_id}/statuses',
  'GET /repos/{owner}/{repo}/environments/{environment_name}',
  'GET /repos/{owner}/{repo}/environments/{environment_name}/deployment-branch-policies',
  'GET /repos/{owner}/{repo}/environments/{environment_name}/deployment_protection_rules',
  'POST /repos/{owner}/{repo}/git/blobs',
  'POST /repos/{owner}/{repo}/git/commits',
  'GET /repos/{owner}/{repo}/git/commits/{commit_sha}',
  'GET /repos/{owner}/{repo}/git/matching-refs/{ref}',
  'GET /repos/{owner}/{repo}/git/ref/{ref}',
  'POST /repos/{owner}/{repo}/git/refs',
  'PATCH /repos/{owner}/{repo}/git/refs/{ref}',
  'DELETE /repos/{owner}/{repo}/git/refs/{ref}',
  'POST /repos/{owner}/{repo}/git/trees',
  'GET /repos/{owner}/{repo}/git/trees/{tree_sha}',
  'GET /repos/{owner}/{repo}/issues',
  'POST /repos/{owner}/{repo}/issues',
  'GET /repos/{owner}/{repo}/issues/comments',
  'GET /repos/{owner}/{repo}/issues/comments/{comment_id}',
  'PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}',
  'GET /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions',
  'POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions',
  'GET /repos/{owner}/{repo}/issues/{issue_number}',
  'PATCH /repos/{owner}/{repo}/issues/{issue_number}',
  'GET /repos/{owner}/{repo}/issues/{issue_number}/comments',
  'POST /repos/{owner}/{repo}/issues/{issue_number}/comments',
  'GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by',
  'GET /repos/{owner}/{repo}/issues/{issue_number}/events',
  'POST /repos/{owner}/{repo}/issues/{issue_number}/labels',
  'DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}',
  'POST /repos/{owner}/{repo}/merges',
  'GET /repos/{owner}/{repo}/pulls',
  'POST /repos/{owner}/{repo}/pulls',
  'GET /repos/{owner}/{repo}/pulls/{pull_number}',
  'GET /repos/{owner}/{repo}/pulls/{pull_number}/comments',
  'GET /repos/{owner}/{repo}/pulls/{pull_number}/files',
  'PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge',
  'GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews',
  'GET /repos/{owner}/{repo}/rules/branches/{branch}',
] as const;

export type GithubRoute = (typeof GITHUB_ROUTES)[number];

/** What a path that matches none of the routes is labelled: one value, whatever the path. */
export const UNLISTED_ROUTE = '/{unlisted}';

/** Parameters that may hold a slash (a ref `heads/main`, a branch `feat/x`, a file's path): the rest of the path, when last. */
const SLASHED = new Set(['path', 'ref', 'branch', 'basehead', 'name']);

const PATHS = [...new Set(GITHUB_ROUTES.map((r) => r.slice(r.indexOf(' ') + 1)))];

/** Each path as a pattern, the most literal first (`/issues/comments` before `/issues/{issue_number}`). */
const PATTERNS = PATHS.map((template) => {
  const parts = template.split('/').slice(1);
  const literal = parts.filter((p) => !p.startsWith('{')).length;
  const source = parts
    .map((p, i) => {
      const param = /^\{(\w+)\}$/.exec(p)?.[1];
      if (!param) return p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      return i === parts.length - 1 && SLASHED.has(param) ? '.+' : '[^/]+';
    })
    .join('/');
  return { template, literal, re: new RegExp(`^/${source}$`) };
}).sort((a, b) => b.literal - a.literal);

/**
 * A request's route as GitHub's template (`/repos/{owner}/{repo}/issues`), never its URL: a template yoke's
 * code names fills itself; a whole URL (a next page's link, a GitHub Enterprise host's, `/repositories/42/…`)
 * is cut to its path without the API's prefix or the query and matched to the template it fills; a path
 * that fills none is `/{unlisted}`.
 */
export function routeOf(url: string): string {
  const path = url
    .replace(/^https?:\/\/[^/]+/, '')
    .replace(/^\/api\/v3(?=\/)/, '')
    .replace(/[?#].*$/, '');
  // GitHub's next-page links name a repository by its id.
  const named = path.replace(/^\/repositories\/\d+(?=\/|$)/, '/repos/_/_');
  return PATTERNS.find((p) => p.re.test(named))?.template ?? UNLISTED_ROUTE;
}
