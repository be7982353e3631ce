import { describe, expect, it } from 'vitest';
import { readBrief } from '../../src/agent/brief.js';
import { handleComment } from '../../src/commands/handle.js';
import type { CommentView, ReviewView } from '../../src/forge/types.js';
import { reviewHoldNote } from '../../src/fleet/notices/messages.js';
import { addClaimPull, makeHarness, recordVerdict, type Harness } from '../helpers/fleet.js';

// TR33: people with write access talk to the agent on its PR. A review that requests changes, or a
// `/yoke fix`, is an ask the next fix run carries; a reader's, a bot's or the author's starts nothing.

const REPO = 'acme/api';
const HEAD = 'c'.repeat(40);
const OLD = 'b'.repeat(40);

async function setup(config: Record<string, unknown> = {}, policy = {}) {
  const h = makeHarness({ policy });
  const repo = h.forge.addRepo(REPO, { fix_forward: { max_attempts: 2 }, ...config });
  repo.permissions = { maint: 'write', lead: 'admin', rita: 'read', 'helper[bot]': 'write', agent: 'write' };
  const { pull, runId } = await addClaimPull(h, REPO, { number: 7, issue: 1, headSha: HEAD });
  await h.store.claims.record({ repo: REPO, prNumber: 7, runId, issueNumber: 1, recordedAt: h.clock.now() });
  return { h, repo, pull };
}

let reviewSeq = 100;
const review = (author: string, over: Partial<ReviewView> = {}): ReviewView => ({
  id: ++reviewSeq,
  author,
  state: 'CHANGES_REQUESTED',
  commitId: HEAD,
  body: `Changes, says ${author}.`,
  submittedAt: Date.UTC(2026, 11, 1),
  ...over,
});

const inline = (reviewId: number, path: string, line: number, body: string) => ({
  id: reviewId * 10 + line,
  reviewId,
  author: 'maint',
  path,
  line,
  diffHunk: `@@ -1,${line} +1,${line} @@\n+line ${line}`,
  body,
  commitId: HEAD,
});

const fixStarts = (h: Harness) => h.launcher.starts.filter((s) => s.kind === 'fix');
const briefOf = (h: Harness, i: number) => readBrief(fixStarts(h)[i]!.rejection);

