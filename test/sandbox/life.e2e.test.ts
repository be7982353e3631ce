import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeMarker } from '../../src/forge/marker.js';
import { DEMO_REPO, DEMO_TASKS } from '../../sandbox/demo-repo.js';
import { readBrief } from '../../src/agent/brief.js';
import { reviewHoldNote } from '../../src/fleet/notices/messages.js';
import { Sandbox } from '../../sandbox/sandbox.js';
import { unclaimedWarnings } from '../helpers/sandbox-log.js';
import { foldRevalidations } from '../helpers/landing.js';
import { git, revParse } from '../../sandbox/git.js';
import { normalize } from '../../src/fleet/stacks.js';

/** Warnings the tests below provoke, each asserted where it is. */
const CLAIMED_WARNINGS: string[] = ['signature does not match event payload and secret'];

// End to end through real HTTP: the embedded forge, yoke started through
// GHE_HOST, the Actions launcher, the demo agent, lander and fixer.

let sandbox: Sandbox;

beforeAll(async () => {
  sandbox = new Sandbox({ launcher: 'actions', failAgent: 0, tickSeconds: 1, reaperSeconds: 1 });
  await sandbox.start();
  await sandbox.waitUntil(() => sandbox.done(), 150_000, 'the demo to finish');
}, 170_000);

afterAll(async () => {
  await sandbox?.stop();
});

const pullFor = (issue: number) =>
  [...sandbox.repo.issues.values()].find((i) => i.pull && i.body.includes(`Closes #${issue}`))!;
const markers = (pr: number) =>
  sandbox.repo.comments
    .filter((c) => c.issueNumber === pr)
    .map((c) => ({ author: c.user.login, marker: decodeMarker(c.body) }))
    .filter((m) => m.marker.kind === 'marker');

