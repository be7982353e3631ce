import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_REPO, DEMO_TASKS } from '../../sandbox/demo-repo.js';
import type { ForgeRepo } from '../../sandbox/forge/state.js';
import { parseClosingRefs } from '../../src/forge/body-text.js';
import { git, isAncestor } from '../../sandbox/git.js';
import { Sandbox } from '../../sandbox/sandbox.js';
import { publishedPayload } from '../helpers/probot.js';
import { unclaimedWarnings } from '../helpers/sandbox-log.js';

// LD04 end to end, through the embedded GitHub and its Actions runner: main's ruleset requires GitHub's merge
// queue and the yoke/lander check. yoke validates each claim PR alone on main, adds it to the queue once
// accepted (GraphQL enqueuePullRequest, at the head the lander judged), and launches a lander for every merge
// group GitHub builds (told by `merge_group`, read from the gh-readonly-queue branches), which checks out the
// group's very commit and writes yoke/lander on it. GitHub's queue merges only what passed there; yoke never
// merges a PR itself. The demo's two PRs that conflict only in meaning meet in the queue: the second's group
// fails, GitHub drops it, and yoke fixes it and queues it again.

let sandbox: Sandbox;
// Three of the demo's issues: a PR that lands alone, and the two that each add migration 002. (The demo's
// other rejects, fixes and review take the same landing path; test/sandbox/life.e2e.test.ts runs them through the PR.)
const TASKS = DEMO_TASKS.filter((t) => t.name === 'shout' || t.migration);

/** The claim PRs of the two demo issues whose changes each add a migration numbered 002. */
function migrationPulls(repo: ForgeRepo): number[] {
  const issues = [...repo.issues.values()]
    .filter((i) => !i.pull && DEMO_TASKS.some((t) => t.migration && t.title === i.title))
    .map((i) => i.number);
  return [...repo.issues.values()]
    .filter((i) => i.pull && parseClosingRefs(i.body).some((n) => issues.includes(n)))
    .map((i) => i.number);
}

beforeAll(async () => {
  sandbox = new Sandbox({ launcher: 'actions', failAgent: 0, tickSeconds: 1, tasks: TASKS });
  await sandbox.start();
  sandbox.repo.mergeQueue.add('main');
  sandbox.repo.requiredChecks.set('main', [{ context: 'yoke/lander', integrationId: 1 }]);
  // The two PRs that each add migration 002 must meet in the queue, as two agents finishing together would:
  // GitHub's queue builds no group until both are queued (each was accepted alone on the same base).
  sandbox.forge.hooks.holdQueue = (repo, _branch, queued) => {
    const both = migrationPulls(repo).length === 2 && migrationPulls(repo).every((n) => queued.includes(n));
    if (both) sandbox.forge.hooks.holdQueue = undefined;
    return !both;
  };
  await sandbox.waitUntil(() => sandbox.done(), 240_000, 'every issue to land through the merge queue');
}, 300_000);

afterAll(async () => {
  const unclaimed = unclaimedWarnings(sandbox);
  await sandbox?.stop();
  expect(unclaimed).toEqual([]);
});