describe('review-driven fixes (TR33)', () => {
  it('TR33 a writer’s review requesting changes starts a fix at the PR’s head, carrying its text and inline comments, and the run says why', async () => {
    const { h, pull } = await setup();
    const r = review('maint', { body: 'Two things.' });
    pull.reviews.push(r);
    h.forge.reviewComments.set(`${REPO}#7`, [
      inline(r.id!, 'lib/a.js', 3, 'Use const.'),
      inline(r.id!, 'lib/b.js', 9, 'Name it total.'),
      inline(999, 'lib/c.js', 1, 'another review'),
    ]);
    await h.engine.schedulerTick();
    expect(fixStarts(h).map((s) => [s.subject, s.headSha])).toEqual([['pr#7', HEAD]]);
    expect(briefOf(h, 0)).toEqual({
      rejection: null,
      asks: [
        {
          source: 'review',
          author: 'maint',
          writtenOn: null,
          text: 'Two things.',
          comments: [
            { path: 'lib/a.js', line: 3, diffHunk: '@@ -1,3 +1,3 @@\n+line 3', body: 'Use const.' },
            { path: 'lib/b.js', line: 9, diffHunk: '@@ -1,9 +1,9 @@\n+line 9', body: 'Name it total.' },
          ],
        },
      ],
    });
    const run = (await h.store.runs.get(fixStarts(h)[0]!.runId))!;
    expect(run.why).toBe('a review by @maint');
    expect((await h.store.asks.listForRepo(REPO)).map((a) => [a.author, a.carriedByRun])).toEqual([['maint', run.id]]);
    // Carried: the next pass starts no second fix for it, and the change request still holds the merge.
    h.launcher.finish(run.id);
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    expect(fixStarts(h)).toHaveLength(1);
    expect(h.forge.merges).toEqual([]);
  });

  it('TR33 an ask whose review was dismissed, or whose author approved since, starts no fix while it waits', async () => {
    const { h, pull } = await setup();
    pull.reviews.push(review('maint', { body: 'First.' }));
    await h.engine.schedulerTick();
    expect(fixStarts(h)).toHaveLength(1);
    // While that fix runs, two more asks come, and wait for the next fix; then one is dismissed, one approved over.
    const dismissed = review('maint', { body: 'Second.' });
    pull.reviews.push(dismissed, review('lead', { body: 'Third.' }));
    await h.engine.schedulerTick();
    expect((await h.store.asks.listForRepo(REPO)).filter((a) => a.carriedByRun === null).map((a) => a.text)).toEqual([
      'Second.',
      'Third.',
    ]);
    dismissed.state = 'DISMISSED';
    pull.reviews.push(review('lead', { state: 'APPROVED' }));
    h.launcher.finish(fixStarts(h)[0]!.runId);
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    expect(fixStarts(h)).toHaveLength(1);
    // A writer who asks again is heard.
    pull.reviews.push(review('maint', { body: 'Once more.' }));
    await h.engine.schedulerTick();
    expect(fixStarts(h)).toHaveLength(2);
    expect(briefOf(h, 1).asks.map((a) => [a.author, a.text])).toEqual([['maint', 'Once more.']]);
  });

  it('TR33 an ask whose author is no longer a writer (demoted since they asked) starts nothing, and is heard again once they are', async () => {
    const { h, repo, pull } = await setup();
    pull.reviews.push(review('maint', { body: 'First.' }));
    await h.engine.schedulerTick();
    expect(fixStarts(h)).toHaveLength(1);
    // While that fix runs, maint asks again, then loses write access.
    pull.reviews.push(review('maint', { body: 'Second.' }));
    await h.engine.schedulerTick();
    repo.permissions.maint = 'read';
    h.launcher.finish(fixStarts(h)[0]!.runId);
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    expect(fixStarts(h)).toHaveLength(1);
    // The ask is kept as it was recorded: a writer again, maint is heard.
    expect((await h.store.asks.listForRepo(REPO)).map((a) => [a.text, a.declined, a.carriedByRun === null])).toEqual([
      ['First.', null, false],
      ['Second.', null, true],
    ]);
    repo.permissions.maint = 'write';
    await h.engine.schedulerTick();
    expect(fixStarts(h)).toHaveLength(2);
    expect(briefOf(h, 1).asks.map((a) => [a.author, a.text])).toEqual([['maint', 'Second.']]);
  });

  it('TR33 a reader’s, a bot’s and the author’s reviews start nothing, and GitHub is asked about each reviewer once', async () => {
    const { h, pull } = await setup();
    pull.reviews.push(review('rita'), review('helper[bot]'), review('agent'), review('maint', { state: 'COMMENTED' }));
    await h.engine.schedulerTick();
    await h.engine.schedulerTick();
    expect(h.launcher.starts.filter((s) => s.kind === 'fix')).toEqual([]);
    expect(h.forge.calls.getPermission).toBe(1);
    expect((await h.store.asks.listForRepo(REPO)).map((a) => [a.author, a.declined, a.text])).toEqual([
      ['rita', 'not_a_writer', ''],
      ['helper[bot]', 'a_bot', ''],
      ['agent', 'the_author', ''],
    ]);
    expect(h.forge.comments).toEqual([]);
  });

  it('TR33 reviews that arrive while a fix is live are folded into the next fix, none lost, one on an older head named', async () => {
    const { h, pull } = await setup();
    pull.reviews.push(review('maint', { body: 'first' }));
    await h.engine.schedulerTick();
    const first = fixStarts(h)[0]!;
    pull.reviews.push(review('lead', { body: 'second', commitId: OLD }), review('maint', { body: 'third' }));
    await h.engine.schedulerTick();
    expect(fixStarts(h)).toHaveLength(1);
    // The fix pushes a new head; the lander accepts it; both later reviews go to one more fix.
    h.launcher.finish(first.runId);
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    expect(fixStarts(h)).toHaveLength(2);
    expect(briefOf(h, 1).asks.map((a) => [a.author, a.text, a.writtenOn])).toEqual([
      ['lead', 'second', OLD],
      ['maint', 'third', null],
    ]);
    expect((await h.store.runs.get(fixStarts(h)[1]!.runId))!.why).toBe('2 reviews by @lead and @maint');
  });

  it('TR33 SP04 under a full cap a review-driven fix waits behind a lander and goes before new work', async () => {
    const { h, pull } = await setup({ autoland: { enabled: true } }, { globalCap: 1 });
    h.forge.addIssue(REPO, 2, ['yoke:afk']);
    await addClaimPull(h, REPO, { number: 8, issue: 3, headSha: 'd'.repeat(40) });
    await recordVerdict(h, REPO, 7, HEAD, 'accept');
    pull.reviews.push(review('maint'));
    const order: string[] = [];
    for (let i = 0; i < 3; i++) {
      await h.engine.schedulerTick();
      const last = h.launcher.starts.at(-1)!;
      order.push(`${last.kind} ${last.subject}`);
      // The lander rejects pr#8, so it neither merges nor needs a slot again before the issue's run.
      if (last.kind === 'lander') await reportVerdict(h, last.runId, 'reject');
      h.launcher.finish(last.runId);
      await h.engine.reaperTick();
    }
    expect(order).toEqual(['lander pr#8', 'fix pr#7', 'afk_auto issue#2']);
  });

  it('TR33 BU03 with fix.on_review off a review starts nothing; a spent day holds it with budget_reserved', async () => {
    const off = await setup({ fix: { on_review: false } });
    off.pull.reviews.push(review('maint'));
    await off.h.engine.schedulerTick();
    expect(fixStarts(off.h)).toEqual([]);
    expect((await off.h.store.asks.listForRepo(REPO)).map((a) => a.declined)).toEqual(['review_fixes_off']);

    const spent = await setup({ budget: { daily_usd: 1 } });
    await spendToday(spent.h, 2);
    spent.pull.reviews.push(review('maint'));
    const report = await spent.h.engine.schedulerTick();
    expect(fixStarts(spent.h)).toEqual([]);
    expect(report.waiting.map((w) => [w.stage, w.subject, w.reason.code])).toContainEqual([
      'fix',
      'pr#7',
      'budget_reserved',
    ]);
  });

  it('TR33 SP19 review-driven fixes count against the fix attempt cap; at the cap one comment says who asked and what to do', async () => {
    const { h, pull } = await setup({ fix_forward: { max_attempts: 1 } });
    pull.reviews.push(review('maint'));
    await h.engine.schedulerTick();
    await succeed(h, fixStarts(h)[0]!.runId);
    pull.reviews.push(review('lead'));
    const report = await h.engine.schedulerTick();
    await h.engine.schedulerTick();
    expect(fixStarts(h)).toHaveLength(1);
    expect(report.waiting.find((w) => w.subject === 'pr#7')!.reason.code).toBe('fix_asks_exhausted');
    expect(h.forge.comments.map((c) => c.body)).toEqual([
      "@agent a review by @lead asked for changes on #7, but it has had its 1 fix runs, so no agent makes them. yoke has stopped fixing it and labelled it `yoke:stuck`.\n\n**To recover:** Make the changes on #7's branch by hand (the lander validates the new head), or raise `fix_forward.max_attempts` in .github/yoke.yml and comment `/yoke fix <what to change>` on #7.",
    ]);
  });

  it('TR33 a review-driven fix that fails says on the PR which ask it could not make, and how to ask again', async () => {
    const { h, pull } = await setup();
    pull.reviews.push(review('maint'));
    await h.engine.schedulerTick();
    const run = fixStarts(h)[0]!.runId;
    await h.store.runs.recordReport(run, { outcome: 'failure', verdict: null, summary: 'the tests would not pass' }, 0);
    h.launcher.finish(run);
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    expect(h.forge.comments.map((c) => c.body)).toEqual([
      `yoke's fix run \`${run}\`, started for a review by @maint, failed:\n\n\`\`\`\nthe tests would not pass\n\`\`\`\n\n**To recover:** The changes asked for in a review by @maint are not made. Make them on the PR's branch yourself, or comment \`/yoke fix <what to change>\` to ask again (while fix attempts are left).`,
    ]);
  });

  it('TR33 a fix whose launch fails hands its asks back: the next fix carries them', async () => {
    const { h, pull } = await setup();
    pull.reviews.push(review('maint', { body: 'keep me' }));
    h.launcher.failNext = 1;
    await h.engine.schedulerTick();
    expect(fixStarts(h)).toEqual([]);
    await h.engine.schedulerTick();
    expect(briefOf(h, 0).asks.map((a) => a.text)).toEqual(['keep me']);
  });

  it('TR33 SP18 an accept while a change request stands says once whose approval yoke waits for, and merges once they approve', async () => {
    const { h, pull } = await setup({ autoland: { enabled: true } });
    await recordVerdict(h, REPO, 7, HEAD, 'reject');
    pull.reviews.push(review('maint'));
    await h.engine.schedulerTick();
    const fix = fixStarts(h)[0]!;
    h.launcher.finish(fix.runId);
    await h.engine.reaperTick();
    pull.headSha = 'e'.repeat(40);
    await h.engine.schedulerTick();
    const lander = h.launcher.starts.find((s) => s.kind === 'lander' && s.headSha === pull.headSha)!;
    await reportVerdict(h, lander.runId, 'accept');
    h.launcher.finish(lander.runId);
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    const verdicts = h.forge.comments.filter((c) => c.body.includes('"verdict":"accept"'));
    expect(verdicts).toHaveLength(1);
    expect(verdicts[0]!.body.endsWith(`\n\n${reviewHoldNote(['maint'])}`)).toBe(true);
    expect(reviewHoldNote(['maint'])).toBe(
      "@maint requested changes on this PR, so yoke does not merge it until that reviewer approves it or dismisses the review, as GitHub's own rule would.",
    );
    expect(h.forge.merges).toEqual([]);
    pull.reviews.push({ ...review('maint'), state: 'APPROVED', commitId: pull.headSha });
    await h.engine.schedulerTick();
    expect(h.forge.merges.map((m) => m.sha)).toEqual([pull.headSha]);
    expect(fixStarts(h)).toHaveLength(1);
  });
});

