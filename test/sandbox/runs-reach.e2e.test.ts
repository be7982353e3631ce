import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runnerBundle } from '../../src/agent/bundle.js';
import { attachDemoPlans, deliverDemo } from '../../sandbox/deliver.js';
import { DEMO_REPO } from '../../sandbox/demo-repo.js';
import { revParse } from '../../sandbox/git.js';
import type { Sandbox } from '../../sandbox/sandbox.js';
import { sandboxPerTest } from '../helpers/sandbox-log.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../sandbox/otlp-receiver.js';
import { describeTracesOfMission, type MissionTraces } from '../observe/mission-traces.js';

/** Warnings the tests below provoke, each asserted where it is. */
const CLAIMED_WARNINGS: string[] = [];

// YOKE_RUNS_REACH=github, end to end: yoke listens on a loopback port no run
// is told about, the forge sends it no webhook, and the runs call no URL of
// yoke's: they fetch the runner from the repository, push with their own
// token and hand results back as artifacts yoke reads.

const sandboxes = sandboxPerTest(CLAIMED_WARNINGS);

// The whole mission below exports its traces to a receiver in this process (test/observe/mission-traces.ts reads
// them, once its sandbox stopped): one mission for both, as each took a whole one of its own.
let receiver: OtlpReceiver;
let traces: MissionTraces | null = null;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver?.stop();
});

const logsOf = (s: Sandbox) =>
  s.forge.runner.runs.map((r) => (existsSync(r.logPath) ? readFileSync(r.logPath, 'utf8') : ''));

