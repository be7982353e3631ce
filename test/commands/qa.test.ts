import { describe, expect, it } from 'vitest';
import { handleComment } from '../../src/commands/handle.js';
import { handleQaLabel } from '../../src/delivery/gate/labels.js';
import type { CommentView } from '../../src/forge/types.js';
import { createDeploymentRun } from '../../src/delivery/runs/deployment-runs.js';
import { REPO, makeDeliveryHarness, recordAs } from '../helpers/delivery.js';

// QA attachments and waivers from comments and labels: writers attach,
// maintainers waive, and nobody else changes anything.

let ids = 500;
const comment = (author: string, body: string, issueNumber = 1): CommentView => ({
  id: ids++,
  issueNumber,
  isPull: false,
  author,
  authorIsBot: false,
  body,
  createdAt: Date.UTC(2026, 10, 29, 12, 0, 0),
  updatedAt: Date.UTC(2026, 10, 29, 12, 0, 0),
});

async function setup() {
  const h = await makeDeliveryHarness({ config: { delivery: { stages: [{ name: 'qa', kind: 'qa' }] } } });
  h.forge.repo(REPO).permissions = { maint: 'maintain', wendy: 'write', tria: 'triage', rita: 'read' };
  return { h, ref: h.forge.repo(REPO).ref };
}

describe('attaching QA plans', () => {
  it("a writer's `/yoke qa attach` records the exact id, labels the item and replies; a reader's changes nothing and gets no reply", async () => {
    const { h, ref } = await setup();
    expect(
      await handleComment(h.fleet, { repo: ref, comment: comment('rita', '/yoke qa attach smoke'), via: 'webhook' }),
    ).toBe('ignored');
    expect(await h.store.qa.attachments(REPO)).toEqual([]);
    expect(h.forge.comments).toEqual([]);
    expect(
      await handleComment(h.fleet, { repo: ref, comment: comment('wendy', '/yoke qa attach smoke'), via: 'webhook' }),
    ).toBe('done');
    expect((await h.store.qa.attachments(REPO)).map((a) => [a.issueNumber, a.planId, a.attachedBy, a.source])).toEqual([
      [1, 'smoke', 'wendy', 'command'],
    ]);
    expect(h.forge.repo(REPO).issues.find((i) => i.number === 1)!.labels).toContain('qa:smoke');
    expect(h.forge.comments.map((c) => c.body)).toEqual([
      "@wendy Attached QA plan `smoke` to APP-1. It becomes part of APP-1's QA when APP-1 next enters a QA stage.",
    ]);
  });

  it('an unknown plan is refused with the plans there are', async () => {
    const { h, ref } = await setup();
    expect(
      await handleComment(h.fleet, { repo: ref, comment: comment('wendy', '/yoke qa attach nope'), via: 'webhook' }),
    ).toBe('refused');
    expect(h.forge.comments.at(-1)!.body).toBe(
      '@wendy No QA plan is called "nope" in .github/yoke/qa/ on the default branch of acme/api.\n\n**To recover:** Name one of: checkout, smoke.',
    );
  });

  it('a plan that is there but does not parse is named as refused, with its field, not as unknown', async () => {
    const { h, ref } = await setup();
    h.forge.commit(REPO, {
      '.github/yoke/qa/broken.yml': 'name: broken\ncases:\n  - {id: a, titel: A, run: ./a.sh}\n',
    });
    expect(
      await handleComment(h.fleet, { repo: ref, comment: comment('wendy', '/yoke qa attach broken'), via: 'webhook' }),
    ).toBe('refused');
    expect(h.forge.comments.at(-1)!.body).toBe(
      '@wendy QA plan broken (.github/yoke/qa/broken.yml) is there, but yoke refuses it: .github/yoke/qa/broken.yml.cases[0]: "titel" is not a setting here; did you mean "title"?\n\n**To recover:** Fix `.github/yoke/qa/broken.yml.cases[0]` in `.github/yoke/qa/broken.yml` (`yoke config check` shows what yoke would say before you push), merge it, then attach it again.',
    );
    expect(await h.store.qa.attachments(REPO)).toEqual([]);
  });

  it('TR05 a `qa:` label attaches only when a writer added it; anyone else who can label makes yoke write nothing and nothing is recorded', async () => {
    const { h, ref } = await setup();
    const labeled = (sender: string) => ({
      repo: ref,
      issueNumber: 2,
      isPull: false,
      label: 'qa:checkout',
      sender,
      senderIsBot: false,
    });
    const before = h.forge.comments.length;
    expect(await handleQaLabel(h.fleet, labeled('tria'))).toBe('refused');
    expect(await h.store.qa.attachments(REPO)).toEqual([]);
    expect(h.forge.comments.length).toBe(before);
    expect(await handleQaLabel(h.fleet, labeled('wendy'))).toBe('attached');
    expect((await h.store.qa.attachments(REPO)).map((a) => [a.issueNumber, a.planId, a.source])).toEqual([
      [2, 'checkout', 'label'],
    ]);
    expect(await handleQaLabel(h.fleet, { ...labeled('yoke[bot]'), senderIsBot: true })).toBe('ignored');
  });
});

describe('waiving a QA case', () => {
  it('QA13 only a maintainer may waive, on the tracking issue; a writer is refused and the case stays failed', async () => {
    const { h, ref } = await setup();
    await h.attach(1, 'smoke');
    await h.attach(2, 'smoke');
    const run = await createDeploymentRun(h.fleet, { repo: REPO });
    if (!run.ok) throw new Error(run.refusal.message);
    await recordAs(h.fleet, run.value.id, 'qa', {
      plan: 'smoke',
      case: 'flaky',
      result: 'fail',
      evidence: 'x',
      source: 'capture',
      by: 'driver',
    });
    const tracking = run.value.trackingIssue!;
    expect(
      await handleComment(h.fleet, {
        repo: ref,
        comment: comment('wendy', '/yoke qa waive flaky --reason "flaky"', tracking),
        via: 'webhook',
      }),
    ).toBe('refused');
    expect(h.forge.comments.at(-1)!.body).toBe(
      '@wendy Waiving a QA case of acme/api needs maintain or admin access; yours is write.\n\n**To recover:** Ask a maintainer to waive it, or retry the case.',
    );
    expect((await h.store.qa.verdicts([run.value.id])).map((v) => v.result)).toEqual(['fail']);
    expect(
      await handleComment(h.fleet, {
        repo: ref,
        comment: comment('maint', '/yoke qa waive flaky --reason "known flake"', tracking),
        via: 'webhook',
      }),
    ).toBe('done');
    expect(h.forge.comments.at(-1)!.body).toBe(
      `@maint Waived case \`flaky\` of plan \`smoke\` for ${run.value.id}-g1: known flake`,
    );
    expect((await h.store.qa.verdicts([run.value.id])).map((v) => [v.result, v.recordedBy, v.evidence])).toEqual([
      ['fail', 'driver', 'x'],
      ['waived', 'maint', 'known flake'],
    ]);
  });
});
