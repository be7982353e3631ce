import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_TASKS } from '../../sandbox/demo-repo.js';
import { Sandbox } from '../../sandbox/sandbox.js';
import { haveAgentClis } from './helpers.js';
import { unclaimedWarnings } from '../helpers/sandbox-log.js';

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

describe.skipIf(!ok)('real agents through the shipped workflows', () => {
  for (const agent of ['claude-code', 'codex'] as const) {
    it(`a labelled issue becomes a claim PR made by the real ${agent} CLI, validated by the lander and merged; yoke records the cost the CLI printed`, async () => {
      const s = await runOne(agent, DEMO_TASKS[0]!);
      const [row] = await s.summary();
      expect(row!.state).toBe('merged');
      const afk = (await s.runs()).find((r) => r.kind === 'afk_auto')!;
      expect(afk.outcome).toBe('success');
      // The claim PR is the app's, from the branch yoke named, closing the issue with the run's trailer.
      const pr = [...s.repo.issues.values()].find((i) => i.pull)!;
      expect(pr.user.login).toBe('yoke-sandbox[bot]');
      expect(pr.pull!.headRef).toBe(`yoke/1-${afk.id}`);
      expect(pr.body).toContain('Closes #1');
      expect(pr.body).toContain(`Yoke-Run: ${afk.id}`);
      // The model got the issue as the prompt.
      expect(s.model!.prompts()[0]).toContain('You are resolving issue #1 of acme/demo.');
      expect(s.model!.prompts()[0]).toContain('~~~data (the title)\nAdd a shout helper\n~~~');
      // The cost is what the CLI printed (its own line in the run's summary), not an estimate of yoke's.
      const printed = Number(/Cost: \$([\d.]+)/.exec(afk.summary ?? '')?.[1]);
      expect(afk.cost?.usd).toBeGreaterThan(0);
      expect(afk.cost?.usd).toBeCloseTo(printed, 4);
      expect(afk.cost?.inputTokens).toBe(2 * 1200);
      expect(afk.cost?.outputTokens).toBe(2 * 150);
    }, 120_000);
  }

  it('a rejected PR gets a fix run whose prompt carries the failing validation output, and the repaired PR merges', async () => {
    const counter = DEMO_TASKS.find((t) => t.broken)!;
    const s = await runOne('claude-code', counter);
    expect((await s.summary())[0]!.state).toBe('merged');
    const kinds = (await s.runs()).map((r) => `${r.kind}:${r.verdict ?? r.outcome}`);
    expect(kinds).toEqual(['afk_auto:success', 'lander:reject', 'fix:success', 'lander:accept']);
    const fixPrompt = s.model!.prompts().find((p) => p.includes('You are repairing pull request'))!;
    expect(fixPrompt).toContain('The validation job failed at');
    expect(fixPrompt).toContain(`FAIL ${counter.name}.test.js`);
    // The verdict comment shows the output collapsed.
    const verdict = s.repo.comments.find((c) => c.body.includes('yoke lander rejected'))!;
    expect(verdict.body).toContain('<details><summary>The end of the validation output</summary>');
  }, 150_000);
});
