import { requestStart } from '../../src/fleet/runs/controls.js';
import { describe, expect, it } from 'vitest';
import { makeHarness } from '../helpers/fleet.js';

// BU05: the pass honours the issue graph GitHub keeps. An issue blocked by an open issue (issue
// dependencies) is not started, and the wait names what it waits on; an issue with open sub-issues is not
// worked as one piece. Only a blocked issue costs a read (which issues block it); the summaries come with
// the issues.

const REPO = 'acme/api';
const afk = (h: ReturnType<typeof makeHarness>) => h.launcher.starts.map((s) => s.subject);

describe("GitHub's issue graph (BU05)", () => {
  it('BU05 an issue blocked by open issues is not started, and says by which; once they close it starts', async () => {
    const h = makeHarness({ policy: { globalCap: 4 } });
    const repo = h.forge.addRepo(REPO, { auto: true });
    h.forge.addIssue(REPO, 1);
    h.forge.addIssue(REPO, 2);
    repo.issues.find((i) => i.number === 2)!.blockers = ['#5', 'acme/web#4'];
    const pass = await h.engine.schedulerTick();
    expect(afk(h)).toEqual(['issue#1']);
    expect(h.forge.blockerReads).toBe(1);
    expect(pass.waiting.map((w) => [w.subject, w.reason.code, w.reason.message, w.reason.recovery])).toEqual([
      [
        'issue#2',
        'issue_blocked',
        "#2 of acme/api is not started: it is blocked by #5, acme/web#4, still open (GitHub's issue dependencies).",
        "Nothing to do: it starts once #5, acme/web#4 are closed. To start it sooner, remove the dependency (the issue's Relationships → Blocked by).",
      ],
    ]);
    repo.issues.find((i) => i.number === 2)!.blockers = [];
    await h.engine.schedulerTick();
    expect(afk(h)).toEqual(['issue#1', 'issue#2']);
  });

  it("BU05 a writer's /yoke start on a blocked issue waits too, and is served once the blocker closes", async () => {
    const h = makeHarness({ policy: { globalCap: 4 } });
    const repo = h.forge.addRepo(REPO, {});
    h.forge.addIssue(REPO, 3, []);
    repo.issues.find((i) => i.number === 3)!.blockers = ['#9'];
    await h.store.repos.ensure(REPO, 1, h.clock.now());
    expect((await requestStart(h.fleet, REPO, 3, { by: 'maint' })).ok).toBe(true);
    const pass = await h.engine.schedulerTick();
    expect(afk(h)).toEqual([]);
    expect(pass.waiting.map((w) => [w.subject, w.reason.code])).toEqual([['issue#3', 'issue_blocked']]);
    repo.issues.find((i) => i.number === 3)!.blockers = [];
    await h.engine.schedulerTick();
    expect(afk(h)).toEqual(['issue#3']);
  });

  it('BU05 an issue with open sub-issues is not worked as one piece; its sub-issues are', async () => {
    const h = makeHarness({ policy: { globalCap: 4 } });
    const repo = h.forge.addRepo(REPO, { auto: true });
    h.forge.addIssue(REPO, 10);
    h.forge.addIssue(REPO, 11);
    repo.issues.find((i) => i.number === 10)!.openSubIssues = 2;
    const pass = await h.engine.schedulerTick();
    expect(afk(h)).toEqual(['issue#11']);
    // Summaries alone: no read for an issue that is not blocked.
    expect(h.forge.blockerReads).toBe(0);
    expect(pass.waiting.map((w) => [w.subject, w.reason.message, w.reason.recovery])).toEqual([
      [
        'issue#10',
        '#10 of acme/api is not worked as one piece: 2 of its sub-issues are still open.',
        'Label its sub-issues yoke:afk to have them worked one by one; #10 starts once they are closed. If it is one piece of work after all, remove its sub-issues.',
      ],
    ]);
    repo.issues.find((i) => i.number === 10)!.openSubIssues = 0;
    await h.engine.schedulerTick();
    expect(afk(h)).toEqual(['issue#11', 'issue#10']);
  });
});
