import { describe, expect, it } from 'vitest';
import { decodeMarker } from '../../src/forge/marker.js';
import {
  enqueueRefusedNotice,
  fastForwardRefusedNotice,
  landCommitForgedNotice,
} from '../../src/fleet/notices/messages.js';
import { landingState, stacksInFlight } from '../../src/fleet/spawn/landers.js';
import { renderRepoPage } from '../../src/http/pages/dashboard-parts.js';
import type { Run } from '../../src/store/fleet/runs.js';
import { AUTOLAND, addClaimPull, makeHarness, recordingLog, report } from '../helpers/fleet.js';
import { requestLand } from '../../src/fleet/runs/controls.js';

// LD01, LD02, LD03 through the engine: a lander judges the head merged onto the base its branch is at;
// an accept counts only on that base; a merge moves the base, and the other accepted PR is judged again.

const REPO = 'acme/api';
const landers = (h: ReturnType<typeof makeHarness>) => h.launcher.starts.filter((s) => s.kind === 'lander');

describe('landing on the base that was validated', () => {
  it('LD01 LD02 LD03 with stacking off, two PRs each judged alone: the first merges, the second is validated again on the moved base, and merges once accepted there', async () => {
    const h = makeHarness({ policy: { globalCap: 4 } });
    const repo = h.forge.addRepo(REPO, { ...AUTOLAND, autoland: { enabled: true, stack_depth: 1 } });
    await addClaimPull(h, REPO, { number: 7, issue: 1, headSha: 'a'.repeat(40) });
    await addClaimPull(h, REPO, { number: 8, issue: 2, headSha: 'b'.repeat(40) });
    const pass = await h.engine.schedulerTick();
    // LD01: the lander is dispatched with the base its PR would land on, and the run records it; the other waits.
    expect(landers(h).map((s) => [s.prNumber, s.baseSha, s.stack])).toEqual([[7, 'c0', []]]);
    expect((await h.store.runs.get(landers(h)[0]!.runId))!.baseSha).toBe('c0');
    expect(pass.waiting.map((w) => [w.subject, w.reason.code])).toEqual([['pr#8', 'stack_full']]);
    await report(h, landers(h)[0]!.runId, 'success', 'accept');
    await h.engine.reaperTick();
    expect(h.forge.merges.map((m) => m.number)).toEqual([7]);
    expect(repo.history.at(-1)).toBe('c1');
    // LD02: the next pass validates #8 on c1, where #7 landed.
    await h.engine.schedulerTick();
    const again = landers(h).at(-1)!;
    expect([again.prNumber, again.headSha, again.baseSha]).toEqual([8, 'b'.repeat(40), 'c1']);
    await report(h, again.runId, 'success', 'accept');
    await h.engine.reaperTick();
    expect(h.forge.merges.map((m) => m.number)).toEqual([7, 8]);
    // The verdict comment says which base it judged.
    const said = h.forge.comments.filter((c) => c.number === 8 && decodeMarker(c.body).kind === 'marker').at(-1)!;
    expect(said.body.split('\n')[1]).toBe(
      `**yoke lander accepted** this PR at \`bbbbbbb\` merged onto \`c1\`, the base it would land on (run \`${again.runId}\`).`,
    );
  });

  it('LD02 LD03 an accept on a base that moved by hand is not merged: the PR is validated again on the new base', async () => {
    const h = makeHarness({ policy: { globalCap: 4 } });
    const repo = h.forge.addRepo(REPO, AUTOLAND);
    await addClaimPull(h, REPO, { number: 7, issue: 1, headSha: 'a'.repeat(40) });
    await h.engine.schedulerTick();
    await report(h, landers(h)[0]!.runId, 'success', 'accept');
    h.forge.commit(REPO, { 'README.md': 'someone pushed' });
    await h.engine.reaperTick();
    expect(h.forge.merges).toEqual([]);
    const again = landers(h).at(-1)!;
    expect([again.baseSha, again.stack]).toEqual(['c1', []]);
    const check = h.forge.checkRuns.find((c) => c.headSha === 'a'.repeat(40))!.current;
    expect([check.status, check.title]).toEqual(['in_progress', 'Validating aaaaaaa on c1']);
    expect(check.summary).toContain(
      `The base moved since lander run \`${landers(h)[0]!.runId}\` accepted it on c0: a verdict counts only for the base it judged.`,
    );
    await report(h, again.runId, 'success', 'accept');
    await h.engine.reaperTick();
    expect(h.forge.merges.map((m) => m.number)).toEqual([7]);
    expect(repo.history.at(-1)).toBe('c2');
  });
  it('LD02 while GitHub will not say where the base branch is, no lander starts and nothing merges; the wait says why', async () => {
    const h = makeHarness();
    h.forge.addRepo(REPO, AUTOLAND);
    await addClaimPull(h, REPO, { number: 7, issue: 1, headSha: 'a'.repeat(40) });
    h.forge.readBranchTip = async () => null;
    const pass = await h.engine.schedulerTick();
    expect(landers(h)).toEqual([]);
    expect(pass.waiting.map((w) => [w.subject, w.reason.code, w.reason.message])).toEqual([
      [
        'pr#7',
        'base_unread',
        '#7 of acme/api waits for a lander: GitHub did not say where its base branch main is, and a verdict counts only for the base it judged.',
      ],
    ]);
  });
});

