import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CLIENT_POLICY, yokeOctokit, type Octokit } from '../../src/forge/github/octokit.js';
import { RepoReader } from '../../src/forge/github/repo-reader.js';
import { dueSince, phaseOf } from '../../src/kernel/spread.js';
import { EmbeddedForge } from '../../sandbox/forge-server.js';
import type { ForgeRepo, Issue } from '../../sandbox/forge/state.js';
import { openStore } from '../../src/store/store.js';
import { ManualClock } from '../helpers/fleet.js';

// The repository read against the embedded forge, whose timestamps have
// GitHub's one-second precision, on an injected clock.

const dir = mkdtempSync(join(tmpdir(), 'yoke-reader-'));
const clock = new ManualClock(Date.UTC(2026, 10, 30, 10, 0, 0, 100));
let forge: EmbeddedForge;
let repo: ForgeRepo;
let issues: Issue[];
let o: Octokit;
const ref = { owner: 'acme', name: 'api', fullName: 'acme/api', installationId: 1 };
const opts = { claimLabel: 'yoke:claim', configMaxAgeMs: 600_000 };

beforeAll(async () => {
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  forge = new EmbeddedForge({
    dataDir: dir,
    appId: 1,
    appSlug: 'yoke-test',
    appPublicKey: keys.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    now: clock.now,
  });
  await forge.start();
  repo = forge.createRepo('acme/api', { files: { '.github/yoke.yml': 'auto: true\n' }, installationId: 1 });
  const owner = forge.user('acme');
  issues = [
    forge.createIssue(repo, owner, 'One', 'first', ['yoke:afk']),
    forge.createIssue(repo, owner, 'Two', 'second', ['yoke:afk']),
  ];
  const Client = yokeOctokit(
    openStore(':memory:'),
    clock,
    { requests: 0, notModified: 0 },
    {
      ...DEFAULT_CLIENT_POLICY,
      retry: { enabled: false, doNotRetry: [] },
      throttle: { enabled: false, maxRetries: 0, maxWaitSeconds: 0 },
    },
  );
  o = new Client({
    auth: { token: forge.personalToken('acme') },
    baseUrl: `${forge.url}/api/v3`,
  }) as unknown as Octokit;
});

