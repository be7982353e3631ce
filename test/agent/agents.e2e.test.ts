import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_TASKS } from '../../sandbox/demo-repo.js';
import { Sandbox } from '../../sandbox/sandbox.js';
import { haveAgentClis } from './helpers.js';
import { unclaimedWarnings } from '../helpers/sandbox-log.js';
import { readFileAt } from '../../sandbox/git.js';
import { reviewHoldNote } from '../../src/fleet/notices/messages.js';

/** Warnings the tests below provoke, each asserted where it is. */
const CLAIMED_WARNINGS: string[] = [];

// The real path a user takes: yoke dispatches the shipped workflow of each
// agent; the forge runs it; the real CLI (Claude Code 2.1.332, Codex 0.171.0)
// talks to a scripted model on loopback and changes the tree; the deliver job
// pushes through the forge's git with yoke's push token and yoke opens the
// claim PR; the lander validates it; yoke merges it.

const ok = haveAgentClis('real-agent end-to-end tests');
let sandbox: Sandbox | null = null;
afterEach(async () => {
  const unclaimed = unclaimedWarnings(sandbox ?? undefined, CLAIMED_WARNINGS);
  await sandbox?.stop();
  sandbox = null;
  // Each test's sandbox logged no warning or error that no test here claimed.
  expect(unclaimed).toEqual([]);
});

async function runOne(agent: 'claude-code' | 'codex', task: (typeof DEMO_TASKS)[number]) {
  sandbox = new Sandbox({ launcher: 'actions', failAgent: 0, agent, tasks: [task] });
  await sandbox.start();
  await sandbox.waitUntil(() => sandbox!.done(), 90_000, 'the issue to be merged or stuck');
  return sandbox;
}

/**
 * The AFK run of a sandbox's one issue made its claim PR with the real CLI: the app's PR from the branch yoke named,
 * closing the issue with the run's trailer; the model got the issue as the prompt; and yoke recorded the cost its
 * model gateway counted of the model's two answers, priced as the CLI prices them (TR39).
 */
async function expectClaimByCli(s: Sandbox, agent: 'claude-code' | 'codex', task: (typeof DEMO_TASKS)[number]) {
  const afk = (await s.runs()).find((r) => r.kind === 'afk_auto')!;
  expect(afk.outcome).toBe('success');
  const pr = [...s.repo.issues.values()].find((i) => i.pull)!;
  expect(pr.user.login).toBe('yoke-sandbox[bot]');
  expect(pr.pull!.headRef).toBe(`yoke/1-${afk.id}`);
  expect(pr.body).toContain('Closes #1');
  expect(pr.body).toContain(`Yoke-Run: ${afk.id}`);
  expect(s.model!.prompts()[0]).toContain('You are resolving issue #1 of acme/demo.');
  expect(s.model!.prompts()[0]).toContain(`~~~data (the title)\n${task.title}\n~~~`);
  // Claude Code prints the same cost; the summary says it.
  const printed = Number(/Cost: \$([\d.]+)/.exec(afk.summary ?? '')?.[1]);
  expect(afk.cost?.usd).toBe(
    agent === 'claude-code' ? (2 * (1200 * 4 + 150 * 20)) / 1e6 : (2 * (1200 * 1.25 + 150 * 10)) / 1e6,
  );
  expect(afk.cost?.usd).toBeCloseTo(printed, 4);
  expect(afk.cost?.inputTokens).toBe(2 * 1200);
  expect(afk.cost?.outputTokens).toBe(2 * 150);
}

