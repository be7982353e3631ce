import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { costOf, GITHUB_SECONDARY_LIMITS, RequestBudget } from '../../src/forge/github/budget.js';
import { GITHUB_ROUTES, routeOf, UNLISTED_ROUTE } from '../../src/forge/github/routes.js';

// A request's label, span name and budget key are GitHub's route template: bounded by yoke's code, never by
// the fleet. The URLs here are the ones that are not templates: next-page links (GitHub's name a repository
// by its id, the embedded forge's by its name), an Enterprise host's, and paths an attacker could make a
// repository, branch or file be named.

const FORGE = new URL('../../src/forge/', import.meta.url).pathname;

describe("GitHub's route templates", () => {
  it('SC03 every route the forge names is declared once in GITHUB_ROUTES, and every declared one is named', () => {
    const named = new Set<string>();
    const sources = readdirSync(FORGE, { recursive: true, encoding: 'utf8' }).filter(
      (n) => n.endsWith('.ts') && !n.endsWith('routes.ts'),
    );
    for (const f of sources)
      for (const m of readFileSync(join(FORGE, f), 'utf8').matchAll(/'((?:GET|POST|PUT|PATCH|DELETE|HEAD) \/[^']*)'/g))
        named.add(m[1]!);
    expect([...named].filter((r) => !(GITHUB_ROUTES as readonly string[]).includes(r))).toEqual([]);
    expect(GITHUB_ROUTES.filter((r) => !named.has(r))).toEqual([]);
  });

  it('SC03 a whole URL is the template it fills: no owner, repository, workflow file, branch or number stays', () => {
    expect(
      [
        'https://api.github.com/repositories/42/issues?state=all&page=2',
        'http://127.0.0.1:4000/api/v3/repos/acme/demo/pulls?state=open&page=3',
        'https://ghe.example.com/api/v3/repos/Acme/Secret-Plans/actions/workflows/yoke-run.yml/runs?page=2',
        '/repos/acme/demo/issues/comments?since=2026-12-01T00:00:00Z',
        '/repos/acme/demo/issues/17/comments?page=2',
        '/repos/acme/demo/git/ref/heads/feat/x',
        '/repos/acme/demo/git/matching-refs/gh-readonly-queue/main',
        '/repos/acme/demo/contents/.github/yoke/qa/plan.yml',
        '/repos/acme/demo/pulls/9/reviews?page=2',
        '/repos/acme/demo/issues/comments/123/reactions?page=2',
        '/repos/acme/demo/weird/path',
        '/repos/acme/demo/issues/17/comments/../../../../../orgs/acme',
        '/repos/acme/demo/git/ref/heads/x{y}',
      ].map(routeOf),
    ).toEqual([
      '/repos/{owner}/{repo}/issues',
      '/repos/{owner}/{repo}/pulls',
      '/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs',
      '/repos/{owner}/{repo}/issues/comments',
      '/repos/{owner}/{repo}/issues/{issue_number}/comments',
      '/repos/{owner}/{repo}/git/ref/{ref}',
      '/repos/{owner}/{repo}/git/matching-refs/{ref}',
      '/repos/{owner}/{repo}/contents/{path}',
      '/repos/{owner}/{repo}/pulls/{pull_number}/reviews',
      '/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions',
      UNLISTED_ROUTE,
      UNLISTED_ROUTE,
      '/repos/{owner}/{repo}/git/ref/{ref}',
    ]);
    // A template yoke names is already its label.
    expect(routeOf('/repos/{owner}/{repo}/issues/{issue_number}')).toBe('/repos/{owner}/{repo}/issues/{issue_number}');
  });

  it("SC03 two repositories' next pages are one endpoint, as GitHub counts it: the 900 points a minute bind across them", () => {
    const a = costOf('GET', 'https://api.github.com/repositories/1/issues?page=2');
    const b = costOf('GET', 'https://api.github.com/repositories/2/issues?page=2');
    const c = costOf('GET', '/repos/other/repo/issues?page=2');
    expect(new Set([a.endpoint, b.endpoint, c.endpoint])).toEqual(new Set(['GET /repos/{owner}/{repo}/issues']));
    const at = 1_000_000;
    const budget = new RequestBudget(GITHUB_SECONDARY_LIMITS, () => at);
    for (let i = 0; i < 720; i++) budget.spend(i % 2 ? a : b);
    // 900 points with a fifth left: 720 fit, the next waits, whichever repository asks.
    expect(budget.waitFor(c)).toBeGreaterThan(0);
    expect(budget.waitFor(costOf('GET', '/repos/{owner}/{repo}/pulls'))).toBe(0);
  });
});
