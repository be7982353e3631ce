import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ActionsLauncher } from '../../src/launcher/actions.js';
import { CommandLauncher, processStartTime } from '../../src/launcher/command.js';
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
  limits: { maxTurns: 60, maxUsd: null },
  rejection: null,
  ...over,
});
const runOf = (id: string, ref: string | null, launchedAt = Date.now()): Run =>
  ({ id, repo: 'acme/api', launcherRef: ref, launchedAt, kind: 'lander' }) as Run;

describe('the command launcher', () => {
  it('TR06 starts a local process with the run facts, its secret and an allowlisted environment, and sees it end', async () => {
    const out = join(dir, 'env.json');
    const exited: string[] = [];
    let done!: () => void;
    const gone = new Promise<void>((r) => (done = r));
    // yoke's own secrets are in its environment; none may reach a run.
    const parentEnv = {
      PATH: process.env.PATH,
      HOME: '/home/yoke',
      PRIVATE_KEY: '-----BEGIN RSA PRIVATE KEY-----',
      WEBHOOK_SECRET: 'w'.repeat(40),
      YOKE_API_TOKENS: 't'.repeat(40),
      YOKE_DB_PATH: '/var/lib/yoke/yoke.db',
      GITHUB_TOKEN: 'ghs_yokes_own',
    };
    const launcher = new CommandLauncher({
      command: `node -e "require('fs').writeFileSync('${out}', JSON.stringify(process.env))"`,
      onExit: (id) => (exited.push(id), done()),
      parentEnv,
      extraEnv: { AGENT_MODEL: 'small' },
    });
    const { ref } = await launcher.start(
      spec('r-env', { kind: 'afk_auto', subject: 'issue#3', prNumber: null, headSha: null }),
    );
    expect(ref).toMatch(/^pid:\d+:\d+$/);
    await gone;
    const env = JSON.parse(readFileSync(out, 'utf8')) as Record<string, string>;
    // What the shell and node add themselves (PWD, SHLVL, _) aside, the child sees exactly this.
    for (const added of ['PWD', 'SHLVL', '_', 'OLDPWD']) delete env[added];
    expect(env).toEqual({
      PATH: process.env.PATH,
      HOME: '/home/yoke',
      AGENT_MODEL: 'small',
      YOKE_RUN_ID: 'r-env',
      YOKE_RUN_KIND: 'afk_auto',
      YOKE_REPO: 'acme/api',
      YOKE_SUBJECT: 'issue#3',
      YOKE_ISSUE: '3',
      YOKE_DEADLINE: '2026-11-29T13:00:00.000Z',
      YOKE_API_URL: 'http://127.0.0.1:3000',
      YOKE_RUN_SECRET: 's3cret',
      YOKE_LIMITS: '{"max_turns":60}',
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

  it('TR06 a run that traps SIGTERM, and a grandchild that left its process group, are killed with SIGKILL after the grace', async () => {
    const marker = join(dir, 'grandchild.pid');
    // The run ignores SIGTERM and starts a grandchild in a session of its own that ignores it too.
    const launcher = new CommandLauncher({
      command: `trap '' TERM; setsid bash -c 'trap "" TERM; echo $$ > ${marker}; sleep 60' & sleep 60`,
      killGraceMs: 1_000,
    });
    const { ref } = await launcher.start(spec('r-stubborn', { kind: 'afk_auto', secret: null }));
    const child = Number(/^pid:(\d+)/.exec(ref!)![1]);
    let grandchild = 0;
    for (let i = 0; i < 50 && !grandchild; i++) {
      await new Promise((r) => setTimeout(r, 20));
      try {
        grandchild = Number(readFileSync(marker, 'utf8'));
      } catch {
        /* not yet */
      }
    }
    expect(grandchild).toBeGreaterThan(0);
    const alive = (pid: number) =>
      processStartTime(pid) !== null && !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    await launcher.cancel(runOf('r-stubborn', ref), repo);
    await new Promise((r) => setTimeout(r, 100));
    expect([alive(child), alive(grandchild)]).toEqual([true, true]); // SIGTERM is ignored...
    for (let i = 0; i < 100 && (alive(child) || alive(grandchild)); i++) await new Promise((r) => setTimeout(r, 50));
    expect([alive(child), alive(grandchild)]).toEqual([false, false]); // ...SIGKILL, after the grace, is not
  });

  it('TR02 a lander gets no run secret; its exit code is its verdict, told to yoke with its output', async () => {
    const out = join(dir, 'lander-env.json');
    let exit!: (e: unknown) => void;
    const exited = new Promise((r) => (exit = r));
    const launcher = new CommandLauncher({
      command: `node -e "require('fs').writeFileSync('${out}', JSON.stringify(process.env)); console.log('1 failed'); process.exit(1)"`,
      logDir: join(dir, 'logs'),
      onExit: (id, kind, e) => exit({ id, kind, ...e }),
    });
    expect(launcher.usesSecret('lander')).toBe(false);
    expect(launcher.usesSecret('fix')).toBe(true);
    await launcher.start(spec('r-judge', { secret: null }));
    expect(await exited).toEqual({ id: 'r-judge', kind: 'lander', code: 1, signal: null, outputTail: '1 failed\n' });
    expect(Object.keys(JSON.parse(readFileSync(out, 'utf8'))).filter((k) => /SECRET|TOKEN|KEY/.test(k))).toEqual([]);
  });

  it('TR06 knows a run it never started, and trusts a pid an earlier yoke started only with its start time', async () => {
    const launcher = new CommandLauncher({ command: 'true' });
    expect(await launcher.liveness(runOf('r-none', null))).toEqual({
      state: 'never_started',
      detail: 'the process was never started',
    });
    const mine = processStartTime(process.pid)!;
    expect(await launcher.liveness(runOf('r-mine', `pid:${process.pid}:${mine}`))).toEqual({ state: 'running' });
    // The same pid with another start time is another process: the run is over.
    expect(await launcher.liveness(runOf('r-reused', `pid:${process.pid}:${Number(mine) - 1}`))).toEqual({
      state: 'ended',
      detail: `pid ${process.pid} now belongs to another process`,
    });
    expect(await launcher.liveness(runOf('r-gone', 'pid:99999999:1'))).toEqual({
      state: 'ended',
      detail: 'process is gone',
    });
  });
});

describe('the actions launcher', () => {
  it('publishes the runner into the repository once, then dispatches with reach github, when runs reach yoke through GitHub', async () => {
    const forge = new FakeForge();
    const launcher = new ActionsLauncher({
      forge,
      now: () => Date.UTC(2026, 10, 29, 12),
      unseenGraceMs: 10 * 60_000,
      runner: async () => ({ code: '// runner', sha256: 'e'.repeat(64) }),
      reach: 'github',
    });
    const published: string[] = [];
    const publish = forge.publishRunner.bind(forge);
    forge.publishRunner = async (repo, sha, code) => {
      published.push(`${repo.fullName} ${sha.slice(0, 4)} ${code}`);
      return publish(repo, sha, code);
    };
    await launcher.start(spec('r-1', { secret: null }));
    await launcher.start(spec('r-2', { secret: null }));
    expect(published).toEqual(['acme/api eeee // runner']);
    expect(forge.dispatches.map((d) => [d.inputs.run_id, d.inputs.reach, d.inputs.runner_sha256])).toEqual([
      ['r-1', 'github', 'e'.repeat(64)],
      ['r-2', 'github', 'e'.repeat(64)],
    ]);
  });

  it('dispatches the workflow with the run facts as inputs, then finds, follows and cancels the workflow run', async () => {
    const forge = new FakeForge();
    let now = Date.UTC(2026, 10, 29, 12);
    const launcher = new ActionsLauncher({
      forge,
      now: () => now,
      unseenGraceMs: 10 * 60_000,
      runner: async () => ({ code: '// runner', sha256: 'f'.repeat(64) }),
      reach: 'api',
    });
    const { ref } = await launcher.start(spec('r-act', { secret: null, limits: { maxTurns: 40, maxUsd: 2.5 } }));
    expect(ref).toBe('pending:yoke-run.yml@main');
    expect(forge.runnersPublished.size).toBe(0);
    expect(forge.dispatches).toEqual([
      {
        repo: 'acme/api',
        workflow: 'yoke-run.yml',
        ref: 'main',
        inputs: {
          run_id: 'r-act',
          kind: 'lander',
          subject: 'pr#7',
          head_sha: 'abcdef1',
          deadline: '2026-11-29T13:00:00.000Z',
          api_url: 'http://127.0.0.1:3000',
          runner_sha256: 'f'.repeat(64),
          limits: '{"max_turns":40,"max_usd":2.5}',
          rejection: '',
        },
      },
    ]);
    const run = runOf('r-act', ref, now);
    expect(await launcher.liveness(run, repo)).toEqual({ state: 'running' }); // not listed yet, within the grace
    forge.workflowRuns.set('r-act', {
      id: 77,
      status: 'in_progress',
      conclusion: null,
      repositoryId: 1,
      event: 'workflow_dispatch',
    });
    expect(await launcher.liveness(run, repo)).toEqual({ state: 'running', ref: 'yoke-run.yml@main#77' });
    const found = runOf('r-act', 'yoke-run.yml@main#77', now);
    forge.workflowRuns.set('r-act', {
      id: 77,
      status: 'completed',
      conclusion: 'success',
      repositoryId: 1,
      event: 'workflow_dispatch',
    });
    expect(await launcher.liveness(found, repo)).toEqual({ state: 'ended', detail: 'workflow run 77 success' });
    await launcher.cancel(found, repo);
    expect(forge.cancelled).toEqual([77]);
    // A dispatch that never shows up is a launch that never started.
    now += 11 * 60_000;
    expect(await launcher.liveness(runOf('r-lost', 'pending:yoke-run.yml@main', now - 11 * 60_000), repo)).toEqual({
      state: 'never_started',
      detail: 'no yoke-run.yml run for r-lost appeared',
    });
  });
});
