import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ENGINE_CONFIG, DEMO_REPO, DEMO_TASKS } from '../../sandbox/demo-repo.js';
import { git } from '../../sandbox/git.js';
import { Sandbox } from '../../sandbox/sandbox.js';
import { unclaimedWarnings } from '../helpers/sandbox-log.js';

// LD03 end to end with autoland.fast_forward, through the embedded GitHub and its Actions runner: yoke builds
// each lander's commit with GitHub's merges API on a branch of its own, the lander workflow checks out exactly
// that commit, yoke writes the lander's yoke/lander check on it, and an accept moves the default branch to it
// as a fast-forward. The branch's ruleset requires yoke/lander, as `yoke init` prints it, and lets nobody
// bypass it: GitHub's rule ("commits must first be pushed to another ref where the checks pass") is met by
// the check on the commit itself. GitHub marks each PR merged when its head reaches the branch.

let sandbox: Sandbox;
// Three of the demo's issues, two worked at once: a lander judges one PR stacked on another, the two that each add
// migration 002 meet, and the one rejected on the other's tree is fixed and lands by fast-forward too. (The demo's
// other reject and its review take the same landing path; test/sandbox/life.e2e.test.ts runs them through the PR.)
const TASKS = DEMO_TASKS.filter((t) => t.name === 'shout' || t.migration);
const FF_CONFIG = DEMO_ENGINE_CONFIG.replace(
  'autoland: { enabled: true, merge_method: squash }',
  'autoland: { enabled: true, merge_method: squash, fast_forward: true }',
);

beforeAll(async () => {
  sandbox = new Sandbox({
    launcher: 'actions',
    failAgent: 0,
    tickSeconds: 1,
    tasks: TASKS,
    files: { '.github/yoke.yml': FF_CONFIG },
  });
  await sandbox.start();
  // As `yoke init --app-id 1` prints it: yoke/lander from yoke's app (the sandbox's is app 1), and no other source.
  sandbox.repo.requiredChecks.set('main', [{ context: 'yoke/lander', integrationId: 1 }]);
  await sandbox.waitUntil(() => sandbox.done(), 180_000, 'every issue to land');
  // GitHub marks a PR merged as the branch moves; yoke records the landing just after.
  await sandbox.waitUntil(
    async () =>
      (await sandbox.runtime.store.merges.listForRepo(DEMO_REPO)).filter((m) => m.state === 'merged').length >=
      TASKS.length,
    30_000,
    'yoke to record every landing',
  );
}, 240_000);

afterAll(async () => {
  const unclaimed = unclaimedWarnings(sandbox);
  await sandbox?.stop();
  expect(unclaimed).toEqual([]);
});

describe('landing by fast-forward, end to end', () => {
  it('LD03 every PR lands as the very commit its lander checked out, by a fast-forward of a branch that requires yoke/lander, with no bypass; no PR is merged through the API', async () => {
    const runs = await sandbox.runs();
    const pulls = [...sandbox.repo.issues.values()].filter((i) => i.pull);
    expect(pulls.length).toBeGreaterThanOrEqual(TASKS.length);
    const landed = pulls.filter((i) => i.pull!.merged);
    expect(landed.length).toBe(TASKS.length);
    for (const i of landed) {
      // Marked merged by GitHub when its head reached main, at a commit an accepting lander judged.
      expect(i.pull!.mergeNamedSha).toBeNull();
      const judged = runs.find(
        (r) => r.kind === 'lander' && r.verdict === 'accept' && r.landSha === i.pull!.mergeCommitSha,
      );
      expect(judged, `#${i.number}`).toBeDefined();
      expect(judged!.prNumber).toBe(i.number);
    }
    // Each step main took is a commit some lander accepted as it was.
    const accepted = new Set(runs.filter((r) => r.verdict === 'accept').map((r) => r.landSha));
    const tips = git(sandbox.repo.gitDir, ['rev-list', '--first-parent', 'refs/heads/main'])
      .split('\n')
      .filter((c) => accepted.has(c));
    expect(tips.length).toBeGreaterThanOrEqual(TASKS.length);
    // A PR rejected on the tree the other migration moved was fixed, and landed by fast-forward too.
    const fixed = landed.filter((i) => runs.some((r) => r.kind === 'fix' && r.prNumber === i.number));
    expect(fixed.length).toBeGreaterThanOrEqual(1);
    // Stacks: at least one PR was judged on top of another, and landed from it.
    expect(runs.some((r) => r.kind === 'lander' && r.verdict === 'accept' && r.stack.length > 0)).toBe(true);
    // The check GitHub's rule asked for, on each landed commit.
    for (const i of landed)
      expect(
        sandbox.repo.checkRuns.find((c) => c.headSha === i.pull!.mergeCommitSha && c.name === 'yoke/lander'),
      ).toMatchObject({ status: 'completed', conclusion: 'success' });
    const merges = await sandbox.runtime.store.merges.listForRepo(DEMO_REPO);
    expect(
      merges
        .filter((m) => m.state === 'merged')
        .map((m) => m.mergeSha)
        .sort(),
    ).toEqual(landed.map((i) => i.pull!.mergeCommitSha).sort());
  });

  it("LD03 TR43 a commit no lander checked cannot land: GitHub refuses to move main to it, even with a yoke/lander check a workflow's token posted; nor may anyone move a branch that takes pull requests only", async () => {
    const main = git(sandbox.repo.gitDir, ['rev-parse', 'refs/heads/main']);
    const unchecked = git(sandbox.repo.gitDir, ['commit-tree', `${main}^{tree}`, '-p', main, '-m', 'by hand']);
    /** A writer moves main with the git refs API, as `gh api -X PATCH` would; GitHub's answer and its message. */
    const moveMain = async (body: object) => {
      const res = await fetch(`${sandbox.forge.url}/api/v3/repos/${DEMO_REPO}/git/refs/heads%2Fmain`, {
        method: 'PATCH',
        headers: { authorization: `token ${sandbox.maintainerToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return [res.status, ((await res.json()) as { message: string }).message] as const;
    };
    const [status, message] = await moveMain({ sha: unchecked });
    expect(status).toBe(422);
    expect(message).toContain('Required status check "yoke/lander" is expected');
    // TR43: a workflow's token (any writer's workflow with checks: write) posts a yoke/lander success on that commit:
    // the ruleset names yoke's app as the check's source, so GitHub still refuses the move.
    const wf = sandbox.forge.state.workflowToken(DEMO_REPO, true);
    const posted = await fetch(`${sandbox.forge.url}/api/v3/repos/${DEMO_REPO}/check-runs`, {
      method: 'POST',
      headers: { authorization: `token ${wf}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'yoke/lander', head_sha: unchecked, status: 'completed', conclusion: 'success' }),
    });
    expect(posted.status).toBe(201);
    const [againStatus, againMessage] = await moveMain({ sha: unchecked });
    expect(againStatus).toBe(422);
    expect(againMessage).toContain('Required status check "yoke/lander" is expected');
    sandbox.repo.protectedBranches.add('main');
    const [forcedStatus, forcedMessage] = await moveMain({ sha: main, force: true });
    expect(forcedStatus).toBe(422);
    expect(forcedMessage).toContain('Repository rule violations found');
  });
});
