import { describe, expect, it } from 'vitest';
import { decodeMarker } from '../../src/forge/marker.js';
import { landingState } from '../../src/fleet/landers.js';
import type { Run } from '../../src/store/runs.js';
import { AUTOLAND, addClaimPull, makeHarness, report } from '../helpers/fleet.js';

// LD01, LD02, LD03 through the engine: a lander judges the head merged onto the base its branch is at;
// an accept counts only on that base; a merge moves the base, and the other accepted PR is judged again.

const REPO = 'acme/api';
const landers = (h: ReturnType<typeof makeHarness>) => h.launcher.starts.filter((s) => s.kind === 'lander');

describe('landing on the base that was validated', () => {
  it('LD01 LD02 LD03 two PRs accepted on one base: the first merges, the second is not merged on the moved base but validated again on it, and merges once accepted there', async () => {
    const h = makeHarness({ policy: { globalCap: 4 } });
    const repo = h.forge.addRepo(REPO, AUTOLAND);
    await addClaimPull(h, REPO, { number: 7, issue: 1, headSha: 'a'.repeat(40) });
    await addClaimPull(h, REPO, { number: 8, issue: 2, headSha: 'b'.repeat(40) });
    await h.engine.schedulerTick();
    // LD01: each lander is dispatched with the base its PR would land on, and the run records it.
    expect(landers(h).map((s) => [s.prNumber, s.baseSha])).toEqual([
      [7, 'c0'],
      [8, 'c0'],
    ]);
    for (const s of landers(h)) expect((await h.store.runs.get(s.runId))!.baseSha).toBe('c0');
    for (const s of landers(h)) await report(h, s.runId, 'success', 'accept');
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    // LD03: the first merged; the second was judged on c0, which the first moved: GitHub was not asked to merge it.
    expect(h.forge.merges.map((m) => m.number)).toEqual([7]);
    expect(repo.history.at(-1)).toBe('c1');
    // LD02: the next pass validates #8 again, on c1; the accept on c0 counts for nothing.
    await h.engine.schedulerTick();
    const again = landers(h).at(-1)!;
    expect([again.prNumber, again.headSha, again.baseSha]).toEqual([8, 'b'.repeat(40), 'c1']);
    const check = h.forge.checkRuns.find((c) => c.headSha === 'b'.repeat(40))!.current;
    expect([check.status, check.title]).toEqual(['in_progress', 'Validating bbbbbbb on c1']);
    expect(check.summary).toContain(
      `The base moved since lander run \`${landers(h)[1]!.runId}\` accepted it on c0: a verdict counts only for the base it judged.`,
    );
    await report(h, again.runId, 'success', 'accept');
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    expect(h.forge.merges.map((m) => m.number)).toEqual([7, 8]);
    // The verdict comment says which base it judged.
    const said = h.forge.comments.filter((c) => c.number === 8 && decodeMarker(c.body).kind === 'marker').at(-1)!;
    expect(said.body.split('\n')[1]).toBe(
      `**yoke lander accepted** this PR at \`bbbbbbb\` merged onto \`c1\`, the base it would land on (run \`${again.runId}\`).`,
    );
  });

  it('LD02 a push to the base branch by hand after an accept: no merge on the old base, and a new lander on the new one', async () => {
    const h = makeHarness();
    h.forge.addRepo(REPO, AUTOLAND);
    await addClaimPull(h, REPO, { number: 7, issue: 1, headSha: 'a'.repeat(40) });
    await h.engine.schedulerTick();
    const first = landers(h)[0]!;
    await report(h, first.runId, 'success', 'accept');
    h.forge.commit(REPO, { 'README.md': 'someone pushed' });
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    expect(h.forge.merges).toEqual([]);
    expect(landers(h).map((s) => s.baseSha)).toEqual(['c0', 'c1']);
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
    ({ id, kind: 'lander', prNumber: 7, headSha: 'h'.repeat(40), baseSha: base, verdict, status }) as Run;
  const pull = { number: 7, headSha: 'h'.repeat(40) };
  const B1 = '1'.repeat(40);
  const B2 = '2'.repeat(40);
  it('LD01 LD02 LD06 says where each claim PR stands: validating on which base, accepted on this base or an older one, rejected, re-run, or waiting', () => {
    expect(landingState([], pull, B1)).toBe('waits for a lander on 1111111');
    expect(landingState([], pull, null)).toBe('waits for GitHub to say where its base branch is');
    expect(landingState([lander('a', B1, null, 'live')], pull, B1)).toBe('being validated on 1111111');
    expect(landingState([lander('a', B1, 'accept')], pull, B1)).toBe(
      'accepted on 1111111: lands unless a review or a protected path holds it',
    );
    expect(landingState([lander('a', B1, 'accept')], pull, B2)).toBe(
      'accepted on 1111111; the base moved to 2222222: waits for a lander there',
    );
    expect(landingState([lander('a', B1, 'reject')], pull, B2)).toBe(
      'rejected on 1111111: waits for a fix (or a new push, or /yoke land)',
    );
    expect(landingState([lander('a', B1, 'accept'), lander('b', B2, 'reject')], pull, B2)).toBe(
      'rejected after an accept: waits to be validated once more (LD06)',
    );
    expect(
      landingState([lander('a', B1, 'accept'), lander('b', B2, 'reject'), lander('c', B2, null, 'live')], pull, B2),
    ).toBe('being validated on 2222222 (once more: a reject of a head accepted before)');
  });
});