describe('the life of an issue (actions launcher)', () => {
  it('GH03 label → AFK run → claim PR → lander → verdict marker → merge at the validated head → issue closed', async () => {
    const all = (await sandbox.runs()).filter((r) => r.issueNumber === 1 || r.prNumber === pullFor(1).number);
    const runs = foldRevalidations(all);
    expect(runs.map((r) => [r.kind, r.outcome])).toEqual([
      ['afk_auto', 'success'],
      ['lander', 'success'],
    ]);
    const pr = pullFor(1);
    expect(pr.body).toContain(`Yoke-Run: ${runs[0]!.id}`);
    expect(pr.labels).toContain('yoke:claim');
    // LD01, LD03, LD05: each lander judged the head on a tree of its own (a base, with PRs stacked ahead of it;
    // another PR that landed first moved it), and the one that counted judged exactly the tree the merge landed on.
    const landers = all.filter((r) => r.kind === 'lander');
    const tree = (l: (typeof landers)[number]) => [l.baseSha, ...l.stack.map((m) => m.head)].join('+');
    expect(new Set(landers.map(tree)).size).toBe(landers.length);
    expect(landers.every((l) => l.verdict === 'accept' && /^[0-9a-f]{40}$/.test(l.baseSha ?? ''))).toBe(true);
    const merges = await sandbox.runtime.store.merges.listForRepo(DEMO_REPO);
    expect(normalize({ root: runs[1]!.baseSha!, stack: runs[1]!.stack }, merges)).toEqual({
      root: revParse(sandbox.repo.gitDir, `${pr.pull!.mergeCommitSha}^1`),
      stack: [],
    });
    const m = markers(pr.number).at(-1);
    expect(m?.author).toBe('yoke-sandbox[bot]');
    expect(m?.marker).toEqual({
      kind: 'marker',
      payload: { run: runs[1]!.id, sha: runs[1]!.headSha, verdict: 'accept' },
    });
    // The merge named the head the lander validated, so a push in between would have made GitHub refuse it.
    expect(pr.pull).toMatchObject({ merged: true, headSha: runs[1]!.headSha, mergeNamedSha: runs[1]!.headSha });
    const issue = sandbox.repo.issues.get(1)!;
    expect([issue.state, issue.stateReason]).toEqual(['closed', 'completed']);
    // Merged is not delivered: the issue owes its delivery until close-out.
    expect(issue.labels).toContain('yoke:delivery-owed');
    // The workflow run the launcher dispatched is on the forge's record, found by its run-name.
    const wf = sandbox.forge.runner.runs.find((w) => w.inputs.run_id === runs[0]!.id)!;
    expect(wf).toMatchObject({
      status: 'completed',
      conclusion: 'success',
      displayTitle: `yoke afk_auto issue#1 (${runs[0]!.id})`,
    });
  });

  it('SP19 a reject, then a fix run, then a second lander on the new head, then the merge', async () => {
    const pr = pullFor(3);
    const runs = foldRevalidations(
      (await sandbox.runs()).filter((r) => r.issueNumber === 3 || r.prNumber === pr.number),
    );
    expect(runs.map((r) => [r.kind, r.outcome, r.verdict])).toEqual([
      ['afk_auto', 'success', null],
      ['lander', 'success', 'reject'],
      ['fix', 'success', null],
      ['lander', 'success', 'accept'],
    ]);
    const [, reject, fix, accept] = runs;
    expect(fix!.headSha).toBe(reject!.headSha);
    expect(accept!.headSha).not.toBe(reject!.headSha);
    expect(
      // One per verdict: a head validated again on a newer base (LD02) says the same again.
      [
        ...new Set(
          markers(pr.number).map(
            (m) => m.marker.kind === 'marker' && `${m.marker.payload.verdict} ${m.marker.payload.sha}`,
          ),
        ),
      ].map((m) => (m as string).split(' ')),
    ).toEqual([
      ['reject', reject!.headSha],
      ['accept', accept!.headSha],
    ]);
    expect(pr.pull).toMatchObject({ merged: true, headSha: accept!.headSha });
    expect((await sandbox.runtime.store.repos.get(DEMO_REPO))!.consecutiveFailures).toBe(0);
    // Each head shows its yoke/lander check in the forge: failure on the rejected head, success on the merged one,
    // each linking to the lander's workflow run.
    const checkOf = (sha: string) =>
      sandbox.repo.checkRuns.filter((c) => c.headSha === sha && c.name === 'yoke/lander');
    const wfOf = (runId: string) => sandbox.forge.runner.runs.find((w) => w.inputs.run_id === runId)!;
    expect(checkOf(reject!.headSha!).map((c) => [c.status, c.conclusion, c.externalId, c.detailsUrl])).toEqual([
      ['completed', 'failure', reject!.id, `${sandbox.forge.url}/${DEMO_REPO}/actions/runs/${wfOf(reject!.id).id}`],
    ]);
    expect(
      checkOf(accept!.headSha!)
        .slice(-1)
        .map((c) => [c.status, c.conclusion, c.externalId, c.title]),
    ).toEqual([
      [
        'completed',
        'success',
        accept!.id,
        `Accepted at ${accept!.headSha!.slice(0, 7)} on ${accept!.baseSha!.slice(0, 7)}`,
      ],
    ]);
  });

  it('TR33 the maintainer’s change request on #4’s PR becomes one fix run with both inline comments; yoke waits for their approval, then merges the validated head', async () => {
    const pr = pullFor(4);
    const runs = foldRevalidations(
      (await sandbox.runs()).filter((r) => r.issueNumber === 4 || r.prNumber === pr.number),
    );
    expect(runs.map((r) => [r.kind, r.outcome, r.verdict, r.kind === 'fix' ? r.why : null])).toEqual([
      ['afk_auto', 'success', null, null],
      ['lander', 'success', 'accept', null],
      ['fix', 'success', null, 'a review by @maintainer'],
      ['lander', 'success', 'accept', null],
    ]);
    const [, first, fix, accept] = runs;
    expect(sandbox.maintainer!.refused).toEqual([]);
    expect(sandbox.maintainer!.did).toEqual([
      `requested changes on #${pr.number} at ${first!.headSha!.slice(0, 7)}`,
      `approved #${pr.number} at ${accept!.headSha!.slice(0, 7)}`,
    ]);
    // The fix ran at the head the maintainer reviewed, told their words and both inline comments.
    expect(fix!.headSha).toBe(first!.headSha);
    const wf = sandbox.forge.runner.runs.find((w) => w.inputs.run_id === fix!.id)!;
    expect(readBrief(wf.inputs.rejection ?? null)).toEqual({
      rejection: null,
      asks: [
        {
          source: 'review',
          author: 'maintainer',
          writtenOn: null,
          text: DEMO_TASKS[3]!.review!.body,
          comments: DEMO_TASKS[3]!.review!.comments.map((c) => ({
            path: c.path,
            line: c.line,
            diffHunk: expect.stringContaining('@@') as unknown as string,
            body: c.body,
          })),
        },
      ],
      // TR24: and the issue it works from, as approved.
      approved: { issue: 4, digest: expect.stringMatching(/^[0-9a-f]{32}$/) as unknown as string },
    });
    // Each accept while the change request stood says whose approval the merge waits for.
    const accepts = sandbox.repo.comments.filter(
      (c) => c.issueNumber === pr.number && c.body.includes('"verdict":"accept"'),
    );
    // (Accepts of one head on a newer base, LD02, say the same while it stands.)
    const noted = (sha: string) =>
      accepts.filter((c) => c.body.includes(sha)).map((c) => c.body.endsWith(`\n\n${reviewHoldNote(['maintainer'])}`));
    expect(new Set(noted(first!.headSha!))).toEqual(new Set([true]));
    expect(noted(accept!.headSha!)[0]).toBe(true);
    expect(pr.pull).toMatchObject({ merged: true, headSha: accept!.headSha, mergeNamedSha: accept!.headSha });
    // Under the full cap, the review-driven fix went before new work that waited since the start.
    const issue5 = (await sandbox.runs()).find((r) => r.issueNumber === 5 && r.kind === 'afk_auto')!;
    expect(fix!.launchedAt).toBeLessThan(issue5.launchedAt);
  });

  it('LD02 LD03 LD05 two PRs that each add a migration numbered 002: one lands; the other is rejected on the base the first moved, its fix renumbers it, and it lands once accepted there; main never holds both', async () => {
    const all = await sandbox.runs();
    const of = (issue: number) => all.filter((r) => r.issueNumber === issue || r.prNumber === pullFor(issue).number);
    const fixed = [2, 5].filter((n) => of(n).some((r) => r.kind === 'fix'));
    expect(fixed).toHaveLength(1);
    const [second] = fixed as [number];
    const first = second === 2 ? 5 : 2;
    const landed = pullFor(first).pull!.mergeCommitSha!;
    // The reject that led to the fix judged a tree that already held the first PR: a base its merge made, or the
    // base with the first PR's head stacked ahead of it (LD05); and it said why.
    const runs = of(second);
    const reject = runs.filter((r) => r.verdict === 'reject').at(-1)!;
    const stackedOnFirst = reject.stack.some((m) => m.pr === pullFor(first).number);
    if (!stackedOnFirst)
      expect(git(sandbox.repo.gitDir, ['merge-base', '--is-ancestor', landed, reject.baseSha!])).toBe('');
    expect(reject.summary).toContain('two migrations share a number');
    const fix = runs.find((r) => r.kind === 'fix')!;
    expect(fix.why).toBe('a lander rejection');
    // Its accept judged the head the fix pushed, on the base the merge then landed on.
    const accept = runs.filter((r) => r.verdict === 'accept').at(-1)!;
    expect(accept.launchedAt).toBeGreaterThan(fix.launchedAt);
    // LD05: its base, with what it was stacked on folded into the commits yoke's merges of them made.
    const merges = await sandbox.runtime.store.merges.listForRepo(DEMO_REPO);
    expect(normalize({ root: accept.baseSha!, stack: accept.stack }, merges)).toEqual({
      root: revParse(sandbox.repo.gitDir, `${pullFor(second).pull!.mergeCommitSha}^1`),
      stack: [],
    });
    // No commit of main ever held two migrations numbered 002.
    for (const c of git(sandbox.repo.gitDir, ['rev-list', 'refs/heads/main']).split('\n')) {
      const files = git(sandbox.repo.gitDir, ['ls-tree', '--name-only', c, 'migrations/']).split('\n');
      expect(files.filter((f) => f.startsWith('migrations/002-')).length, c).toBeLessThanOrEqual(1);
    }
    expect(git(sandbox.repo.gitDir, ['ls-tree', '--name-only', 'refs/heads/main', 'migrations/']).split('\n')).toEqual(
      expect.arrayContaining([`migrations/003-${DEMO_TASKS[second - 1]!.name}.sql`]),
    );
    // The end table says so: the reject, on its base, then the accept on another.
    const row = (await sandbox.summary()).find((r) => r.number === second)!;
    const on = (r: typeof reject) => `${r.baseSha!.slice(0, 7)}${r.stack.map((m) => `+#${m.pr}`).join('')}`;
    expect(row.verdicts).toContain(`reject@${reject.headSha!.slice(0, 7)}/${on(reject)}`);
    expect(row.verdicts.at(-1)).toBe(`accept@${accept.headSha!.slice(0, 7)}/${on(accept)}`);
  });

  it('SP05 a cap of 2 is never exceeded over the whole demo: by the forge’s workflow runs and by the runs store', async () => {
    const spans = sandbox.forge.runner.runs.map(
      (w) => [w.startedAt ?? w.createdAt, w.completedAt ?? Date.now()] as const,
    );
    expect(spans.length).toBe((await sandbox.runs()).length);
    const maxOverlap = (xs: (readonly [number, number])[]) =>
      Math.max(...xs.map(([start]) => xs.filter(([s, e]) => s <= start && start < e).length));
    expect(maxOverlap(spans)).toBeLessThanOrEqual(2);
    expect(
      maxOverlap((await sandbox.runs()).map((r) => [r.launchedAt, r.endedAt ?? Date.now()] as const)),
    ).toBeLessThanOrEqual(2);
    expect((await sandbox.runs()).every((r) => r.liveAtLaunch <= 2 && r.capAtLaunch === 2)).toBe(true);
    expect((await sandbox.summary()).map((r) => r.state)).toEqual(['merged', 'merged', 'merged', 'merged', 'merged']);
  });
});

