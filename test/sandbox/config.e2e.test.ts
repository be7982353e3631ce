import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ENGINE_CONFIG, DEMO_REPO } from '../../sandbox/demo-repo.js';
import { Sandbox } from '../../sandbox/sandbox.js';
import { unclaimedWarnings } from '../helpers/sandbox-log.js';

// A newcomer's bad opt-in file, end to end: the repository is disabled (not
// paused), its work waits with a code of its own, and a push that fixes the
// file wakes yoke at once through the push webhook, long before the config's
// refresh interval.

const BAD = 'auto: sometimes\nautolnad:\n  enabled: true\nfix_forward:\n  max_attempts: two\n';
let s: Sandbox;
const work = mkdtempSync(join(tmpdir(), 'yoke-config-e2e-'));

const git = (args: string[], token?: string): Promise<number | null> =>
  new Promise((done) => {
    const auth = token
      ? ['-c', `http.extraHeader=Authorization: basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`]
      : [];
    const child = spawn('git', [...auth, '-c', 'user.name=m', '-c', 'user.email=m@example.com', ...args], {
      cwd: work,
      env: { PATH: process.env.PATH, HOME: work, GIT_TERMINAL_PROMPT: '0' },
      stdio: 'ignore',
    });
    child.once('close', done);
  });

beforeAll(async () => {
  // The config refresh is far longer than this test: only the push webhook can wake yoke in time.
  s = new Sandbox({
    launcher: 'command',
    failAgent: 0,
    issues: 1,
    tickSeconds: 1,
    reaperSeconds: 1,
    files: { '.github/yoke.yml': BAD },
    env: { YOKE_CONFIG_REFRESH_SECONDS: '3600', YOKE_IDLE_PROBE_SECONDS: '3600' },
  });
  await s.start();
}, 60_000);

afterAll(async () => {
  await s?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('a bad opt-in file', () => {
  it('GH01 disables the repository with each field named; its work waits as disabled, not paused, not silently', async () => {
    await s.waitUntil(
      async () => (await s.runtime.store.repos.get(DEMO_REPO))?.disabledReason != null,
      20_000,
      'the repository to be disabled',
    );
    const state = (await s.runtime.store.repos.get(DEMO_REPO))!;
    expect(state.disabledReason).toContain('did you mean "autoland"?');
    expect(state.pausedSince).toBeNull();
    expect(s.logged('warn', 'repo disabled by its opt-in file').map((l) => l.reason)).toEqual([state.disabledReason]);
    await s.waitUntil(
      () =>
        (s.runtime.engine.lastPass?.waiting ?? []).some(
          (w) => w.repo === DEMO_REPO && w.reason.code === 'repo_disabled',
        ),
      10_000,
      'the disabled work to wait',
    );
    expect(await s.runs()).toEqual([]);
  });

  it('GH01 a push to the default branch that fixes it wakes yoke at once: enabled again, and the labelled issue gets its run', async () => {
    const token = s.forge.personalToken('maintainer');
    expect(await git(['clone', '-q', `${s.forge.url}/${DEMO_REPO}.git`, '.'], token)).toBe(0);
    writeFileSync(join(work, '.github/yoke.yml'), DEMO_ENGINE_CONFIG);
    expect(await git(['commit', '-qam', 'Fix the yoke settings'])).toBe(0);
    const pushedAt = Date.now();
    expect(await git(['push', '-q', 'origin', 'HEAD:refs/heads/main'], token)).toBe(0);
    await s.waitUntil(
      async () => (await s.runtime.store.repos.get(DEMO_REPO))?.disabledReason === null && (await s.runs()).length > 0,
      20_000,
      'the repository to be enabled and its issue started',
    );
    expect(Date.now() - pushedAt).toBeLessThan(20_000);
    expect(s.forge.deliveries.filter((d) => d.event === 'push').map((d) => d.status)).toEqual([200]);
  });

  it('holds no warning or error that no test here claimed', () => {
    expect(unclaimedWarnings(s, ['repo disabled by its opt-in file'])).toEqual([]);
  });
});