describe('landing work goes through the one pass (LD07)', () => {
  it('LD07 a lander launches only from the spawn pass, at its stage ahead of new work, under the cap: a /yoke land is a request the pass serves when a slot frees, never a launch of its own', async () => {
    const h = makeHarness({ policy: { globalCap: 1 } });
    h.forge.addRepo(REPO, AUTOLAND);
    h.forge.addIssue(REPO, 3);
    await addClaimPull(h, REPO, { number: 7, issue: 1, headSha: 'a'.repeat(40) });
    await addClaimPull(h, REPO, { number: 8, issue: 2, headSha: 'b'.repeat(40) });
    const pass = await h.engine.schedulerTick();
    // One slot: the lander stage takes it before new work; the rest wait at the cap.
    expect(h.launcher.starts.map((s) => `${s.kind}:${s.subject}`)).toEqual(['lander:pr#7']);
    expect(pass.waiting.map((w) => [w.subject, w.reason.code]).sort()).toEqual([
      ['issue#3', 'at_cap'],
      ['pr#8', 'at_cap'],
    ]);
    // A writer asks to land #8 now: a request, launched by no one but the pass.
    expect((await requestLand(h.fleet, REPO, 8, 'maint')).ok).toBe(true);
    expect(h.launcher.starts).toHaveLength(1);
    await h.engine.schedulerTick();
    expect(h.launcher.starts).toHaveLength(1);
    // The slot frees: the next pass gives it to the lander, still ahead of new work.
    await report(h, landers(h)[0]!.runId, 'success', 'reject');
    await h.engine.reaperTick();
    expect(h.launcher.starts.map((s) => `${s.kind}:${s.subject}`)).toEqual(['lander:pr#7', 'lander:pr#8']);
    expect(await h.store.runs.countLive()).toBe(1);
  });
});

