import { describe, expect, it } from 'vitest';
import { handleComment, handlePolledComments, isPollable } from '../../src/commands/handle.js';
import type { CommentView } from '../../src/forge/types.js';
import { makeHarness } from '../helpers/fleet.js';

// TR05: comment commands count as first written, from writers only, and are never stranded.

async function setup() {
  const h = makeHarness();
  const repo = h.forge.addRepo('acme/api', {});
  repo.permissions = { maint: 'write', rita: 'read' };
  h.forge.addIssue('acme/api', 1);
  await h.store.repos.ensure('acme/api', 1, h.clock.now() - 60_000);
  return { h, ref: repo.ref };
}

const comment = (over: Partial<CommentView> & { id: number; body: string }): CommentView => ({
  issueNumber: 1,
  isPull: false,
  author: 'maint',
  authorIsBot: false,
  createdAt: Date.UTC(2026, 10, 29, 12, 0, 0),
  updatedAt: Date.UTC(2026, 10, 29, 12, 0, 0),
  ...over,
});

describe('comment commands', () => {
  it('TR05 a comment edited into a command does nothing when the poll finds it', async () => {
    const { h, ref } = await setup();
    await h.store.repos.addFailure('acme/api', 1, h.clock.now());
    const edited = comment({ id: 11, body: '/yoke reset', updatedAt: Date.UTC(2026, 10, 29, 12, 5, 0) });
    await handlePolledComments(h.fleet, ref, [edited]);
    expect(await handleComment(h.fleet, { repo: ref, comment: edited, via: 'poll' })).toBe('edited');
    expect((await h.store.repos.get('acme/api'))!.pausedSince).not.toBeNull();
    expect(h.forge.comments).toEqual([]);
    expect(await h.store.commands.get(11)).toBeUndefined();
  });

  it('TR05 a command whose handling fails is tried again on later polls, then answered, never left processing', async () => {
    const { h, ref } = await setup();
    let permissionCalls = 0;
    h.forge.getPermission = async () => {
      permissionCalls++;
      throw new Error('GitHub answered 502');
    };
    const c = comment({ id: 12, body: '/yoke status' });
    expect(await handleComment(h.fleet, { repo: ref, comment: c, via: 'webhook' })).toBe('failed');
    expect(await h.store.commands.get(12)).toMatchObject({ state: 'failed', attempts: 1 });
    expect(h.forge.comments).toEqual([]);
    await handlePolledComments(h.fleet, ref, [c]);
    expect(await h.store.commands.get(12)).toMatchObject({ state: 'failed', attempts: 2 });
    await handlePolledComments(h.fleet, ref, [c]);
    expect(permissionCalls).toBe(3);
    expect(await h.store.commands.get(12)).toMatchObject({ state: 'done', outcome: 'command_failed', attempts: 3 });
    expect(h.forge.comments.map((x) => x.body)).toEqual([
      '@maint yoke could not complete `/yoke status` after 3 attempts: GitHub answered 502\n\n**To recover:** Post the command again in a new comment; if it fails again, the yoke log has the cause.',
    ]);
    // Settled: a later poll leaves it alone.
    await handlePolledComments(h.fleet, ref, [c]);
    expect(permissionCalls).toBe(3);
  });

  it('TR05 a command a crash left processing is taken up again once it is stale', async () => {
    const { h, ref } = await setup();
    const c = comment({ id: 13, body: '/yoke status' });
    await h.store.commands.claim(
      {
        commentId: 13,
        repo: 'acme/api',
        issueNumber: 1,
        author: 'maint',
        body: c.body,
        receivedVia: 'webhook',
        processedAt: h.clock.now(),
      },
      { maxAttempts: 3, staleMs: 600_000 },
    );
    await handlePolledComments(h.fleet, ref, [c]);
    expect(h.forge.comments).toEqual([]); // still fresh: another handler may be on it
    h.clock.advance(600_000);
    await handlePolledComments(h.fleet, ref, [c]);
    expect(await h.store.commands.get(13)).toMatchObject({ state: 'done', outcome: 'done' });
    expect(h.forge.comments).toHaveLength(1);
  });

  it('TR05 GH04 a non-writer’s commands, known or unknown, make yoke write nothing', async () => {
    const { h, ref } = await setup();
    await h.store.repos.addFailure('acme/api', 1, h.clock.now());
    for (const [id, body] of [
      [21, '/yoke reset'],
      [22, '/yoke please merge everything'],
      [23, `/yoke start\n${'x'.repeat(20_000)}`],
    ] as const) {
      expect(
        await handleComment(h.fleet, { repo: ref, comment: comment({ id, body, author: 'rita' }), via: 'webhook' }),
      ).toBe('ignored');
    }
    expect(h.forge.comments).toEqual([]);
    expect(h.forge.reactions).toEqual([]);
    expect((await h.store.repos.get('acme/api'))!.pausedSince).not.toBeNull();
  });
});

describe('commands found by poll', () => {
  it('GH04 a command written in the second yoke first saw the repository counts (GitHub gives seconds), one written before does not', () => {
    const firstSeenAt = Date.UTC(2026, 11, 3, 12, 0, 0, 210);
    const at = (ms: number) => ({ createdAt: ms, updatedAt: ms });
    // GitHub says 12:00:00 for a comment written at 12:00:00.500, after yoke's first look at .210.
    expect(isPollable(at(Date.UTC(2026, 11, 3, 12, 0, 0)), { firstSeenAt })).toBe(true);
    expect(isPollable(at(Date.UTC(2026, 11, 3, 11, 59, 59)), { firstSeenAt })).toBe(false);
    // TR05: edited since, it is no command.
    expect(isPollable({ createdAt: firstSeenAt + 1000, updatedAt: firstSeenAt + 2000 }, { firstSeenAt })).toBe(false);
  });

  it('SC10 a repository with no new comment costs the pass no store read for commands', async () => {
    const { h, ref } = await setup();
    let reads = 0;
    const get = h.store.repos.get.bind(h.store.repos);
    h.store.repos.get = async (name) => (reads++, get(name));
    await handlePolledComments(h.fleet, ref, []);
    expect(reads).toBe(0);
    await handlePolledComments(h.fleet, ref, [comment({ id: 13, body: 'Looks good to me.' })]);
    expect(reads).toBe(1);
  });
});
