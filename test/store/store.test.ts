import { describe, expect, it } from 'vitest';
import { migrate, openDb } from '../../src/store/db.js';
import { openStore } from '../../src/store/store.js';

const newRun = (id: string, subject: string) => ({
  id,
  repo: 'acme/api',
  kind: 'afk_auto' as const,
  subject,
  issueNumber: 1,
  prNumber: null,
  headSha: null,
  launchedAt: 1,
  budgetDeadline: 2,
  launcher: 'command',
  launcherRef: null,
  secretHash: null,
  capAtLaunch: 2,
  liveAtLaunch: 1,
});

describe('the store', () => {
  it('applies its migrations once, in order, and records them', () => {
    const db = openDb(':memory:');
    const applied = db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[];
    expect(applied.map((a) => a.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(migrate(db)).toBe(0);
  });

  it('SP08 refuses a second live run for one subject at the database level, and allows it once the first has ended', async () => {
    const store = openStore(':memory:');
    await store.runs.insert(newRun('a', 'issue#1'));
    await expect(store.runs.insert(newRun('b', 'issue#1'))).rejects.toThrow(/UNIQUE constraint failed/);
    expect(await store.runs.end('a', 'failure', null, 3)).toBe(true);
    expect(await store.runs.end('a', 'failure', null, 4)).toBe(false); // an outcome is applied once
    await store.runs.insert(newRun('b', 'issue#1'));
    expect((await store.runs.listLive()).map((r) => r.id)).toEqual(['b']);
  });

  it('SP15 pauses at the threshold and keeps the pause through a success; only unpause lifts it', async () => {
    const store = openStore(':memory:');
    await store.repos.ensure('acme/api', 1, 0);
    for (let i = 1; i <= 3; i++) await store.repos.addFailure('acme/api', 3, 100 * i);
    expect(await store.repos.get('acme/api')).toMatchObject({ consecutiveFailures: 3, pausedSince: 300 });
    await store.repos.resetFailures('acme/api', 400);
    expect(await store.repos.get('acme/api')).toMatchObject({ consecutiveFailures: 0, pausedSince: 300 });
    await store.repos.unpause('acme/api', 500);
    expect(await store.repos.get('acme/api')).toMatchObject({ consecutiveFailures: 0, pausedSince: null });
  });

  it('TR03 a report that races the reaper does not land on a run that has ended', async () => {
    const store = openStore(':memory:');
    await store.runs.insert(newRun('late', 'issue#9'));
    await store.runs.end('late', 'failure', 'ended without reporting a result', 1);
    expect(await store.runs.recordReport('late', { outcome: 'success', verdict: null, summary: 'too late' }, 0)).toBe(false);
    expect(await store.runs.get('late')).toMatchObject({ outcome: 'failure', reportedOutcome: null });
  });
});