describe('runs that reach yoke through GitHub alone', () => {
  it('TR32 the whole mission: five issues merged and delivered, the protection rule answered by polling, and no run or webhook ever reaches yoke', async () => {
    const s = await sandboxes.start({
      launcher: 'actions',
      failAgent: 0,
      runsReach: 'github',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'yoke-sandbox' },
    });
    await attachDemoPlans(s);
    await s.waitUntil(() => s.done(), 150_000, 'every demo issue to merge');
    const d = await deliverDemo(s, { dropAnswers: 0, log: () => undefined, timeoutMs: 120_000 });
    await s.waitUntil(async () => (await s.runtime.store.runs.countLive()) === 0, 20_000, 'the last runs to be reaped');
    traces = {
      receiver,
      issueTrace: await s.runtime.store.issueTraces.get(DEMO_REPO, 1),
      dispatched: s.forge.runner.runs
        .filter((w) => w.workflow === 'yoke-run.yml' && w.inputs.subject === 'issue#1')
        .map((w) => w.inputs.traceparent),
    };
    expect(d.status).toBe('succeeded');
    const rows = await s.summary();
    expect(rows.map((r) => [r.state, r.closeout.split(' ')[0]])).toEqual(Array(5).fill(['merged', 'delivered']));
    // A fix went the same way: the reject, a fix pushed to its own branch, moved onto the claim PR by yoke, a new accept.
    expect(rows.some((r) => r.runs.some((x) => x.kind === 'fix' && x.outcome === 'success'))).toBe(true);

    // Nothing came in: no webhook was sent, and no run was told where yoke listens.
    expect(s.forge.deliveries).toEqual([]);
    // Where yoke listens, as a URL would name it (`:PORT`): the bare digits also turn up by chance inside the
    // inputs' and logs' hex digests (one run failed on an issue digest holding them).
    const port = `:${new URL(s.yokeUrl).port}`;
    const runs = s.forge.runner.runs.filter((r) => r.workflow === 'yoke-run.yml');
    expect(runs.length).toBeGreaterThanOrEqual(11);
    for (const r of runs) {
      expect(r.inputs).toMatchObject({ reach: 'github', api_url: 'yoke-app-1' });
      expect(JSON.stringify(r.inputs)).not.toContain(port);
    }
    const logs = logsOf(s).join('\n');
    expect(logs).not.toContain(port);
    expect(logs).toMatch(/handed back success for/);
    expect(logs).not.toMatch(/^reported /m);
    // Every run that reports left its result as an artifact, read back by yoke.
    // TR35: each under the name its reporting job chose at random, which nothing before it could take.
    expect(runs.every((r) => Object.keys(r.artifacts).some((n) => /^yoke-result-[0-9a-f]{32}$/.test(n)))).toBe(true);
    // The runner lives in the repository under its hash, published once.
    const { sha256 } = await runnerBundle();
    expect(revParse(s.repo.gitDir, `refs/yoke/runner/${sha256}`)).toMatch(/^[0-9a-f]{40}$/);

    // DP03 with no webhook: production's job waited at yoke's rule, and the sweep found it and approved it, once.
    const reviews = await s.runtime.store.stageDeployments.reviews(DEMO_REPO);
    const production = reviews.filter((r) => r.environment === 'production');
    expect(production.map((r) => [r.decision, r.answer])).toEqual([['approved', 'answered']]);
    expect(
      s.forge.deployments.gates.filter((g) => g.environment === 'production').map((g) => g.answers.length),
    ).toEqual([1]);
  }, 300_000);

  it('TR32 yoke stopped while a run completes reads its result when it starts again; a writer’s own run under the same name hands nothing back', async () => {
    const s = await sandboxes.start({
      launcher: 'actions',
      failAgent: 0,
      runsReach: 'github',
      issues: 1,
      agentDelayMs: 3000,
    });
    await s.waitUntil(async () => (await s.runs()).some((r) => r.kind === 'afk_auto'), 30_000, 'the AFK run to launch');
    const afk = (await s.runs()).find((r) => r.kind === 'afk_auto')!;
    // A writer dispatches the workflow themselves, under the AFK run's id, as a lander that accepts: its report job
    // gets a genuine OIDC token of the writer's own run and uploads a result for yoke's run id.
    const main = revParse(s.repo.gitDir, 'refs/heads/main')!;
    const dispatched = await fetch(
      `${s.forge.url}/api/v3/repos/${DEMO_REPO}/actions/workflows/yoke-run.yml/dispatches`,
      {
        method: 'POST',
        headers: { authorization: `token ${s.maintainerToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          ref: 'main',
          inputs: {
            run_id: afk.id,
            kind: 'lander',
            subject: 'pr#1',
            head_sha: main,
            deadline: new Date(Date.now() + 3600_000).toISOString(),
            api_url: 'yoke-app-1',
            runner_sha256: (await runnerBundle()).sha256,
            reach: 'github',
          },
        }),
      },
    );
    expect(dispatched.status).toBe(204);
    await s.yoke.stop();
    // While yoke is down, both workflow runs complete, each leaving a result artifact.
    await s.waitUntil(
      () => s.forge.runner.runs.length === 2 && s.forge.runner.runs.every((r) => r.status === 'completed'),
      60_000,
      'both workflow runs to complete with yoke stopped',
    );
    const writers = s.forge.runner.runs.find((r) => r.actor.login !== 'yoke-sandbox[bot]')!;
    expect(Object.keys(writers.artifacts).some((n) => n.startsWith('yoke-result-'))).toBe(true);
    expect(logsOf(s).join('\n')).toMatch(new RegExp(`handed back accept for ${afk.id}`));
    await s.startYoke();
    await s.waitUntil(() => s.done(), 60_000, 'the issue to merge after the restart');
    const after = (await s.runtime.store.runs.get(afk.id))!;
    // The genuine result, read after the restart: the claim PR yoke opened; the writer's accept counted for nothing.
    expect([after.outcome, after.verdict, after.summary?.startsWith('Opened #')]).toEqual(['success', null, true]);
  }, 180_000);
});

// After the mission's sandbox stopped (sandboxPerTest), which flushed what yoke's exporter held.
describeTracesOfMission(() => traces);