describe('stacks: a fleet validated at once (LD05)', () => {
  const A = 'a'.repeat(40);
  const B = 'b'.repeat(40);
  const C = 'c'.repeat(40);
  async function threeStacked(cap = 4) {
    const h = makeHarness({ policy: { globalCap: cap } });
    const repo = h.forge.addRepo(REPO, AUTOLAND);
    await addClaimPull(h, REPO, { number: 7, issue: 1, headSha: A });
    await addClaimPull(h, REPO, { number: 8, issue: 2, headSha: B });
    await addClaimPull(h, REPO, { number: 9, issue: 3, headSha: C });
    await h.engine.schedulerTick();
    const [l7, l8, l9] = landers(h);
    return { h, repo, l7: l7!, l8: l8!, l9: l9! };
  }

  it('LD05 each PR is validated on the base with the PRs ahead of it stacked on, all at once; a stack accepted whole lands whole, in order, in one pass', async () => {
    const { h, repo, l7, l8, l9 } = await threeStacked();
    expect([l7, l8, l9].map((s) => [s.prNumber, s.baseSha, s.stack])).toEqual([
      [7, 'c0', []],
      [8, 'c0', [A]],
      [9, 'c0', [A, B]],
    ]);
    expect((await h.store.runs.get(l9.runId))!.stack).toEqual([
      { pr: 7, head: A },
      { pr: 8, head: B },
    ]);
    for (const l of [l7, l8, l9]) await report(h, l.runId, 'success', 'accept');
    await h.engine.reaperTick();
    expect(h.forge.merges.map((m) => [m.number, m.sha])).toEqual([
      [7, A],
      [8, B],
      [9, C],
    ]);
    expect(repo.history).toEqual(['c0', 'c1', 'c2', 'c3']);
    expect(landers(h)).toHaveLength(3);
    // The check and the verdict comment say what it was validated with.
    const check = h.forge.checkRuns.find((c) => c.headSha === C)!.current;
    expect(check.title).toBe('Accepted at ccccccc on c0 with #7, #8 ahead of it');
    const said = h.forge.comments.filter((c) => c.number === 9 && decodeMarker(c.body).kind === 'marker').at(-1)!;
    expect(said.body.split('\n')[1]).toBe(
      `**yoke lander accepted** this PR at \`ccccccc\` merged onto \`c0\` after #7, #8 (the claim PRs ahead of it), the base it would land on (run \`${l9.runId}\`).`,
    );
  });

  it('LD05 the repository page shows what is validated together now, bottom first, on which base', async () => {
    const { h } = await threeStacked();
    expect(stacksInFlight(await h.store.runs.listForRepo(REPO))).toEqual([{ base: 'c0', prs: [7, 8, 9] }]);
    const page = renderRepoPage(
      {
        repo: REPO,
        settings: null,
        readAt: null,
        dashboardIssue: null,
        claims: [],
        stacks: [{ base: 'c0', prs: [7, 8, 9] }],
      },
      'https://github.com',
      null,
    );
    expect(page).toContain(
      '<h3>Validated together now</h3><ul class="stacks"><li><a href="https://github.com/acme/api/pull/7">#7</a> + <a href="https://github.com/acme/api/pull/8">#8</a> + <a href="https://github.com/acme/api/pull/9">#9</a> on <code>c0</code></li></ul>',
    );
  });

  it('LD05 a stack whose lower part landed first still counts: the PR on top lands on the commit those merges made, not validated again', async () => {
    const { h, repo, l7, l8, l9 } = await threeStacked();
    await report(h, l7.runId, 'success', 'accept');
    await h.engine.reaperTick();
    expect(h.forge.merges.map((m) => m.number)).toEqual([7]);
    await report(h, l8.runId, 'success', 'accept');
    await h.engine.reaperTick();
    await report(h, l9.runId, 'success', 'accept');
    await h.engine.reaperTick();
    expect(h.forge.merges.map((m) => m.number)).toEqual([7, 8, 9]);
    expect(repo.history.at(-1)).toBe('c3');
    expect(landers(h)).toHaveLength(3);
  });

  it('LD05 a red stack splits: the lowest PR rejected on a tree a lander accepted is blamed and fixed; those above it are validated again without it, and land', async () => {
    const { h, l7, l8, l9 } = await threeStacked();
    await report(h, l7.runId, 'success', 'accept');
    await report(h, l8.runId, 'success', 'reject'); // #8 breaks the tree #7 leaves
    await report(h, l9.runId, 'success', 'reject'); // and so every stack with #8 in it
    await h.engine.reaperTick();
    // #7 landed; #8 is to blame (its stack below was accepted): a fix. #9 is split out: judged again on #7
    // alone, which is the tree c1 that #7's merge made.
    expect(h.forge.merges.map((m) => m.number)).toEqual([7]);
    expect(h.launcher.starts.filter((s) => s.kind === 'fix').map((s) => s.prNumber)).toEqual([8]);
    const again = landers(h).at(-1)!;
    expect([again.prNumber, again.baseSha, again.stack]).toEqual([9, 'c0', [A]]);
    expect(h.forge.repo(REPO).history.at(-1)).toBe('c1');
    await report(h, again.runId, 'success', 'accept');
    await h.engine.reaperTick();
    expect(h.forge.merges.map((m) => m.number)).toEqual([7, 9]);
  });

  it('LD05 a reject of a stack whose lower part failed too blames nobody above: no fix, and no lander again on that same tree', async () => {
    const { h, l7, l8, l9 } = await threeStacked();
    await report(h, l7.runId, 'success', 'reject');
    await report(h, l8.runId, 'success', 'reject');
    await report(h, l9.runId, 'success', 'reject');
    await h.engine.reaperTick();
    // Only #7 is to blame; #8 is judged on c0 without it, and #9 on top of #8.
    expect(h.launcher.starts.filter((s) => s.kind === 'fix').map((s) => s.prNumber)).toEqual([7]);
    expect(
      landers(h)
        .slice(3)
        .map((s) => [s.prNumber, s.baseSha, s.stack]),
    ).toEqual([
      [8, 'c0', []],
      [9, 'c0', [B]],
    ]);
  });

  it('LD05 stacks go no deeper than autoland.stack_depth; the PR past it waits and says why', async () => {
    const h = makeHarness({ policy: { globalCap: 4 } });
    h.forge.addRepo(REPO, { ...AUTOLAND, autoland: { enabled: true, stack_depth: 2 } });
    for (const n of [7, 8, 9]) await addClaimPull(h, REPO, { number: n, issue: n, headSha: String(n).repeat(40) });
    const pass = await h.engine.schedulerTick();
    expect(landers(h).map((s) => s.prNumber)).toEqual([7, 8]);
    expect(pass.waiting.map((w) => [w.subject, w.reason.message])).toEqual([
      [
        'pr#9',
        '#9 of acme/api waits for a lander: #7, #8 ahead of it are being validated stacked on the base, 2 deep, and it is validated on top of what of them lands.',
      ],
    ]);
  });

  it('LD05 a PR with a change request, or one that changes a protected path, is validated alone and stacks under nobody', async () => {
    const h = makeHarness({ policy: { globalCap: 4 } });
    h.forge.addRepo(REPO, AUTOLAND);
    (await addClaimPull(h, REPO, { number: 7, issue: 1, headSha: A })).pull.files = ['.github/workflows/ci.yml'];
    await addClaimPull(h, REPO, { number: 8, issue: 2, headSha: B });
    (await addClaimPull(h, REPO, { number: 9, issue: 3, headSha: C })).pull.reviews.push({
      id: 1,
      author: 'alice',
      state: 'CHANGES_REQUESTED',
      commitId: C,
      body: 'not yet',
    });
    await addClaimPull(h, REPO, { number: 10, issue: 4, headSha: 'd'.repeat(40) });
    await h.engine.schedulerTick();
    expect(landers(h).map((s) => [s.prNumber, s.stack])).toEqual([
      [7, []],
      [8, []],
      [9, []],
      [10, [B]],
    ]);
  });
});