describe("landing through GitHub's merge queue, end to end", () => {
  it('LD04 every PR lands by the queue, at a merge group commit an accepting lander checked out; yoke merged none itself and asked for no fast-forward', async () => {
    const runs = await sandbox.runs();
    const landed = [...sandbox.repo.issues.values()].filter((i) => i.pull?.merged);
    expect(landed.length).toBe(TASKS.length);
    for (const i of landed) {
      // Marked merged when the queue moved main to its group's commit.
      expect(i.pull!.mergeNamedSha, `#${i.number}`).toBeNull();
      const group = runs.find(
        (r) => r.kind === 'lander' && r.verdict === 'accept' && r.landSha === i.pull!.mergeCommitSha,
      );
      expect(group, `#${i.number} landed at a commit a lander accepted`).toBeDefined();
      expect(group!.prNumber).toBe(i.number);
      expect(
        sandbox.repo.checkRuns.find((c) => c.headSha === i.pull!.mergeCommitSha && c.name === 'yoke/lander'),
      ).toMatchObject({ status: 'completed', conclusion: 'success' });
    }
    // Each step main took since the queue was required is a group commit a lander accepted.
    const accepted = new Set(runs.filter((r) => r.verdict === 'accept' && r.landSha).map((r) => r.landSha));
    const steps = git(sandbox.repo.gitDir, ['rev-list', '--first-parent', 'refs/heads/main'])
      .split('\n')
      .slice(0, landed.length);
    expect(steps.filter((c) => !accepted.has(c))).toEqual([]);
    // yoke never merged through the PR API, nor moved main.
    const asked = sandbox.forge.http.stats.log.filter((l) => l.auth === 'installation');
    expect(asked.filter((l) => /\/pulls\/\d+\/merge$/.test(l.path))).toEqual([]);
    expect(asked.filter((l) => l.method === 'PATCH' && /\/git\/refs\/heads/.test(l.path))).toEqual([]);
    expect(await sandbox.runtime.store.merges.listForRepo(DEMO_REPO)).toEqual([]);
    // Each accepted PR was queued once per accept, and GitHub told yoke of each group it built.
    const enqueues = await sandbox.runtime.store.enqueues.listForRepo(DEMO_REPO);
    expect(enqueues.every((e) => e.state === 'queued')).toBe(true);
    expect(new Set(enqueues.map((e) => e.prNumber))).toEqual(new Set(landed.map((i) => i.number)));
    const built = sandbox.forge.deliveries.filter((d) => d.event === 'merge_group' && d.action === 'checks_requested');
    expect(built.length).toBeGreaterThanOrEqual(TASKS.length);
    expect(built.every((d) => d.status === 200)).toBe(true);
    // Shaped as GitHub's published example of the event.
    const published = publishedPayload('merge_group', 'checks_requested');
    const sent = JSON.parse(built[0]!.payload) as typeof published;
    expect(Object.keys(sent).sort()).toEqual(
      Object.keys(published)
        .filter((k) => k !== 'organization')
        .sort(),
    );
    expect(Object.keys(sent.merge_group).sort()).toEqual(Object.keys(published.merge_group).sort());
    expect(Object.keys(sent.merge_group.head_commit).sort()).toEqual(
      Object.keys(published.merge_group.head_commit).sort(),
    );
    expect(sent.merge_group.head_ref).toMatch(/^refs\/heads\/gh-readonly-queue\/main\/pr-\d+-[0-9a-f]{40}$/);
  });

  it('LD04 LD05 LD06 the two PRs that each add migration 002 meet in the queue: the group of the second fails and GitHub drops it; validated once more on that tree, it is rejected again, fixed, queued again, and lands in a group of its own', async () => {
    const runs = await sandbox.runs();
    const [first, second] = migrationPulls(sandbox.repo).sort(
      (a, b) =>
        runs.find((r) => r.prNumber === a && r.landSha)!.launchedAt -
        runs.find((r) => r.prNumber === b && r.landSha)!.launchedAt,
    ) as [number, number];
    const groups = runs.filter((r) => r.kind === 'lander' && r.landSha);
    // The second's first group held the first (stacked below it, or already landed on the base it was built
    // on): the tree that would have landed, and it failed.
    const failed = groups.find((r) => r.prNumber === second && r.verdict === 'reject')!;
    const firstHead = sandbox.repo.issues.get(first)!.pull!.headSha;
    expect(
      failed.stack.some((m) => m.pr === first) || isAncestor(sandbox.repo.gitDir, firstHead, failed.baseSha!),
    ).toBe(true);
    expect(groups.find((r) => r.prNumber === first)!.verdict).toBe('accept');
    const destroyed = sandbox.forge.deliveries
      .filter((d) => d.event === 'merge_group' && d.action === 'destroyed')
      .map((d) => JSON.parse(d.payload) as { reason?: string; merge_group: { head_sha: string } });
    expect(destroyed.find((d) => d.merge_group.head_sha === failed.landSha)?.reason).toBe('dequeued');
    // Before a fix is spent, its reject is confirmed (LD06): validated once more, rejected again. (When the
    // group below it landed before yoke read the queue, yoke cannot tell that group's tree from the one its
    // lander accepted, so the group's reject blames nobody and the PR is first validated alone on the new base.)
    const after = runs.filter((r) => r.prNumber === second && r.launchedAt > failed.launchedAt);
    const fix = after.findIndex((r) => r.kind === 'fix');
    expect(fix).toBeGreaterThan(0);
    expect(after.slice(0, fix).every((r) => r.kind === 'lander' && r.verdict === 'reject' && !r.landSha)).toBe(true);
    expect(after[fix - 1]!.why).toMatch(
      /^a reject of a head accepted before.*: validated once more before a fix \(LD06\)$/,
    );
    // Fixed, it landed from a group a lander accepted.
    const pull = sandbox.repo.issues.get(second)!.pull!;
    expect(pull.merged).toBe(true);
    expect(
      groups.some((r) => r.prNumber === second && r.verdict === 'accept' && r.landSha === pull.mergeCommitSha),
    ).toBe(true);
  });

  it("LD04 nobody but GitHub's queue writes its branches, and a PR whose required check has not passed is not queued", async () => {
    const main = git(sandbox.repo.gitDir, ['rev-parse', 'refs/heads/main']);
    const api = `${sandbox.forge.url}/api/v3/repos/${DEMO_REPO}`;
    const headers = { authorization: `token ${sandbox.maintainerToken}`, 'content-type': 'application/json' };
    const forged = await fetch(`${api}/git/refs`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ ref: `refs/heads/gh-readonly-queue/main/pr-1-${'a'.repeat(40)}`, sha: main }),
    });
    expect(forged.status).toBe(422);
    // A person's PR, open without a yoke/lander check: GitHub will not queue it.
    const branch = git(sandbox.repo.gitDir, ['commit-tree', `${main}^{tree}`, '-p', main, '-m', 'by hand']);
    git(sandbox.repo.gitDir, ['update-ref', 'refs/heads/by-hand', branch]);
    const opened = (await (
      await fetch(`${api}/pulls`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ title: 'By hand', head: 'by-hand', base: 'main' }),
      })
    ).json()) as { number: number; node_id?: string };
    const enqueue = await fetch(`${sandbox.forge.url}/api/graphql`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        query:
          'mutation($id: ID!, $head: GitObjectID!) { enqueuePullRequest(input: { pullRequestId: $id, expectedHeadOid: $head }) { mergeQueueEntry { position } } }',
        variables: { id: `PR_${sandbox.repo.id}_${opened.number}`, head: branch },
      }),
    });
    expect(await enqueue.json()).toEqual({
      data: { enqueuePullRequest: null },
      errors: [
        {
          type: 'UNPROCESSABLE',
          path: ['enqueuePullRequest'],
          message: `Required status checks have not passed on ${branch.slice(0, 7)}`,
        },
      ],
    });
  });
});
