import { foldRevalidations } from '../helpers/landing.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeMarker } from '../../src/forge/marker.js';
import { Sandbox } from '../../sandbox/sandbox.js';
import { unclaimedWarnings } from '../helpers/sandbox-log.js';

/** Warnings the tests below provoke, each asserted where it is. */
const CLAIMED_WARNINGS: string[] = [];

// The same life of an issue through the command launcher: local processes
// with a per-run secret instead of workflow runs with OIDC tokens, and a
// lander whose exit code yoke reads as its verdict.

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = new Sandbox({ launcher: 'command', failAgent: 0, issues: 2, tickSeconds: 1 });
  await sandbox.start();
  await sandbox.waitUntil(() => sandbox.done(), 120_000, 'the demo to finish');
}, 150_000);

afterAll(async () => {
  await sandbox?.stop();
});

describe('the life of an issue (command launcher)', () => {
  it('SP18 label → AFK process → claim PR → lander process → verdict marker → merge → issue closed', async () => {
    const pr = [...sandbox.repo.issues.values()].find((i) => i.pull && i.body.includes('Closes #1'))!;
    // The pass that merges posts the verdict marker after its merges: wait for it rather than race it.
    await sandbox.waitUntil(
      () => sandbox.repo.comments.some((c) => c.issueNumber === pr.number && decodeMarker(c.body).kind === 'marker'),
      10_000,
      'the verdict marker',
    );
    const runs = foldRevalidations(
      (await sandbox.runs()).filter((r) => r.issueNumber === 1 || r.prNumber === pr.number),
    );
    expect(runs.map((r) => [r.kind, r.launcher, r.outcome])).toEqual([
      ['afk_auto', 'command', 'success'],
      ['lander', 'command', 'success'],
    ]);
    // TR02: the AFK run reports with its secret; the lander has none: its exit code is its verdict.
    expect(runs.map((r) => r.secretHash !== null)).toEqual([true, false]);
    expect(runs.every((r) => /^pid:\d+:\d+$/.test(r.launcherRef ?? ''))).toBe(true);
    const marker = sandbox.repo.comments
      .filter((c) => c.issueNumber === pr.number)
      .map((c) => decodeMarker(c.body))
      .filter((m) => m.kind === 'marker')
      .at(-1);
    expect(marker).toEqual({ kind: 'marker', payload: { run: runs[1]!.id, sha: runs[1]!.headSha, verdict: 'accept' } });
    expect(pr.pull?.merged).toBe(true);
    expect(sandbox.repo.issues.get(1)!.state).toBe('closed');
    expect(sandbox.forge.runner.runs).toEqual([]); // nothing went through Actions
    expect((await sandbox.summary()).map((r) => r.state)).toEqual(['merged', 'merged']);
  });
});

describe('what yoke logged here', () => {
  it('holds no warning or error that no test here claimed', () => {
    expect(unclaimedWarnings(sandbox, CLAIMED_WARNINGS)).toEqual([]);
  });
});