describe('landing by fast-forward (LD03, autoland.fast_forward)', () => {
  const A = 'a'.repeat(40);
  const B = 'b'.repeat(40);
  const FF = { ...AUTOLAND, autoland: { enabled: true, fast_forward: true } };
  async function twoStacked() {
    const h = makeHarness({ policy: { globalCap: 4 } });
    const repo = h.forge.addRepo(REPO, FF);
    await addClaimPull(h, REPO, { number: 7, issue: 1, headSha: A });
    await addClaimPull(h, REPO, { number: 8, issue: 2, headSha: B });
    await h.engine.schedulerTick();
    const [l7, l8] = landers(h);
    return { h, repo, l7: l7!, l8: l8! };
  }

  it('LD03 each lander is given the very commit it judges, built on GitHub: the stack above grows from the commit below; an accept moves the branch to it, and GitHub marks the PR merged there', async () => {
    const { h, repo, l7, l8 } = await twoStacked();
    const built = [...h.forge.landCommits];
    expect(built.map(([, c]) => [c.parent, c.head])).toEqual([
      ['c0', A],
      [built[0]![0], B],
    ]);
    expect([l7.landSha, l8.landSha]).toEqual([built[0]![0], built[1]![0]]);
    expect((await h.store.runs.get(l8.runId))!.landSha).toBe(built[1]![0]);
    for (const l of [l7, l8]) await report(h, l.runId, 'success', 'accept');
    await h.engine.reaperTick();
    // No merge through the PR: the branch moved, twice, each a fast-forward to a commit a lander judged.
    expect(h.forge.merges).toEqual([]);
    expect(h.forge.branchMoves.map((m) => m.sha)).toEqual([l7.landSha, l8.landSha]);
    expect(repo.history).toEqual(['c0', l7.landSha, l8.landSha]);
    expect(repo.merged.map((p) => [p.number, p.mergeCommitSha])).toEqual([
      [7, l7.landSha],
      [8, l8.landSha],
    ]);
    expect((await h.store.merges.listForRepo(REPO)).map((m) => [m.prNumber, m.baseSha, m.mergeSha])).toEqual([
      [7, 'c0', l7.landSha],
      [8, l7.landSha, l8.landSha],
    ]);
    expect(h.forge.deletedBranches.map((b) => b.branch)).toEqual(['yoke/land/7', 'yoke/land/8']);
    // Each built commit carries its lander's check, written before the branch moved to it.
    for (const l of [l7, l8])
      expect(h.forge.checkRuns.find((c) => c.headSha === l.landSha)?.current).toMatchObject({
        name: 'yoke/lander',
        status: 'completed',
        conclusion: 'success',
      });
  });

  it('LD03 a push between the read and the ref update: GitHub refuses the update, as it is not a fast-forward, and nothing lands; the next pass validates on the new base', async () => {
    const { h, repo, l7 } = await twoStacked();
    await report(h, l7.runId, 'success', 'accept');
    const read = h.forge.readBranchTip.bind(h.forge);
    let reads = 0;
    h.forge.readBranchTip = async (ref, branch) => {
      const tip = await read(ref, branch);
      if (++reads === 2) h.forge.commit(REPO, { 'README.md': 'pushed in the window' }); // just after yoke's last read
      return tip;
    };
    await h.engine.reaperTick();
    expect(repo.history).toEqual(['c0', 'c1']);
    expect(repo.merged).toEqual([]);
    expect(h.forge.comments.filter((c) => c.body.includes('did not land'))).toEqual([]);
  });

  it("LD03 where the branch's rules refuse yoke's app, the PR says what to allow, once", async () => {
    const { h, repo, l7 } = await twoStacked();
    repo.branchRule = {
      status: 422,
      message: 'Repository rule violations found for refs/heads/main. Changes must be made through a pull request.',
    };
    await report(h, l7.runId, 'success', 'accept');
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    const said = h.forge.comments.filter((c) => c.number === 7 && c.body.startsWith('yoke did not land'));
    expect(said.map((c) => c.body)).toEqual([
      fastForwardRefusedNotice(
        7,
        l7.landSha!,
        'main',
        'Repository rule violations found for refs/heads/main. Changes must be made through a pull request.',
      ),
    ]);
    expect(said[0]!.body).toBe(
      `yoke did not land this PR. GitHub refused to move main to ${l7.landSha!.slice(0, 7)}, the commit the lander validated for #7: Repository rule violations found for refs/heads/main. Changes must be made through a pull request.\n\n**To recover:** Let yoke's app bypass the rules that protect main (the ruleset's bypass list, docs/landing.md), then comment \`/yoke land\` on #7; or set autoland.fast_forward: false in .github/yoke.yml to merge through the pull request instead.`,
    );
  });

  it("LD03 a writer who pushes a commit onto yoke/land/7 right after yoke pins it gets nothing judged with it: yoke reads back what GitHub built, rebuilds from the pin, and the lander judges yoke's tree only", async () => {
    const h = makeHarness({ policy: { globalCap: 4 } });
    h.forge.addRepo(REPO, FF);
    const pin = h.forge.pinBranch.bind(h.forge);
    const slipped: string[] = [];
    h.forge.pinBranch = async (ref, branch, sha) => {
      await pin(ref, branch, sha);
      // The window between the pin and the merge: a writer's commit, which the merges API builds on as the branch stands.
      if (slipped.length === 0) slipped.push(h.forge.pushToBranch(REPO, branch, { '.github/workflows/x.yml': 'evil' }));
    };
    await addClaimPull(h, REPO, { number: 7, issue: 1, headSha: A });
    await h.engine.schedulerTick();
    const [l7] = landers(h);
    const built = [...h.forge.landCommits];
    // The first build merged A onto the writer's commit; it was read back, refused, and built again from c0.
    expect(built.map(([, c]) => [c.parent, c.head])).toEqual([
      [slipped[0], A],
      ['c0', A],
    ]);
    expect(l7!.landSha).toBe(built[1]![0]);
  });

  it('LD03 a land branch moved by a writer on every build is never adopted: the lander gets no commit and merges the heads itself', async () => {
    const lines: string[] = [];
    const h = makeHarness({ policy: { globalCap: 4 }, log: recordingLog(lines) });
    h.forge.addRepo(REPO, FF);
    const pin = h.forge.pinBranch.bind(h.forge);
    h.forge.pinBranch = async (ref, branch, sha) => {
      await pin(ref, branch, sha);
      h.forge.pushToBranch(REPO, branch, { 'x.txt': 'slipped' });
    };
    await addClaimPull(h, REPO, { number: 7, issue: 1, headSha: A });
    await h.engine.schedulerTick();
    expect(landers(h).map((l) => [l.prNumber, l.landSha])).toEqual([[7, null]]);
    expect(lines.filter((l) => l.startsWith('warn'))).toEqual([
      'warn: the land branch was moved by someone else while yoke built it, twice; the lander merges the heads itself',
    ]);
  });

  it("LD03 an accepted commit that is not yoke's pinned tree (the record names a commit a writer made) never moves the base: the verdict counts for nothing, the PR says why, and a lander validates it again", async () => {
    const { h, repo, l7 } = await twoStacked();
    // A writer's commit on top of yoke's: the lander's run record points at it (as a 204 adopting a moved tip once did).
    h.forge.repo(REPO).branches['yoke/land/7'] = { head: l7.landSha!, protected: false, base: 'c0' };
    const forged = h.forge.pushToBranch(REPO, 'yoke/land/7', { 'x.txt': 'slipped' });
    await h.store.runs.setLandSha(l7.runId, forged);
    await report(h, l7.runId, 'success', 'accept');
    await h.engine.reaperTick();
    expect(h.forge.branchMoves).toEqual([]);
    expect(repo.history).toEqual(['c0']);
    expect(
      h.forge.comments.filter((c) => c.number === 7 && c.body.startsWith('yoke did not land')).map((c) => c.body),
    ).toEqual([
      landCommitForgedNotice(
        7,
        forged,
        `${forged.slice(0, 7)} is not yoke's merge of ${A.slice(0, 7)} onto the commit below it (its parents: ${l7.landSha!.slice(0, 7)})`,
      ),
    ]);
    expect((await h.store.merges.listForRepo(REPO)).map((m) => [m.prNumber, m.state])).toEqual([[7, 'refused']]);
    await h.engine.schedulerTick();
    const again = landers(h).filter((l) => l.prNumber === 7);
    expect(again).toHaveLength(2);
    expect(again[1]!.landSha).not.toBe(forged);
  });

  it('LD03 a head that does not merge onto the tree to judge gets no commit: its lander merges it itself, and rejects it naming the files', async () => {
    const h = makeHarness({ policy: { globalCap: 4 } });
    h.forge.addRepo(REPO, FF);
    h.forge.mergeConflicts = (_repo, _onto, head) => head === B;
    await addClaimPull(h, REPO, { number: 7, issue: 1, headSha: A });
    await addClaimPull(h, REPO, { number: 8, issue: 2, headSha: B });
    await h.engine.schedulerTick();
    expect(landers(h).map((l) => [l.prNumber, l.landSha !== null])).toEqual([
      [7, true],
      [8, false],
    ]);
  });
});