afterAll(async () => {
  await forge.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the repository read', () => {
  it('SC02 sees a change made in the same second as the last one it saw, and costs one 304 when nothing changed', async () => {
    const reader = new RepoReader(clock.now);
    const first = await reader.readRepo(o, ref, opts);
    expect(first.issues.map((i) => [i.number, i.labels]).sort()).toEqual([
      [1, ['yoke:afk']],
      [2, ['yoke:afk']],
    ]);
    // A first read is made without a probe; the next probe lists what changed since GitHub's answer, a second
    // back: the two issues of that second, so once more in full, which settles the probe on the newest change.
    forge.http.resetStats();
    await reader.readRepo(o, ref, opts);
    expect(forge.http.stats.log.length).toBeGreaterThan(1);
    await reader.readRepo(o, ref, opts); // the settled probe's first answer
    // Unchanged: one probe, answered 304.
    forge.http.resetStats();
    await reader.readRepo(o, ref, opts);
    expect(forge.http.stats.log.map((l) => l.status)).toEqual([304]);
    // Within the same second as both issues' last update, #1 gets a label: #2 is still the newest item.
    clock.advance(300);
    forge.state.addLabel(repo, issues[0]!, 'bug');
    const after = await reader.readRepo(o, ref, opts);
    expect(after.issues.find((i) => i.number === 1)!.labels).toEqual(['yoke:afk', 'bug']);
  });

  it('SC02 an idle repository’s last view stands in without a request until its slot of the probe period comes round', async () => {
    const reader = new RepoReader(clock.now);
    await reader.readRepo(o, ref, opts);
    forge.http.resetStats();
    // The repository's slots begin where its phase puts them: the next one after the read is its probe's.
    const period = 300_000;
    const phase = phaseOf('acme/api', period);
    const nextSlot = (Math.floor((clock.now() + phase) / period) + 1) * period - phase;
    clock.advance(nextSlot - clock.now() - 1);
    await reader.readRepo(o, ref, { ...opts, maxViewAgeMs: period });
    expect(forge.http.stats.requests).toBe(0);
    clock.advance(1);
    await reader.readRepo(o, ref, { ...opts, maxViewAgeMs: period });
    expect(forge.http.stats.requests).toBeGreaterThan(0);
  });

  it('SC03 says when a read would cost no request: the opt-in file and the last view stand in', async () => {
    const reader = new RepoReader(clock.now);
    const idle = { maxViewAgeMs: 300_000, configMaxAgeMs: 600_000 };
    expect(reader.standsIn(ref, idle)).toBe(false); // never read
    await reader.readRepo(o, ref, opts);
    expect(reader.standsIn(ref, idle)).toBe(true);
    expect(reader.standsIn(ref, { ...idle, maxViewAgeMs: 0 })).toBe(false); // active: probed every pass
    forge.http.resetStats();
    await reader.readRepo(o, ref, { ...opts, maxViewAgeMs: 300_000 });
    expect(forge.http.stats.requests).toBe(0);
    // The repository's next probe slot (at its phase of the period) comes round: its probe is due.
    const phase = phaseOf('acme/api', 300_000);
    clock.advance((Math.floor((clock.now() + phase) / 300_000) + 1) * 300_000 - phase - clock.now());
    expect(reader.standsIn(ref, idle)).toBe(false);
  });

  it("SC02 the opt-in file is read again when the listing's pushed_at moves, not by age; one yoke cannot watch is read again within its period", async () => {
    const contents = () => forge.http.stats.log.filter((l) => l.path.includes('/contents/')).length;
    const watched = new RepoReader(clock.now);
    watched.listed([{ ...ref, pushedAt: '2026-11-30T09:00:00Z' }], 1);
    forge.http.resetStats();
    await watched.readConfig(o, ref, 600_000);
    expect(contents()).toBe(1);
    // Two refresh periods later, nothing pushed: it stands.
    clock.advance(1_200_000);
    watched.listed([{ ...ref, pushedAt: '2026-11-30T09:00:00Z' }], 1);
    await watched.readConfig(o, ref, 600_000);
    expect(contents()).toBe(1);
    // A push: read again at once (one conditional request).
    watched.listed([{ ...ref, pushedAt: '2026-11-30T09:30:00Z' }], 1);
    await watched.readConfig(o, ref, 600_000);
    expect(contents()).toBe(2);
    // Without a pushed_at to watch, the file is read again within each period, at the repository's phase.
    const unwatched = new RepoReader(clock.now);
    await unwatched.readConfig(o, ref, 600_000);
    forge.http.resetStats();
    clock.advance(600_000);
    await unwatched.readConfig(o, ref, 600_000);
    expect(contents()).toBe(1);
  });

  it('SC02 the probes of a thousand repositories read at once fall evenly over their period, each once a period', () => {
    const period = 300_000;
    const readAt = Date.UTC(2026, 11, 5, 12, 0, 0);
    const names = Array.from({ length: 1000 }, (_, i) => `fleet/repo-${i}`);
    // Each minute of the period (a pass a minute), how many come due.
    const perMinute = Array.from({ length: 5 }, (_, m) =>
      names.filter(
        (n) =>
          dueSince(n, readAt, readAt + (m + 1) * 60_000, period) && !dueSince(n, readAt, readAt + m * 60_000, period),
      ),
    ).map((due) => due.length);
    expect(perMinute.reduce((a, b) => a + b, 0)).toBe(1000);
    for (const n of perMinute) expect(n).toBeGreaterThan(150);
    for (const n of perMinute) expect(n).toBeLessThan(250);
    // None is left longer than the period, and none is due twice within it.
    for (const n of names) {
      expect(dueSince(n, readAt, readAt + period, period)).toBe(true);
      const firstDue = readAt + period - ((readAt + phaseOf(n, period)) % period);
      expect(dueSince(n, firstDue, firstDue + period - 1, period)).toBe(false);
    }
  });

  it('SC01 a first read takes the default branch from the installation’s listing instead of a read of its own', async () => {
    const reader = new RepoReader(clock.now);
    forge.http.resetStats();
    const view = await reader.readRepo(o, { ...ref, defaultBranch: 'trunk' }, opts);
    expect(view.defaultBranch).toBe('trunk');
    const paths = forge.http.stats.log.map((l) => l.path.replace('/api/v3/repos/acme/api', ''));
    expect(paths).not.toContain('');
    // Without it, the repository itself is read.
    forge.http.resetStats();
    const plain = await new RepoReader(clock.now).readRepo(o, ref, opts);
    expect(plain.defaultBranch).toBe('main');
    expect(forge.http.stats.log.map((l) => l.path.replace('/api/v3/repos/acme/api', ''))).toContain('');
  });
});

describe('the opt-in file, through _extends', () => {
  it("TR28 takes defaults from the same owner's repositories, and refuses settings from anyone else's, naming them", async () => {
    forge.createRepo('acme/shared', { files: { '.github/yoke.yml': 'auto: true\nprefix: ACME\n' }, installationId: 1 });
    forge.createRepo('mallory/defaults', {
      files: { '.github/yoke.yml': 'auto: true\nautoland: { enabled: true }\n' },
      installationId: 1,
    });
    forge.createRepo('acme/team', { files: { '.github/yoke.yml': '_extends: shared\n' }, installationId: 1 });
    forge.createRepo('acme/lured', {
      files: { '.github/yoke.yml': '_extends: mallory/defaults\n' },
      installationId: 1,
    });
    const reader = new RepoReader(clock.now);
    const team = await reader.readConfig(
      o,
      { owner: 'acme', name: 'team', fullName: 'acme/team', installationId: 1 },
      0,
    );
    expect(team.state === 'valid' && team.config.prefix).toBe('ACME');
    expect(
      await reader.readConfig(o, { owner: 'acme', name: 'lured', fullName: 'acme/lured', installationId: 1 }, 0),
    ).toEqual({
      state: 'invalid',
      reason:
        ".github/yoke.yml extends mallory/defaults (through _extends): yoke takes settings only from acme's own repositories; name one of them, or copy the settings in",
    });
  });
});