describe('/yoke fix and /yoke start with instructions (TR33)', () => {
  const on = (issueNumber: number, author: string, body: string, id: number, isPull = true): CommentView => ({
    id,
    issueNumber,
    isPull,
    author,
    authorIsBot: author.endsWith('[bot]'),
    body,
    createdAt: Date.UTC(2026, 11, 1),
    updatedAt: Date.UTC(2026, 11, 1),
  });

  it('TR33 a writer’s /yoke fix on a claim PR starts a fix with its text; a reader’s and a bot’s start nothing and get no reply', async () => {
    const { h, repo } = await setup();
    expect(
      await handleComment(h.fleet, { repo: repo.ref, comment: on(7, 'rita', '/yoke fix do it', 51), via: 'poll' }),
    ).toBe('ignored');
    expect(
      await handleComment(h.fleet, { repo: repo.ref, comment: on(7, 'helper[bot]', '/yoke fix x', 52), via: 'poll' }),
    ).toBe('not_a_command');
    expect(h.forge.comments).toEqual([]);
    const c = on(7, 'maint', '/yoke fix\nRename `count` to `total`.', 53);
    expect(await handleComment(h.fleet, { repo: repo.ref, comment: c, via: 'webhook' })).toBe('done');
    expect(await handleComment(h.fleet, { repo: repo.ref, comment: c, via: 'poll' })).toBe('duplicate');
    expect(h.forge.comments.map((x) => x.body)).toEqual([
      '@maint Queued a fix run for #7 with your instructions; there is a free slot and money for it, so it launches on the next pass.',
    ]);
    await h.engine.schedulerTick();
    expect(briefOf(h, 0).asks).toEqual([
      { source: 'command', author: 'maint', writtenOn: null, text: 'Rename `count` to `total`.', comments: [] },
    ]);
    expect((await h.store.runs.get(fixStarts(h)[0]!.runId))!.why).toBe('a command by @maint');
  });

  it('TR33 /yoke fix with nothing to change, or on a PR that is not a claim, is refused with the fix', async () => {
    const { h, repo } = await setup();
    h.forge.addPull(REPO, { number: 9, headSha: 'f'.repeat(40), labels: [], body: 'by hand' });
    await handleComment(h.fleet, { repo: repo.ref, comment: on(7, 'maint', '/yoke fix', 61), via: 'poll' });
    await handleComment(h.fleet, { repo: repo.ref, comment: on(9, 'maint', '/yoke fix tidy', 62), via: 'poll' });
    expect(h.forge.comments.map((x) => x.body)).toEqual([
      '@maint `/yoke fix` on #7 says nothing to change.\n\n**To recover:** Say what the agent should change after the command, on the same line or the lines below: `/yoke fix rename count to total`. To validate #7 again as it is, comment `/yoke land`.',
      "@maint #9 is not a claim PR of acme/api, so no agent works on it.\n\n**To recover:** `/yoke fix` works on the PRs yoke's agents opened (labelled `yoke:claim`). To have an agent work on an issue, comment `/yoke start <instructions>` on it; change #9 by hand.",
    ]);
    await h.engine.schedulerTick();
    expect(fixStarts(h)).toEqual([]);
  });

  it('TR33 /yoke start with instructions gives the AFK run the writer’s text', async () => {
    const { h, repo } = await setup();
    h.forge.addIssue(REPO, 4);
    const c = on(4, 'lead', '/yoke start use metric units', 71, false);
    expect(await handleComment(h.fleet, { repo: repo.ref, comment: c, via: 'poll' })).toBe('done');
    await h.engine.schedulerTick();
    const afk = h.launcher.starts.find((s) => s.subject === 'issue#4')!;
    expect(readBrief(afk.rejection).asks).toEqual([
      { source: 'command', author: 'lead', writtenOn: null, text: 'use metric units', comments: [] },
    ]);
  });
});

/** The lander that is running reports its verdict. */
async function reportVerdict(h: Harness, runId: string, verdict: 'accept' | 'reject'): Promise<void> {
  await h.store.runs.recordReport(runId, { outcome: 'success', verdict, summary: 'ok' }, h.clock.now());
}

async function spendToday(h: Harness, usd: number): Promise<void> {
  const id = await recordVerdict(h, REPO, 99, 'a'.repeat(40), 'accept');
  await h.store.sql.run('UPDATE runs SET cost_usd = ?, reported_at = ? WHERE id = ?', [usd, h.clock.now(), id]);
}

/** A run reports success and its process exits; the reaper ends it. */
async function succeed(h: Harness, runId: string): Promise<void> {
  await h.store.runs.recordReport(runId, { outcome: 'success', verdict: null, summary: 'done' }, h.clock.now());
  h.launcher.finish(runId);
  await h.engine.reaperTick();
}