describe("GitHub's merge queue (LD04)", () => {
  const A = 'a'.repeat(40);
  const B = 'b'.repeat(40);
  /** Two claim PRs on a branch whose ruleset requires the merge queue, each accepted alone on c0 and queued. */
  async function queuedPair() {
    const h = makeHarness({ policy: { globalCap: 4 } });
    const repo = h.forge.addRepo(REPO, AUTOLAND);
    repo.mergeQueue = true;
    await addClaimPull(h, REPO, { number: 7, issue: 1, headSha: A });
    await addClaimPull(h, REPO, { number: 8, issue: 2, headSha: B });
    await h.engine.schedulerTick();
    // GitHub's queue does the batching: each is validated alone on the base, never stacked by yoke.
    expect(landers(h).map((s) => [s.prNumber, s.baseSha, s.stack, s.landSha])).toEqual([
      [7, 'c0', [], null],
      [8, 'c0', [], null],
    ]);
    for (const l of landers(h)) await report(h, l.runId, 'success', 'accept');
    await h.engine.reaperTick();
    return { h, repo };
  }

  /** #7 accepted on a branch that requires the merge queue, which GitHub will not add it to (a permission not granted). */
  async function acceptedUnqueued() {
    const h = makeHarness({ policy: { globalCap: 4 } });
    const repo = h.forge.addRepo(REPO, AUTOLAND);
    repo.mergeQueue = true;
    repo.enqueueRefusal = { status: 422, message: 'Resource not accessible by integration' };
    await addClaimPull(h, REPO, { number: 7, issue: 1, headSha: A });
    await h.engine.schedulerTick();
    await report(h, landers(h)[0]!.runId, 'success', 'accept');
    await h.engine.reaperTick();
    return { h, repo };
  }

  it('LD04 an accepted PR is added to the merge queue at the head its lander judged, never merged around it; each merge group GitHub builds gets a lander on its commit, and GitHub lands what passed', async () => {
    const { h, repo } = await queuedPair();
    expect(h.forge.enqueued.map((e) => [e.number, e.headSha])).toEqual([
      [7, A],
      [8, B],
    ]);
    expect(h.forge.merges).toEqual([]);
    expect(h.forge.branchMoves).toEqual([]);
    // The head's check said success before the PR was queued, as GitHub insists.
    expect(h.forge.checkRuns.find((c) => c.headSha === A)!.current.conclusion).toBe('success');
    // Queued, no group yet: nothing launches, and nothing is queued twice.
    await h.engine.schedulerTick();
    const queued = (await h.store.repos.lastRead(REPO))!.openClaims[0]!;
    expect(
      landingState({ runs: await h.store.runs.listForRepo(REPO), merges: [] }, queued, 'c0', queued.mergeQueue),
    ).toBe("in GitHub's merge queue: waits for GitHub to build its merge group");
    expect(landers(h)).toHaveLength(2);
    expect(h.forge.enqueued).toHaveLength(2);
    const [g7, g8] = h.forge.buildMergeGroups(REPO);
    await h.engine.schedulerTick();
    const groups = landers(h).slice(2);
    // #8's group was built on #7's: its lander judges the base with #7 ahead of it, at the group's very commit.
    expect(groups.map((s) => [s.prNumber, s.headSha, s.baseSha, s.stack, s.landSha])).toEqual([
      [7, A, 'c0', [], g7!.sha],
      [8, B, 'c0', ['a'.repeat(40)], g8!.sha],
    ]);
    // The repository page says where each stands in the queue, from what the pass read of it.
    const read = (await h.store.repos.lastRead(REPO))!.openClaims;
    expect(read.map((c) => c.mergeQueue)).toEqual([
      { queued: true, group: g7!.sha },
      { queued: true, group: g8!.sha },
    ]);
    const stands = async () => {
      const record = { runs: await h.store.runs.listForRepo(REPO), merges: [] };
      return read.map((c) => landingState(record, { number: c.number, headSha: c.headSha }, c.baseSha, c.mergeQueue));
    };
    expect(await stands()).toEqual([
      `its merge group ${g7!.sha.slice(0, 7)} in GitHub's merge queue is being validated`,
      `its merge group ${g8!.sha.slice(0, 7)} after #7 in GitHub's merge queue is being validated`,
    ]);
    for (const l of groups) await report(h, l.runId, 'success', 'accept');
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    expect((await stands())[1]).toBe(
      `its merge group ${g8!.sha.slice(0, 7)} after #7 in GitHub's merge queue is accepted: GitHub merges it`,
    );
    // yoke/lander says success on each group's commit, which is what GitHub's queue waits for.
    for (const g of [g7!, g8!]) {
      const check = h.forge.checkRuns.find((c) => c.headSha === g.sha)!.current;
      expect([check.name, check.conclusion]).toEqual(['yoke/lander', 'success']);
    }
    expect(h.forge.checkRuns.find((c) => c.headSha === g8!.sha)!.current.title).toBe(
      `Accepted at bbbbbbb on c0 with #7 ahead of it`,
    );
    h.forge.landMergeGroup(REPO);
    h.forge.landMergeGroup(REPO);
    expect(repo.history.slice(-2)).toEqual([g7!.sha, g8!.sha]);
    await h.engine.schedulerTick();
    expect(landers(h)).toHaveLength(4);
    expect(h.forge.merges).toEqual([]);
  });

  it("LD04 LD06 a group's reject of a head accepted before is validated once more on the group's tree; repeated, it stands and a fix is spent; the PR behind it is validated in its rebuilt group", async () => {
    const { h } = await queuedPair();
    h.forge.buildMergeGroups(REPO);
    await h.engine.schedulerTick();
    const [l7, l8] = landers(h).slice(2);
    await report(h, l7!.runId, 'success', 'reject');
    await h.engine.reaperTick();
    // #8's group lander judged on #7's rejected group: no blame for #8, whatever it says.
    await report(h, l8!.runId, 'success', 'reject');
    await h.engine.reaperTick();
    h.forge.dequeue(REPO, 7); // the queue drops #7 (its required check failed), and rebuilds #8 on the base
    const [g8] = h.forge.buildMergeGroups(REPO);
    await h.engine.schedulerTick();
    const next = landers(h).slice(4);
    expect(next.map((s) => [s.prNumber, s.baseSha, s.stack, s.landSha])).toEqual([
      [7, 'c0', [], null],
      [8, 'c0', [], g8!.sha],
    ]);
    expect(h.launcher.starts.filter((s) => s.kind === 'fix')).toEqual([]);
    await report(h, next[0]!.runId, 'success', 'reject');
    await report(h, next[1]!.runId, 'success', 'accept');
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    // The reject repeated: #7's own now, and a fix is spent on it; it is not queued again.
    expect(h.launcher.starts.filter((s) => s.kind === 'fix').map((s) => s.prNumber)).toEqual([7]);
    expect(h.forge.enqueued.map((e) => e.number)).toEqual([7, 8]);
  });

  it("LD04 LD06 a group's reject on a tree a lander accepted is its PR's own: GitHub drops it, it is not queued again on its old accept, and it is validated once more on that group's tree", async () => {
    const { h, repo } = await queuedPair();
    const [g7] = h.forge.buildMergeGroups(REPO);
    await h.engine.schedulerTick();
    const [l7, l8] = landers(h).slice(2);
    await report(h, l7!.runId, 'success', 'accept');
    await report(h, l8!.runId, 'success', 'reject');
    await h.engine.reaperTick();
    h.forge.dequeue(REPO, 8); // the queue drops #8; #7's group stays, passed
    // #8 is not queued again on its accept alone: the group's reject, on #7's accepted group, is its own now
    // (even in a pass whose lander for it does not start).
    h.launcher.failNext = 1;
    await h.engine.schedulerTick();
    expect(h.forge.enqueued.map((e) => e.number)).toEqual([7, 8]);
    await h.engine.schedulerTick();
    expect(h.forge.enqueued.map((e) => e.number)).toEqual([7, 8]);
    const again = landers(h).slice(4);
    expect(again.map((s) => [s.prNumber, s.baseSha, s.stack, s.landSha])).toEqual([[8, 'c0', [A], null]]);
    expect(h.launcher.starts.filter((s) => s.kind === 'fix')).toEqual([]);
    // The re-run accepts: the verdict flipped, and #8 is queued again on that accept; no fix was spent.
    await report(h, again[0]!.runId, 'success', 'accept');
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    expect(h.forge.enqueued.map((e) => e.number)).toEqual([7, 8, 8]);
    expect(repo.queued!.map((e) => e.pr)).toEqual([7, 8]);
    expect(h.launcher.starts.filter((s) => s.kind === 'fix')).toEqual([]);
    expect(g7!.parent).toBe('c0');
  });

  it('LD04 a queue GitHub will not show (the permission not granted) starts nothing and queues nothing, and says so', async () => {
    const h = makeHarness();
    const repo = h.forge.addRepo(REPO, AUTOLAND);
    repo.mergeQueue = true;
    h.forge.readMergeQueue = async () => {
      throw Object.assign(new Error('Resource not accessible by integration'), { status: 403 });
    };
    await addClaimPull(h, REPO, { number: 7, issue: 1, headSha: A });
    const pass = await h.engine.schedulerTick();
    expect(landers(h)).toEqual([]);
    expect(pass.waiting.map((w) => [w.subject, w.reason.code, w.reason.message])).toEqual([
      [
        'pr#7',
        'merge_queue_unread',
        "#7 of acme/api waits: a ruleset requires GitHub's merge queue on main, and GitHub would not show yoke that queue, so nothing there is validated or queued for now.",
      ],
    ]);
    expect(h.forge.enqueued).toEqual([]);
    expect(h.forge.merges).toEqual([]);
  });

  it('LD04 a refused enqueue is said on the PR once for that accept and not asked again; a newer accept is queued again', async () => {
    const { h, repo } = await acceptedUnqueued();
    await h.engine.schedulerTick();
    expect(h.forge.enqueued).toHaveLength(1);
    const told = h.forge.comments.filter((c) => c.number === 7 && c.body.startsWith('yoke did not merge'));
    expect(told.map((c) => c.body)).toEqual([
      "yoke did not merge this PR. GitHub would not add #7 to the merge queue on main, which a ruleset requires (yoke never merges around it): Resource not accessible by integration\n\n**To recover:** Grant yoke's app the Merge queues permission (read and write) if the message says it lacks it, then comment `/yoke land` on #7; or add #7 to the merge queue yourself: yoke's lander validates the merge group GitHub builds either way.",
    ]);
    expect(told[0]!.body).toBe(enqueueRefusedNotice(7, 'main', 'Resource not accessible by integration'));
    expect(h.forge.merges).toEqual([]);
    // The base moves; the new accept there is queued (GitHub takes it now).
    delete repo.enqueueRefusal;
    h.forge.commit(REPO, { 'README.md': 'someone pushed' });
    await h.engine.schedulerTick();
    await report(h, landers(h).at(-1)!.runId, 'success', 'accept');
    await h.engine.reaperTick();
    expect(h.forge.enqueued.map((e) => e.number)).toEqual([7, 7]);
    expect(repo.queued).toEqual([{ pr: 7, headSha: A }]);
    expect(h.forge.merges).toEqual([]);
  });

  it('LD04 a group ref a writer made for a claim PR the queue does not hold, pointing at any commit, gets no lander and no yoke/lander check on that commit', async () => {
    // #7 is accepted, but GitHub will not queue it (a permission not granted): it is in no queue.
    const { h, repo } = await acceptedUnqueued();
    expect(repo.queued ?? []).toEqual([]);
    // A writer pushes gh-readonly-queue/main/pr-7-<head> at a commit of their own.
    repo.groups = [{ pr: 7, headSha: A, sha: 'evil', parent: 'c0' }];
    await h.engine.schedulerTick();
    expect(landers(h).filter((l) => l.landSha === 'evil')).toEqual([]);
    expect(h.forge.checkRuns.filter((c) => c.headSha === 'evil')).toEqual([]);
  });

  it('LD04 a merge group of a PR that is not an open claim, or of a head the PR has moved past, gets no lander', async () => {
    const { h, repo } = await queuedPair();
    h.forge.buildMergeGroups(REPO);
    // A person's PR in the queue, and #8 pushed after it was queued (GitHub would drop it; its old group lingers).
    repo.groups!.push({ pr: 99, headSha: 'e'.repeat(40), sha: 'g99', parent: 'c0' });
    repo.pulls.find((p) => p.number === 8)!.headSha = 'f'.repeat(40);
    await h.engine.schedulerTick();
    expect(
      landers(h)
        .slice(2)
        .map((s) => [s.prNumber, s.headSha, s.landSha]),
    ).toEqual([
      [7, A, repo.groups![0]!.sha],
      [8, 'f'.repeat(40), null],
    ]);
  });
});

