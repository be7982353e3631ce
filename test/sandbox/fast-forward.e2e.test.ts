import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ENGINE_CONFIG, DEMO_REPO } from '../../sandbox/demo-repo.js';
import { git } from '../../sandbox/git.js';
import { Sandbox } from '../../sandbox/sandbox.js';
import { unclaimedWarnings } from '../helpers/sandbox-log.js';

// LD03 end to end with autoland.fast_forward, through the embedded GitHub and its Actions runner: yoke builds
// each lander's commit with GitHub's merges API, the lander workflow checks out exactly that commit, and an
// accept moves the protected default branch to it, as a fast-forward only yoke's app may make (a ruleset
// bypass). GitHub marks each PR merged when its head reaches the branch.

let sandbox: Sandbox;
const FF_CONFIG = DEMO_ENGINE_CONFIG.replace(
  'autoland: { enabled: true, merge_method: squash }',
  'autoland: { enabled: true, merge_method: squash, fast_forward: true }',
);

beforeAll(async () => {
  sandbox = new Sandbox({
    launcher: 'actions',
    failAgent: 0,
    tickSeconds: 1,
    files: { '.github/yoke.yml': FF_CONFIG },
  });
  await sandbox.start();
  sandbox.repo.protectedBranches.add('main');
  sandbox.repo.rulesetBypass.add(`${sandbox.forge.opts.appSlug}[bot]`);
  await sandbox.waitUntil(() => sandbox.done(), 180_000, 'every issue to land');
  // GitHub marks a PR merged as the branch moves; yoke records the landing just after.
  await sandbox.waitUntil(
    async () =>
      (await sandbox.runtime.store.merges.listForRepo(DEMO_REPO)).filter((m) => m.state === 'merged').length >= 5,
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
  it('LD03 every PR lands as the very commit its lander checked out, by a fast-forward of the protected branch; no PR is merged through the API', async () => {
    const runs = await sandbox.runs();
    const pulls = [...sandbox.repo.issues.values()].filter((i) => i.pull);
    expect(pulls.length).toBeGreaterThanOrEqual(5);
    const landed = pulls.filter((i) => i.pull!.merged);
    expect(landed.length).toBe(5);
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
    expect(tips.length).toBeGreaterThanOrEqual(5);
    // Stacks: at least one PR was judged on top of another, and landed from it.
    expect(runs.some((r) => r.kind === 'lander' && r.verdict === 'accept' && r.stack.length > 0)).toBe(true);
    const merges = await sandbox.runtime.store.merges.listForRepo(DEMO_REPO);
    expect(
      merges
        .filter((m) => m.state === 'merged')
        .map((m) => m.mergeSha)
        .sort(),
    ).toEqual(landed.map((i) => i.pull!.mergeCommitSha).sort());
  });

  it('LD03 someone the ruleset does not let bypass it cannot move main, even to a commit yoke validated', async () => {
    const main = git(sandbox.repo.gitDir, ['rev-parse', 'refs/heads/main']);
    const res = await fetch(`${sandbox.forge.url}/api/v3/repos/${DEMO_REPO}/git/refs/heads%2Fmain`, {
      method: 'PATCH',
      headers: { authorization: `token ${sandbox.maintainerToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sha: main, force: true }),
    });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { message: string }).message).toContain('Repository rule violations found');
  });
});
