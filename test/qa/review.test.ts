import { describe, expect, it } from 'vitest';
import { dispatchStage } from '../../src/qa/dispatch.js';
import { recordQaVerdict } from '../../src/qa/verdicts.js';
import { reviewApprovals } from '../../src/qa/stage.js';
import { REPO, makeDeliveryHarness, mergedHead, threeItemRun } from '../helpers/delivery.js';

// TR09: who may give the independent review a QA case asks for. Someone with
// write access or more, approving the head yoke merged, who is a person (no
// bot, no deleted user), and not the PR's author, the item's holder or its
// assignee. Everyone else's approval is not the review.

const HEAD = 'c'.repeat(40);

describe('an independent review', () => {
  it('TR09 counts only a writer\'s approval of the merged head: not a sock puppet\'s, an older commit\'s, a bot\'s or ghost\'s', async () => {
    const perms: Record<string, string> = { maint: 'maintain', writer: 'write', puppet: 'read', 'dependabot[bot]': 'write', ghost: 'write', stale: 'write', changed: 'write' };
    const reviews = [
      { author: 'puppet', state: 'APPROVED', commitId: HEAD },
      { author: 'stale', state: 'APPROVED', commitId: 'a'.repeat(40) },
      { author: 'dependabot[bot]', state: 'APPROVED', commitId: HEAD },
      { author: 'ghost', state: 'APPROVED', commitId: HEAD },
      { author: 'changed', state: 'APPROVED', commitId: HEAD },
      { author: 'changed', state: 'CHANGES_REQUESTED', commitId: HEAD },
      { author: 'writer', state: 'APPROVED', commitId: HEAD },
      { author: 'writer', state: 'COMMENTED', commitId: HEAD },
      { author: 'maint', state: 'APPROVED', commitId: HEAD },
    ];
    const isWriter = async (l: string) => ['admin', 'maintain', 'write'].includes(perms[l] ?? 'none');
    expect(await reviewApprovals(reviews, HEAD, isWriter)).toEqual(['writer', 'maint']);
    // Without the head yoke merged, no approval can be matched to it.
    expect(await reviewApprovals(reviews, null, isWriter)).toEqual([]);
  });

  it('TR09 the item\'s assignee, its holder and the PR\'s author approving do not settle it; a writer who is none of them does', async () => {
    const h = makeDeliveryHarness({ config: { delivery: { stages: [{ name: 'qa', kind: 'qa' }] } } });
    const { run } = await threeItemRun(h);
    for (const c of ['cart', 'looks-right']) await recordQaVerdict(h.fleet, run, 'qa', { item: 'APP-1', case: c, result: 'pass', evidence: 'ok', source: 'yoke qa case run', by: 'alice' });
    const pr = h.forge.repo(REPO).merged.find((p) => p.number === 101)!;
    const perms = h.forge.repo(REPO).permissions;
    Object.assign(perms, { alice: 'write', agent: 'write', stranger: 'read', bob: 'write' });
    // alice is APP-1's assignee (and so its holder); agent wrote the PR; stranger has no write access; bob approved an older head.
    pr.reviews.push({ author: 'alice', state: 'APPROVED', commitId: mergedHead(1) }, { author: 'agent', state: 'APPROVED', commitId: mergedHead(1) });
    pr.reviews.push({ author: 'stranger', state: 'APPROVED', commitId: mergedHead(1) }, { author: 'bob', state: 'APPROVED', commitId: 'b'.repeat(40) });
    const member = async () => {
      const d = await dispatchStage(h.fleet, run, 'qa');
      if (!d.ok) throw new Error(d.refusal.message);
      return [d.value.members.find((m) => m.item === 'APP-1')!.state, d.value.waits.filter((w) => w.subject === 'APP-1').map((w) => w.command)];
    };
    expect(await member()).toEqual(['waiting', ['Approve PR #101 at its merged head, as someone with write access other than @agent and @alice.']]);
    // The holder froze at entry (alice); the issue is now assigned to carol, whose approval is not independent either.
    h.forge.repo(REPO).issues.find((i) => i.number === 1)!.assignee = 'carol';
    perms.carol = 'write';
    pr.reviews.push({ author: 'carol', state: 'APPROVED', commitId: mergedHead(1) });
    expect(await member()).toEqual(['waiting', ['Approve PR #101 at its merged head, as someone with write access other than @agent and @alice and @carol.']]);
    pr.reviews.push({ author: 'bob', state: 'APPROVED', commitId: mergedHead(1) });
    expect((await member())[0]).toBe('settled');
  });
});