describe('a reject of a head accepted before (LD06)', () => {
  async function acceptedThenRejected() {
    const h = makeHarness();
    const repo = h.forge.addRepo(REPO, AUTOLAND);
    repo.mergeRefusal = { status: 405, message: 'Required status check "ci" is expected.' };
    await addClaimPull(h, REPO, { number: 7, issue: 1, headSha: 'a'.repeat(40) });
    await h.engine.schedulerTick();
    await report(h, landers(h)[0]!.runId, 'success', 'accept');
    await h.engine.reaperTick();
    await h.engine.schedulerTick(); // GitHub refuses the merge (a required check of its own)
    delete repo.mergeRefusal;
    h.forge.commit(REPO, { 'README.md': 'someone pushed' }); // the base moves: validated again on c1
    await h.engine.schedulerTick();
    await report(h, landers(h)[1]!.runId, 'success', 'reject');
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    return { h, repo };
  }
  const fixes = (h: ReturnType<typeof makeHarness>) => h.launcher.starts.filter((s) => s.kind === 'fix');

  it('LD06 is validated once more on the same tree before a fix is spent; a re-run that accepts lands it, says the check is flaky, and no fix ran', async () => {
    const { h } = await acceptedThenRejected();
    expect(fixes(h)).toEqual([]);
    expect(landers(h).map((s) => s.baseSha)).toEqual(['c0', 'c1', 'c1']);
    const rerun = landers(h)[2]!;
    expect((await h.store.runs.get(rerun.runId))!.why).toBe(
      'a reject of a head accepted before: validated once more before a fix (LD06)',
    );
    await report(h, rerun.runId, 'success', 'accept');
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    expect(h.forge.merges.map((m) => m.number)).toEqual([7, 7]);
    expect(fixes(h)).toEqual([]);
    const said = h.forge.comments.filter((c) => c.number === 7 && c.body.includes(rerun.runId)).at(-1)!;
    expect(said.body).toContain(
      `\n\nThis head's verdict flipped: a lander accepted it, lander run \`${landers(h)[1]!.runId}\` rejected it, and this re-run accepted it again. yoke treats the validation as flaky and spent no fix attempt on it; run \`${landers(h)[1]!.runId}\`'s output shows which test failed.`,
    );
    const check = h.forge.checkRuns.find((c) => c.headSha === 'a'.repeat(40))!.current;
    expect(check.title).toBe('Accepted at aaaaaaa on c1; flaky: a reject of this head did not repeat');
  });

  it('LD06 a reject the re-run repeats stands: the fix starts, and no third lander runs', async () => {
    const { h } = await acceptedThenRejected();
    await report(h, landers(h)[2]!.runId, 'success', 'reject');
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    expect(fixes(h).map((s) => s.prNumber)).toEqual([7]);
    expect(landers(h)).toHaveLength(3);
  });
});

