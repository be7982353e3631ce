import { describe, expect, it } from 'vitest';
import { dispatchStage } from '../../helpers/gate-check.js';
import { reviewApprovals } from '../../../src/delivery/gate/stage.js';
import { REPO, makeDeliveryHarness, mergedHead, threeItemRun, recordAs } from '../../helpers/delivery.js';

// TR09: who may give the independent review a QA case asks for. Someone with
// write access or more, approving the head yoke merged, who is a person (no
// bot, no deleted user), and not the PR's author, the item's holder or its
// assignee. Everyone else's approval is not the review.

const HEAD = 'c'.repeat(40);

describe('an independent review', () => {
  it("TR09 counts only a writer's approval of the merged head: not a sock puppet's, an older commit's, a bot's or ghost's", async () => {
    const perms: Record<string, string> = {
      maint: 'maintain',
      writer: 'write',
      puppet: 'read',
      'dependabot[bot]': 'write',
      ghost: 'write',
      stale: 'write',
      changed: 'write',
    };
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

  it("TR09 the item's assignee, its holder and the PR's author approving do not settle it; a writer who is none of them does", async () => {
    const h = await makeDeliveryHarness({ config: { delivery: { stages: [{ name: 'qa', kind: 'qa' }] } } });
    const { run } = await threeItemRun(h);
    for (const c of ['cart', 'looks-right'])
      await recordAs(h.fleet, run, 'qa', {
        item: 'APP-1',
        case: c,
        result: 'pass',
        evidence: 'ok',
        source: 'yoke qa case run',
        by: 'alice',
      });
    const pr = h.forge.repo(REPO).merged.find((p) => p.number === 101)!;
    const perms = h.forge.repo(REPO).permissions;
    Object.assign(perms, { alice: 'write', agent: 'write', stranger: 'read', bob: 'write' });
    // alice is APP-1's assignee (and so its holder); agent wrote the PR; stranger has no write access; bob approved an older head.
    pr.reviews.push(
      { author: 'alice', state: 'APPROVED', commitId: mergedHead(1) },
      { author: 'agent', state: 'APPROVED', commitId: mergedHead(1) },
    );
    pr.reviews.push(
      { author: 'stranger', state: 'APPROVED', commitId: mergedHead(1) },
      { author: 'bob', state: 'APPROVED', commitId: 'b'.repeat(40) },
    );
    const member = async () => {
      const d = await dispatchStage(h.fleet, run, 'qa');
      if (!d.ok) throw new Error(d.refusal.message);
      return [
        d.value.members.find((m) => m.item === 'APP-1')!.state,
        d.value.waits.filter((w) => w.subject === 'APP-1').map((w) => w.command),
      ];
    };
    expect(await member()).toEqual([
      'waiting',
      ['Approve PR #101 at its merged head, as someone with write access other than @agent and @alice.'],
    ]);
    // The holder froze at entry (alice); the issue is now assigned to carol, whose approval is not independent either.
    h.forge.repo(REPO).issues.find((i) => i.number === 1)!.assignee = 'carol';
    perms.carol = 'write';
    pr.reviews.push({ author: 'carol', state: 'APPROVED', commitId: mergedHead(1) });
    expect(await member()).toEqual([
      'waiting',
      ['Approve PR #101 at its merged head, as someone with write access other than @agent and @alice and @carol.'],
    ]);
    pr.reviews.push({ author: 'bob', state: 'APPROVED', commitId: mergedHead(1) });
    expect((await member())[0]).toBe('settled');
  });
});

describe('a replacement (--replaces)', () => {
  it('TR09 a claim PR a person merged takes its merged head from GitHub: a writer approving that head is the independent review', async () => {
    const h = await makeDeliveryHarness({
      config: { delivery: { stages: [{ name: 'qa', kind: 'qa' }] } },
      mergedByHand: [1],
    });
    const { run } = await threeItemRun(h);
    for (const c of ['cart', 'looks-right'])
      await recordAs(h.fleet, run, 'qa', {
        item: 'APP-1',
        case: c,
        result: 'pass',
        evidence: 'ok',
        source: 'yoke qa case run',
        by: 'alice',
      });
    h.forge.repo(REPO).permissions.bob = 'write';
    h.forge
      .repo(REPO)
      .merged.find((p) => p.number === 101)!
      .reviews.push({ author: 'bob', state: 'APPROVED', commitId: mergedHead(1) });
    const d = await dispatchStage(h.fleet, run, 'qa');
    expect(d.ok && d.value.members.find((m) => m.item === 'APP-1')!.state).toBe('settled');
  });

  it('TR10 one the pinned plan does not declare is refused with what to do, and records nothing; a declared one takes over the failed case', async () => {
    const plans = {
      '.github/yoke/qa/checkout.yml':
        'name: checkout\ncases:\n  - {id: cart, title: Cart total, run: ./qa/cart.sh}\n  - {id: looks-right, title: Looks right, manual: true}\n',
      '.github/yoke/qa/smoke.yml':
        'name: smoke\ncases:\n  - {id: flaky, title: Flaky, run: ./qa/flaky.sh}\n  - {id: health, title: Health, run: ./qa/health.sh}\n  - {id: health-v2, title: "Health, retried", run: "./qa/health.sh --retry", replaces: health}\n',
    };
    const h = await makeDeliveryHarness({ config: { delivery: { stages: [{ name: 'qa', kind: 'qa' }] } }, plans });
    const { run } = await threeItemRun(h);
    const rec = (body: Parameters<typeof recordAs>[3]) => recordAs(h.fleet, run, 'qa', body);
    await rec({
      plan: 'smoke',
      case: 'flaky',
      result: 'fail',
      evidence: 'timed out',
      source: 'yoke qa plan run',
      by: 'driver',
    });
    const waiver = await rec({
      plan: 'smoke',
      case: 'health',
      replaces: 'flaky',
      result: 'pass',
      source: 'yoke qa case run',
      by: 'someone',
    });
    expect(waiver.ok ? 'recorded' : [waiver.refusal.code, waiver.refusal.message, waiver.refusal.recovery]).toEqual([
      'qa_replacement_undeclared',
      "Plan smoke at the run's pinned commit does not declare health as the replacement of flaky, so its verdict cannot take flaky's place.",
      `Declare it in the plan (\`replaces: flaky\` on case health), merge, and take the run over on that commit; or have a maintainer discharge flaky with a reason: \`yoke qa waive --deployment-run-id ${run} --stage qa --plan smoke --case flaky --reason "..."\`.`,
    ]);
    expect((await h.store.qa.verdicts([run])).map((v) => v.caseId)).toEqual(['flaky']);
    // The declared one is recorded and counts; flaky still fails the group until then.
    await rec({
      plan: 'smoke',
      case: 'health',
      result: 'fail',
      evidence: 'down',
      source: 'yoke qa plan run',
      by: 'driver',
    });
    expect(
      (
        await rec({
          plan: 'smoke',
          case: 'health-v2',
          replaces: 'health',
          result: 'pass',
          source: 'yoke qa plan run',
          by: 'driver',
        })
      ).ok,
    ).toBe(true);
    const d = await dispatchStage(h.fleet, run, 'qa');
    if (!d.ok) throw new Error(d.refusal.message);
    expect(d.value.groups.map((g) => [g.planId, g.state])).toEqual([['smoke', 'failed']]);
    // health's failure was taken over by its declared replacement; flaky's was not.
    expect(d.value.triage.map((t) => t.failures.map((f) => f.caseId))).toEqual([['flaky']]);
  });

  it('TR10 a plan declaring a replacement of a case it does not have is refused with the field', async () => {
    const { parsePlanFile } = await import('../../../src/config/qa-plan.js');
    expect(
      parsePlanFile(
        '.github/yoke/qa',
        '.github/yoke/qa/p.yml',
        'name: p\ncases:\n  - {id: a, title: A, run: x, replaces: nope}\n',
      ),
    ).toMatchObject({
      ok: false,
      field: '.github/yoke/qa/p.yml.cases[0].replaces',
      detail: '.github/yoke/qa/p.yml.cases[0].replaces: case a replaces nope, which is not another case of this plan',
    });
  });
});
