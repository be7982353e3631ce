import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_REPO } from '../../sandbox/demo-repo.js';
import { git } from '../../sandbox/git.js';
import { Sandbox } from '../../sandbox/sandbox.js';
import { unclaimedWarnings } from '../helpers/sandbox-log.js';

/** Warnings the tests below provoke, each asserted where it is. */
const CLAIMED_WARNINGS: string[] = [];

// The paths where something goes wrong, end to end through real HTTP.

let sandbox: Sandbox | null = null;
afterEach(async () => {
  const unclaimed = unclaimedWarnings(sandbox ?? undefined, CLAIMED_WARNINGS);
  await sandbox?.stop();
  sandbox = null;
  // Each test's sandbox logged no warning or error that no test here claimed.
  expect(unclaimed).toEqual([]);
});

/** Someone pushes a commit to a claim PR's branch. */
function pushTo(gitDir: string, branch: string): void {
  const dir = mkdtempSync(join(tmpdir(), 'yoke-push-'));
  try {
    git(dir, ['clone', '--quiet', gitDir, '.']);
    git(dir, ['checkout', '--quiet', branch]);
    writeFileSync(join(dir, 'NOTES.md'), 'A late change.\n');
    git(dir, ['add', '-A']);
    git(dir, [
      '-c',
      'user.name=someone',
      '-c',
      'user.email=someone@example.invalid',
      'commit',
      '--quiet',
      '-m',
      'A late change',
    ]);
    git(dir, ['push', '--quiet', 'origin', `HEAD:refs/heads/${branch}`]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('recovery, end to end', () => {
  it('GH03 a push to a claim PR after its accept makes GitHub refuse the merge, and a new lander validates the new head', async () => {
    sandbox = new Sandbox({ launcher: 'actions', failAgent: 0, issues: 1, tickSeconds: 1 });
    let pushed = false;
    await sandbox.start();
    const s = sandbox;
    s.forge.hooks.beforeMerge = (repo, pr) => {
      if (pushed) return;
      pushed = true;
      pushTo(repo.gitDir, repo.issues.get(pr)!.pull!.headRef);
    };
    await s.waitUntil(() => s.done(), 120_000, 'the issue to merge');
    const pr = [...s.repo.issues.values()].find((i) => i.pull)!;
    const landers = (await s.runs()).filter((r) => r.kind === 'lander');
    expect(landers.map((r) => r.verdict)).toEqual(['accept', 'accept']);
    expect(landers[0]!.headSha).not.toBe(landers[1]!.headSha);
    const refusal = s.repo.comments.find(
      (c) => c.issueNumber === pr.number && c.body.startsWith('yoke did not merge this PR.'),
    );
    expect(refusal?.body).toContain(
      `GitHub refused to merge #${pr.number} at ${landers[0]!.headSha!.slice(0, 7)}: Head branch was modified.`,
    );
    expect((await s.runtime.store.merges.get(DEMO_REPO, pr.number, landers[0]!.headSha!))?.state).toBe('refused');
    expect(pr.pull).toMatchObject({ merged: true, headSha: landers[1]!.headSha });
  }, 150_000);

  it('SP15 three AFK failures pause the repo; a manual start is refused with 409; /yoke reset un-pauses', async () => {
    sandbox = new Sandbox({ launcher: 'actions', failAgent: 3, issues: 2, tickSeconds: 1 });
    await sandbox.start();
    const s = sandbox;
    await s.waitUntil(() => s.paused(), 60_000, 'the pause');
    expect(
      (await s.runs()).filter((r) => r.kind === 'afk_auto' && r.outcome === 'failure').length,
    ).toBeGreaterThanOrEqual(3);
    const pauseNotice = () => s.repo.comments.find((c) => c.body.startsWith('yoke paused acme/demo after'));
    await s.waitUntil(() => Boolean(pauseNotice()), 10_000, 'the pause notice');
    expect(pauseNotice()!.body).toBe(
      'yoke paused acme/demo after 3 consecutive AFK failures: the auto loop is stopped and manual starts are refused until someone resets it.\n\n' +
        '**To recover:** Comment `/yoke reset` on any issue of acme/demo, or run `yoke repo reset acme/demo`.',
    );
    const refused = await s.api('POST', `/yoke/api/repos/${DEMO_REPO}/issues/1/start`);
    expect(refused).toEqual({
      status: 409,
      body: {
        error: {
          code: 'repo_paused',
          message: 'acme/demo is paused: it reached 3 consecutive AFK failures, and only a reset lifts the pause.',
          recovery: 'Comment `/yoke reset` on any issue of acme/demo, or run `yoke repo reset acme/demo`.',
        },
      },
    });
    await s.comment(1, '/yoke reset');
    await s.waitUntil(async () => !(await s.paused()), 30_000, '/yoke reset to be processed');
    const reply = () =>
      s.repo.comments.find(
        (c) => c.user.login === 'yoke-sandbox[bot]' && c.body.startsWith('@maintainer Reset acme/demo'),
      );
    await s.waitUntil(() => Boolean(reply()), 10_000, 'the reply');
    expect(reply()!.body).toContain('and the pause lifted');
    await s.waitUntil(() => s.done(), 90_000, 'both issues to merge');
    expect((await s.summary()).map((r) => r.state)).toEqual(['merged', 'merged']);
  }, 180_000);

  it('SP17 yoke restarted in the middle of a run loses nothing: the run is still live after the restart and is reaped when it ends', async () => {
    sandbox = new Sandbox({ launcher: 'actions', failAgent: 0, issues: 1, tickSeconds: 1, agentDelayMs: 4000 });
    await sandbox.start();
    const s = sandbox;
    await s.waitUntil(
      () => s.forge.runner.runs.some((w) => w.status === 'in_progress'),
      30_000,
      'a run to be in progress',
    );
    const [live] = await s.runtime.store.runs.listLive();
    expect(live?.kind).toBe('afk_auto');
    await s.restartYoke();
    expect(await s.runtime.store.runs.get(live!.id)).toMatchObject({ status: 'live' });
    await s.waitUntil(
      async () => (await s.runtime.store.runs.get(live!.id))?.status === 'ended',
      30_000,
      'the run to be reaped',
    );
    expect(await s.runtime.store.runs.get(live!.id)).toMatchObject({ outcome: 'success', outcomeReason: null });
    await s.waitUntil(() => s.done(), 60_000, 'the issue to merge');
    expect((await s.runs()).filter((r) => r.kind === 'afk_auto')).toHaveLength(1);
  }, 150_000);
});