describe("the repository page's landing queue", () => {
  const lander = (id: string, base: string, verdict: 'accept' | 'reject' | null, status: 'live' | 'ended' = 'ended') =>
    ({
      id,
      kind: 'lander',
      prNumber: 7,
      headSha: 'h'.repeat(40),
      baseSha: base,
      stack: [] as Run['stack'],
      verdict,
      status,
    }) as Run;
  const rec = (runs: Run[]) => ({ runs, merges: [] });
  const none = rec([]);
  const pull = { number: 7, headSha: 'h'.repeat(40) };
  const B1 = '1'.repeat(40);
  const B2 = '2'.repeat(40);
  it('LD01 LD02 LD06 says where each claim PR stands: validating on which base, accepted on this base or an older one, rejected, re-run, or waiting', () => {
    expect(landingState(none, pull, B1)).toBe('waits for a lander on 1111111');
    expect(landingState(none, pull, null)).toBe('waits for GitHub to say where its base branch is');
    expect(landingState(rec([lander('a', B1, null, 'live')]), pull, B1)).toBe('being validated on 1111111');
    expect(landingState(rec([lander('a', B1, 'accept')]), pull, B1)).toBe(
      'accepted on 1111111: lands unless a review or a protected path holds it',
    );
    expect(landingState(rec([lander('a', B1, 'accept')]), pull, B2)).toBe(
      'accepted on 1111111; the base moved to 2222222: waits for a lander there',
    );
    expect(landingState(rec([lander('a', B1, 'reject')]), pull, B2)).toBe(
      'rejected on 1111111: waits for a fix (or a new push, or /yoke land)',
    );
    expect(landingState(rec([lander('a', B1, 'accept'), lander('b', B2, 'reject')]), pull, B2)).toBe(
      'rejected after an accept: waits to be validated once more (LD06)',
    );
    expect(
      landingState(
        rec([lander('a', B1, 'accept'), lander('b', B2, 'reject'), lander('c', B2, null, 'live')]),
        pull,
        B2,
      ),
    ).toBe('being validated on 2222222 (once more: a reject of a head accepted before)');
  });
});
