import { describe, expect, it } from 'vitest';
import { planRunNotices, syncRunNotices } from '../../src/fleet/notices/run-notices.js';
import { silentLog } from '../../src/kernel/log.js';
import { liveRun } from '../helpers/run-api.js';
import { makeHarness } from '../helpers/fleet.js';

// A failed AFK or fix run says so on its issue or claim PR, once, edited for
// the next failure there: the summary it reported and the recovery.

function setup() {
  const h = makeHarness();
  h.forge.addRepo('acme/api', {});
  h.forge.addIssue('acme/api', 14);
  const fail = async (
    over: {
      kind?: 'afk_auto' | 'fix';
      issue?: number;
      summary?: string | null;
      outcome?: 'failure' | 'timeout' | 'cancelled';
    } = {},
  ) => {
    const id = await liveRun(h, { kind: over.kind ?? 'afk_auto', issue: over.issue ?? 14, secret: 's' });
    if (over.summary !== null)
      await h.store.runs.recordReport(
        id,
        {
          outcome: 'failure',
          verdict: null,
          summary: over.summary ?? 'Error: issue #14 names no demo task',
          cost: null,
        },
        h.clock.now(),
      );
    await h.store.runs.end(
      id,
      over.outcome ?? 'failure',
      over.outcome === 'timeout' ? 'ran past its 60-minute budget' : null,
      h.clock.now(),
    );
    h.clock.advance(1000);
    return id;
  };
  const sync = () =>
    syncRunNotices({
      store: h.store,
      forge: h.forge,
      clock: h.clock,
      log: silentLog,
      webUrl: 'https://github.test',
    });
  return { h, fail, sync };
}

describe('failed run notices', () => {
  it('a failed AFK run leaves one comment on its issue with what it reported and the recovery; the next failure edits it', async () => {
    const { h, fail, sync } = setup();
    const first = await fail();
    expect(await sync()).toBe(1);
    expect(h.forge.comments.map((c) => [c.number, c.body])).toEqual([
      [
        14,
        `yoke's AFK run \`${first}\` failed:\n\n\`\`\`\nError: issue #\u200b14 names no demo task\n\`\`\`\n\n**To recover:** yoke starts another run on a later pass, unless the repository pauses at its failure threshold; to start one now, comment \`/yoke start\`. If the issue cannot be done as written, change it, or take the AFK label off.`,
      ],
    ]);
    expect(await sync()).toBe(0);
    const second = await fail({ summary: null, outcome: 'timeout' });
    expect(await sync()).toBe(1);
    expect(h.forge.comments).toHaveLength(1);
    expect(h.forge.comments[0]!.body.split('\n\n').slice(0, 2)).toEqual([
      `yoke's AFK run \`${second}\` ran out of time (2 failed runs here so far):`,
      '```\nran past its 60-minute budget\n```',
    ]);
  });

  it('a fix run goes to its claim PR; a run yoke cancelled itself, or one that succeeded last, posts nothing', async () => {
    const { h, fail } = setup();
    const fix = await fail({ kind: 'fix' });
    const cancelled = await fail({ issue: 15, outcome: 'cancelled' });
    const plan = planRunNotices(await h.store.runs.listAll(), [], {
      now: h.clock.now(),
      webUrl: 'https://github.test',
    });
    expect(plan.map((a) => [a.thread, a.runId, a.commentId])).toEqual([[7, fix, null]]);
    expect(plan[0]!.body).toContain("yoke's fix run");
    // The cancelled run did end as cancelled, and posts nothing.
    expect((await h.store.runs.get(cancelled))?.outcome).toBe('cancelled');
    expect(plan.map((a) => a.runId)).not.toContain(cancelled);
  });

  it('a later run that succeeds marks the failure comment over, once, and never posts it again if it was deleted', async () => {
    const { h, fail, sync } = setup();
    const failed = await fail();
    await sync();
    const ok = await liveRun(h, { kind: 'afk_auto', issue: 14, secret: 's' });
    await h.store.runs.end(ok, 'success', null, h.clock.now());
    expect(await sync()).toBe(1);
    expect(h.forge.comments.map((c) => [c.number, c.body])).toEqual([
      [
        14,
        `~~yoke's AFK run \`${failed}\` failed.~~ That is over: a later AFK run, \`${ok}\`, succeeded. Nothing here needs you.`,
      ],
    ]);
    expect(await sync()).toBe(0);
    // On another issue, the comment was deleted before the success: nothing is posted in its place.
    h.forge.addIssue('acme/api', 15);
    await fail({ issue: 15 });
    await sync();
    h.forge.comments.splice(1, 1);
    const ok15 = await liveRun(h, { kind: 'afk_auto', issue: 15, secret: 's' });
    await h.store.runs.end(ok15, 'success', null, h.clock.now());
    expect(await sync()).toBe(0);
    expect(h.forge.comments.map((c) => c.number)).toEqual([14]);
    expect(await sync()).toBe(0);
  });
});