describe('webhooks from the forge', () => {
  it('GH06 signed deliveries are accepted; a delivery with a bad signature is refused and changes nothing', async () => {
    const kinds = new Set(sandbox.forge.deliveries.map((d) => `${d.event}.${d.action}`));
    // A deploy stage that has pinned its branch by now (stage-deployment.ts) sent a push too: whether it has is timing.
    kinds.delete('push.');
    expect([...kinds].sort()).toEqual([
      'issue_comment.created',
      'issues.labeled',
      'pull_request.labeled',
      'pull_request.opened',
      'pull_request_review.submitted',
      'workflow_run.completed',
    ]);
    // Deliveries are fire and forget: one sent a moment ago may still be on its way.
    await sandbox.waitUntil(
      () => sandbox.forge.deliveries.every((d) => d.status !== 0),
      10_000,
      'the deliveries in flight to be answered',
    );
    expect(sandbox.forge.deliveries.filter((d) => d.status !== 200)).toEqual([]);
    const before = await sandbox.runtime.store.commands.count();
    const payload = JSON.stringify({
      action: 'created',
      issue: { number: 1 },
      comment: {
        id: 424242,
        body: '/yoke reset',
        user: { login: 'mallory', type: 'User' },
        created_at: new Date().toISOString(),
      },
      repository: { owner: { login: 'acme' }, name: 'demo', full_name: 'acme/demo' },
      installation: { id: 1 },
    });
    const res = await fetch(`${sandbox.yokeUrl}/api/github/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'issue_comment',
        'x-github-delivery': 'forged-1',
        'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
      },
      body: payload,
    });
    expect(res.status).toBe(400);
    expect(await sandbox.runtime.store.commands.count()).toBe(before);
    expect(sandbox.logged('error', 'signature does not match event payload and secret').length).toBeGreaterThan(0);
  });
});

describe('what yoke logged here', () => {
  it('holds no warning or error that no test here claimed', () => {
    expect(unclaimedWarnings(sandbox, CLAIMED_WARNINGS)).toEqual([]);
  });
});
