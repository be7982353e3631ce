import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ActionsLauncher } from '../../src/launcher/actions.js';
import { CommandLauncher } from '../../src/launcher/command.js';
import type { LaunchSpec } from '../../src/launcher/launcher.js';
import type { Run } from '../../src/store/runs.js';
import { FakeForge } from '../helpers/fake-forge.js';

const dir = mkdtempSync(join(tmpdir(), 'yoke-launch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const repo = { owner: 'acme', name: 'api', fullName: 'acme/api', installationId: 1 };
const spec = (runId: string, over: Partial<LaunchSpec> = {}): LaunchSpec => ({
  runId,
  kind: 'lander',
  repo,
  subject: 'pr#7',
  issueNumber: 3,
  prNumber: 7,
  headSha: 'abcdef1',
  deadline: Date.UTC(2026, 10, 29, 13),
  secret: 's3cret',
  apiUrl: 'http://127.0.0.1:3000',
  workflow: 'yoke-run.yml',
  ref: 'main',
  ...over,
});
const runOf = (id: string, ref: string | null, launchedAt = Date.now()): Run =>
  ({ id, repo: 'acme/api', launcherRef: ref, launchedAt, kind: 'lander' }) as Run;

describe('the command launcher', () => {
  it('starts a local process with the run facts and its secret in the environment, and sees it end', async () => {
    const out = join(dir, 'env.json');
    const exited: string[] = [];
    let done!: () => void;
    const gone = new Promise<void>((r) => (done = r));
    const launcher = new CommandLauncher({
      command: `node -e "require('fs').writeFileSync('${out}', JSON.stringify(Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('YOKE_')))))"`,
      onExit: (id) => (exited.push(id), done()),
    });
    const { ref } = await launcher.start(spec('r-env'));
    expect(ref).toMatch(/^pid:\d+$/);
    await gone;
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual({
      YOKE_RUN_ID: 'r-env',
      YOKE_RUN_KIND: 'lander',
      YOKE_REPO: 'acme/api',
      YOKE_SUBJECT: 'pr#7',
      YOKE_ISSUE: '3',
      YOKE_PR: '7',
      YOKE_HEAD_SHA: 'abcdef1',
      YOKE_DEADLINE: '2026-11-29T13:00:00.000Z',
      YOKE_API_URL: 'http://127.0.0.1:3000',
      YOKE_RUN_SECRET: 's3cret',
    });
    expect(exited).toEqual(['r-env']);
    expect(await launcher.liveness(runOf('r-env', ref))).toEqual({ state: 'ended', detail: 'exit code 0' });
  });

  it('SP17 kills the process when the reaper cancels it at the deadline', async () => {
    let done!: () => void;
    const gone = new Promise<void>((r) => (done = r));
    const launcher = new CommandLauncher({ command: 'node -e "setTimeout(() => {}, 60000)"', onExit: () => done() });
    const { ref } = await launcher.start(spec('r-long'));
    expect(await launcher.liveness(runOf('r-long', ref))).toEqual({ state: 'running' });
    await launcher.cancel(runOf('r-long', ref), repo);
    await gone;
    expect(await launcher.liveness(runOf('r-long', ref))).toEqual({ state: 'ended', detail: 'killed by SIGTERM' });
  });

  it('knows a run it never started, and asks the OS about one an earlier yoke started', async () => {
    const launcher = new CommandLauncher({ command: 'true' });
    expect(await launcher.liveness(runOf('r-none', null))).toEqual({ state: 'never_started', detail: 'the process was never started' });
    expect(await launcher.liveness(runOf('r-mine', `pid:${process.pid}`))).toEqual({ state: 'running' });
    expect(await launcher.liveness(runOf('r-gone', 'pid:99999999'))).toEqual({ state: 'ended', detail: 'process is gone' });
  });
});

describe('the actions launcher', () => {
  it('dispatches the workflow with the run facts as inputs, then finds, follows and cancels the workflow run', async () => {
    const forge = new FakeForge();
    let now = Date.UTC(2026, 10, 29, 12);
    const launcher = new ActionsLauncher({ forge, now: () => now, unseenGraceMs: 10 * 60_000 });
    const { ref } = await launcher.start(spec('r-act', { secret: null }));
    expect(ref).toBe('pending:yoke-run.yml');
    expect(forge.dispatches).toEqual([
      {
        repo: 'acme/api',
        workflow: 'yoke-run.yml',
        ref: 'main',
        inputs: { run_id: 'r-act', kind: 'lander', subject: 'pr#7', head_sha: 'abcdef1', deadline: '2026-11-29T13:00:00.000Z', api_url: 'http://127.0.0.1:3000' },
      },
    ]);
    const run = runOf('r-act', ref, now);
    expect(await launcher.liveness(run, repo)).toEqual({ state: 'running' }); // not listed yet, within the grace
    forge.workflowRuns.set('r-act', { id: 77, status: 'in_progress', conclusion: null });
    expect(await launcher.liveness(run, repo)).toEqual({ state: 'running', ref: 'yoke-run.yml#77' });
    const found = runOf('r-act', 'yoke-run.yml#77', now);
    forge.workflowRuns.set('r-act', { id: 77, status: 'completed', conclusion: 'success' });
    expect(await launcher.liveness(found, repo)).toEqual({ state: 'ended', detail: 'workflow run 77 success' });
    await launcher.cancel(found, repo);
    expect(forge.cancelled).toEqual([77]);
    // A dispatch that never shows up is a launch that never started.
    now += 11 * 60_000;
    expect(await launcher.liveness(runOf('r-lost', 'pending:yoke-run.yml', now - 11 * 60_000), repo)).toEqual({
      state: 'never_started',
      detail: 'no yoke-run.yml run for r-lost appeared',
    });
  });
});
