import { describe, expect, it } from 'vitest';
import { buildFleetReport } from '../../src/http/operator/report.js';
import { headApprovers, protectedFilesOf, protectedGlobs } from '../../src/fleet/spawn/protected-paths.js';
import { needsYou } from '../../src/http/pages/needs-you.js';
import { protectedApprovedNotice, protectedHoldNotice } from '../../src/fleet/notices/messages.js';
import { AUTOLAND, addClaimPull, makeHarness, recordVerdict } from '../helpers/fleet.js';

// TR14: a claim PR that changes what yoke trusts (its workflows, its opt-in
// file, validate.sh, the agents' settings) is never merged without a person.

const SHA = 'a'.repeat(40);

describe('protected paths (TR14)', () => {
  it('TR14 the defaults cover .github and the agents\u2019 settings, at any depth for CLAUDE.md and AGENTS.md, and a repository adds its own', () => {
    const globs = protectedGlobs(['deploy/**', '*.tf']);
    const files = [
      '.github/yoke/validate.sh',
      '.github/workflows/yoke-run.yml',
      '.github/yoke.yml',
      '.github/CODEOWNERS',
      'CLAUDE.md',
      'pkg/sub/CLAUDE.md',
      'AGENTS.md',
      '.claude/settings.json',
      '.mcp.json',
      '.codex/config.toml',
      '.Claude/settings.json',
      'deploy/prod/run.sh',
      'main.tf',
      'lib/shout.js',
      'docs/github/README.md',
      'modules/main.tf',
    ];
    expect(protectedFilesOf(files, globs)).toEqual(files.slice(0, 13));
  });

  it('TR14 only an approval of exactly this head, by someone other than the author who is not a bot, counts; the latest review of each person stands', () => {
    const reviews = [
      { author: 'alice', state: 'APPROVED', commitId: SHA },
      { author: 'agent-bot[bot]', state: 'APPROVED', commitId: SHA },
      { author: 'yoke[bot]', state: 'APPROVED', commitId: SHA },
      { author: 'ghost', state: 'APPROVED', commitId: SHA },
      { author: 'bob', state: 'APPROVED', commitId: 'b'.repeat(40) },
      { author: 'carol', state: 'APPROVED', commitId: SHA },
      { author: 'carol', state: 'CHANGES_REQUESTED', commitId: SHA },
      { author: 'dave', state: 'APPROVED', commitId: SHA },
      { author: 'dave', state: 'COMMENTED', commitId: SHA },
    ];
    expect(headApprovers(reviews, SHA, 'Alice')).toEqual(['dave']);
  });

  it('TR14 an accepted head that changes validate.sh is held: no merge, one comment naming the files, the check asks for a person, and Needs you lists it', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', AUTOLAND);
    const { pull } = await addClaimPull(h, 'acme/api', { number: 7, issue: 1, headSha: SHA });
    pull.files = ['lib/shout.js', '.github/yoke/validate.sh'];
    const lander = await recordVerdict(h, 'acme/api', 7, SHA, 'accept');
    await h.engine.schedulerTick();
    await h.engine.schedulerTick();
    expect(h.forge.merges).toEqual([]);
    const holdComments = h.forge.comments.filter((c) => !c.body.includes('yoke:verdict'));
    expect(holdComments.map((c) => [c.number, c.body])).toEqual([
      [7, protectedHoldNotice(7, SHA, ['.github/yoke/validate.sh'])],
    ]);
    expect(holdComments[0]!.body).toBe(
      'yoke did not merge this PR. #7 changes files yoke trusts (`.github/yoke/validate.sh`), so the lander\u2019s accept at aaaaaaa does not merge it: a person must approve this head.'.replace(
        '\u2019',
        "'",
      ) +
        '\n\nThese paths are protected by default (`.github/**`, `CLAUDE.md`, `AGENTS.md`, `.claude/**`, `.mcp.json`, `.codex/**`) or by `protected_paths:` in `.github/yoke.yml`: an agent that could change them unseen could change what yoke checks.' +
        '\n\n**To recover:** Review the change to those files; if it is right, approve #7 at aaaaaaa as a writer who is not its author (Files changed → Review changes → Approve), and yoke merges it at that head. If not, close it or push a change that leaves them alone.',
    );
    const check = h.forge.checkRuns.find((c) => c.headSha === SHA)!.current;
    expect(check).toMatchObject({
      status: 'completed',
      conclusion: 'action_required',
      title: 'Accepted at aaaaaaa on c0; a person must approve',
      externalId: lander,
    });
    expect(check.summary).toContain('`.github/yoke/validate.sh`');
    await h.store.repos.recordRead('acme/api', {
      readAt: 0,
      settings: {} as never,
      openClaims: [{ number: 7, title: 'PR 7', headSha: SHA, author: 'agent' }],
    });
    const items = needsYou(await buildFleetReport(h.fleet, null), h.clock.now());
    expect(items).toEqual([
      expect.objectContaining({
        repo: 'acme/api',
        what: expect.stringContaining('#7 changes files yoke trusts (`.github/yoke/validate.sh`)'),
      }),
    ]);
  });

  it('TR14 the author\u2019s own approval, a bot\u2019s, a non-writer\u2019s and one of an older head release nothing; a writer\u2019s approval of the head merges it at that head', async () => {
    const h = makeHarness();
    const r = h.forge.addRepo('acme/api', AUTOLAND);
    r.permissions = { agent: 'write', mallory: 'read', 'helper[bot]': 'write', maint: 'write' };
    const { pull } = await addClaimPull(h, 'acme/api', { number: 7, issue: 1, headSha: SHA });
    pull.files = ['.github/workflows/yoke-run.yml'];
    await recordVerdict(h, 'acme/api', 7, SHA, 'accept');
    pull.reviews.push(
      { author: 'agent', state: 'APPROVED', commitId: SHA },
      { author: 'helper[bot]', state: 'APPROVED', commitId: SHA },
      { author: 'mallory', state: 'APPROVED', commitId: SHA },
      { author: 'maint', state: 'APPROVED', commitId: 'c'.repeat(40) },
    );
    await h.engine.schedulerTick();
    await h.engine.schedulerTick();
    expect(h.forge.merges).toEqual([]);
    pull.reviews.push({ author: 'maint', state: 'APPROVED', commitId: SHA });
    await h.engine.schedulerTick();
    expect(h.forge.merges).toEqual([{ repo: 'acme/api', number: 7, sha: SHA, method: 'squash' }]);
    expect(h.forge.checkAtMerge).toEqual(['success']);
    const holds = await h.store.protectedHolds.list('acme/api');
    expect(holds.map((x) => x.approvedBy)).toEqual(['maint']);
    expect(h.forge.comments.find((c) => !c.body.includes('yoke:verdict'))!.body).toBe(
      protectedApprovedNotice(7, SHA, ['.github/workflows/yoke-run.yml'], 'maint'),
    );
    const check = h.forge.checkRuns.find((c) => c.headSha === SHA)!.current;
    expect(check).toMatchObject({ conclusion: 'success', title: 'Accepted at aaaaaaa on c0' });
    expect(check.summary).toContain('maint approved this head');
  });

  it('TR14 a change GitHub would not list is held as protected, and a change of ordinary files merges once its check says success', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', AUTOLAND);
    const a = await addClaimPull(h, 'acme/api', { number: 7, issue: 1, headSha: SHA });
    a.pull.files = null;
    const b = await addClaimPull(h, 'acme/api', { number: 8, issue: 2, headSha: 'd'.repeat(40) });
    b.pull.files = ['lib/ok.js'];
    await recordVerdict(h, 'acme/api', 7, SHA, 'accept');
    await recordVerdict(h, 'acme/api', 8, 'd'.repeat(40), 'accept');
    await h.engine.schedulerTick();
    expect(h.forge.merges.map((m) => m.number)).toEqual([8]);
    // The pass that read the change wrote the success a branch rule may require before it asked for the merge.
    expect(h.forge.checkAtMerge).toEqual(['success']);
    expect((await h.store.protectedHolds.list()).map((x) => [x.prNumber, x.files])).toEqual([
      [7, ['(GitHub did not list the files of this change)']],
      [8, []],
    ]);
  });

  it('TR14 a head found clear is held after all when protected_paths grows to cover what it changes, and its check says so', async () => {
    const h = makeHarness();
    const repo = h.forge.addRepo('acme/api', { autoland: { enabled: false } });
    const { pull } = await addClaimPull(h, 'acme/api', { number: 7, issue: 1, headSha: SHA });
    pull.files = ['deploy/prod.sh'];
    await recordVerdict(h, 'acme/api', 7, SHA, 'accept');
    await h.engine.schedulerTick();
    expect(h.forge.checkRuns.find((c) => c.headSha === SHA)!.current.conclusion).toBe('success');
    repo.config = { autoland: { enabled: false }, protected_paths: ['deploy/**'] };
    await h.engine.schedulerTick();
    expect((await h.store.protectedHolds.list()).map((x) => x.files)).toEqual([['deploy/prod.sh']]);
    expect(h.forge.checkRuns.find((c) => c.headSha === SHA)!.current.conclusion).toBe('action_required');
  });
});