describe.skipIf(!ok)('real agents through the shipped workflows', () => {
  // One agent lands the pair; the other's fixes are the review's below (and containment.e2e's runs): a fix run's
  // prompt is the same text whichever CLI reads it.
  it("LD02 two PRs by the real codex CLI that each add a migration numbered 002 both land: the one judged on a base holding the other's is rejected with the failing validation output in its verdict and in its fix run's prompt, the CLI's fix renumbers it, and it lands", async () => {
    sandbox = new Sandbox({
      launcher: 'actions',
      failAgent: 0,
      agent: 'codex',
      tasks: DEMO_TASKS.filter((t) => t.migration),
    });
    const s = sandbox;
    await s.start();
    await s.waitUntil(() => s.done(), 120_000, 'both issues to be merged or stuck');
    expect((await s.summary()).map((r) => r.state)).toEqual(['merged', 'merged']);
    const fixes = (await s.runs()).filter((r) => r.kind === 'fix');
    expect(fixes.map((r) => [r.outcome, r.why])).toEqual([['success', 'a lander rejection']]);
    const fixPrompt = s.model!.prompts().find((p) => p.includes('You are repairing pull request'))!;
    expect(fixPrompt).toContain('The validation job failed at');
    expect(fixPrompt).toContain('FAIL migrations.test.js');
    expect(fixPrompt).toContain('two migrations share a number: 001, 002, 002');
    // The verdict comment shows the output collapsed.
    const verdict = s.repo.comments.find((c) => c.body.includes('yoke lander rejected'))!;
    expect(verdict.body).toContain('<details><summary>The end of the validation output</summary>');
    expect(verdict.body).toContain('two migrations share a number');
  }, 150_000);

  for (const agent of ['claude-code', 'codex'] as const) {
    it(`TR33 TR39 a labelled issue becomes a claim PR made by the real ${agent} CLI, and yoke records the cost its model gateway counted; the maintainer's change request with two inline comments becomes a fix by the same CLI: its prompt holds both, its commit lands on the claim branch, the lander accepts, and yoke merges once the maintainer approves`, async () => {
      const task = DEMO_TASKS.find((t) => t.review)!;
      const s = await runOne(agent, task);
      expect((await s.summary())[0]!.state).toBe('merged');
      await expectClaimByCli(s, agent, task);
      const runs = await s.runs();
      expect(runs.map((r) => `${r.kind}:${r.verdict ?? r.outcome}`)).toEqual([
        'afk_auto:success',
        'lander:accept',
        'fix:success',
        'lander:accept',
      ]);
      const [, first, fix, accept] = runs;
      expect(fix!.why).toBe('a review by @maintainer');
      const pr = [...s.repo.issues.values()].find((i) => i.pull)!;
      // The prompt the CLI sent the model holds the maintainer's words and both comments, each with its path, line and diff hunk.
      const prompt = s.model!.prompts().find((p) => p.includes('You are changing pull request'))!;
      const asked = prompt.slice(prompt.indexOf('## What people'), prompt.indexOf("## The issue's title")).trimEnd();
      const hunk = (path: string, line: number) =>
        s.repo.reviewComments.find((c) => c.pr === pr.number && c.path === path && c.line === line)!.diffHunk;
      const words = '~~~data (the words of @maintainer, who has write access to the repository)';
      expect(asked).toBe(
        [
          '## What people with write access asked for',
          'Do what they ask, unless it would break the tests.',
          '### A review by @maintainer',
          words,
          'Two changes before this merges, please.',
          '~~~',
          '',
          '#### On `lib/title-case.js`, line 1',
          '~~~data (the diff hunk the comment is on, from the PR)',
          hunk('lib/title-case.js', 1),
          '~~~',
          words,
          'Name the function `titleCase`, so a stack trace says where it failed.',
          '~~~',
          '',
          '#### On `test/title-case.test.js`, line 2',
          '~~~data (the diff hunk the comment is on, from the PR)',
          hunk('test/title-case.test.js', 2),
          '~~~',
          words,
          'Also check that a single word is capitalised.',
          '~~~',
        ].join('\n'),
      );
      expect(hunk('lib/title-case.js', 1)).toBe(`@@ -0,0 +1 @@\n+${task.impl.trimEnd()}`);
      // The agent's commit is the claim branch's new head, the lander accepted it, and the merge named it.
      expect(readFileAt(s.repo.gitDir, accept!.headSha!, `lib/${task.name}.js`)).toBe(task.review!.impl);
      expect(accept!.headSha).not.toBe(first!.headSha);
      expect(pr.pull).toMatchObject({ merged: true, headSha: accept!.headSha, mergeNamedSha: accept!.headSha });
      const approval = s.repo.reviews.find((r) => r.pr === pr.number && r.state === 'APPROVED')!;
      expect(approval.commitId).toBe(accept!.headSha);
      expect(pr.pull!.mergedAt!).toBeGreaterThanOrEqual(approval.submittedAt);
      const verdict = s.repo.comments.find((c) => c.body.includes(`"sha":"${accept!.headSha}"`))!;
      expect(verdict.body.endsWith(reviewHoldNote(['maintainer']))).toBe(true);
    }, 150_000);
  }
});
