import { parseDeliverySettings } from '../src/config/delivery.js';
import { createDeploymentRun } from '../src/delivery/runs/deployment-runs.js';
import { dispatchStage } from '../test/helpers/gate-check.js';
import { dispatchIdempotent } from '../src/delivery/gate/idempotent-check.js';
import { reviewProtectionRequest } from '../src/delivery/deployments/protection-rule.js';
import type { Sql } from '../src/store/sql/sql.js';
import type { BenchEngine } from './engines.js';
import { sized } from './size.js';
import { makeDeliveryHarness, REPO } from '../test/helpers/delivery.js';

// Delivery figures on each engine (SQLite's file database, PostgreSQL on loopback): one gate check over 50 members with
// 3 plans each, and replays of a recorded dispatch result.

type Print = (name: string, value: number, unit: string) => void;

/** Counts the statements sent through `sql` (and the transactions it opens) from now on, by patching it in place. */
function countStatements(sql: Sql): { count: () => number; reset: () => void } {
  let n = 0;
  const patch = (target: Sql) => {
    for (const m of ['all', 'get', 'run', 'exec'] as const) {
      const original = target[m].bind(target) as (...a: unknown[]) => Promise<unknown>;
      (target as unknown as Record<string, unknown>)[m] = (...args: unknown[]) => (n++, original(...args));
    }
    const transaction = target.transaction.bind(target);
    target.transaction = (fn) =>
      transaction((tx) => (tx === target ? fn(tx) : (patched.has(tx) || (patch(tx), patched.add(tx)), fn(tx))));
  };
  const patched = new WeakSet<Sql>();
  patch(sql);
  return { count: () => n, reset: () => (n = 0) };
}

export async function benchDelivery(
  print: Print,
  median: (xs: number[]) => number,
  engine: BenchEngine,
): Promise<void> {
  {
    const store = await engine.open({ file: true });
    const members = Array.from({ length: sized(50, 3) }, (_, i) => i + 1);
    const plan = (name: string) =>
      `name: ${name}\ncases:\n  - {id: a, title: A, run: "true"}\n  - {id: b, title: B, run: "true"}\n  - {id: c, title: C, manual: true}\n`;
    const plans: Record<string, string> = {
      '.github/yoke/qa/smoke.yml': plan('smoke'),
      '.github/yoke/qa/perf.yml': plan('perf'),
    };
    for (const n of members) plans[`.github/yoke/qa/own-${n}.yml`] = plan(`own-${n}`);
    const h = await makeDeliveryHarness({
      config: { delivery: { stages: [{ name: 'qa', kind: 'qa' }] } },
      items: members,
      plans,
      store,
    });
    // Each member: its own plan, and two plans every member shares.
    for (const n of members)
      for (const p of [`own-${n}`, 'smoke', 'perf'])
        await store.qa.attach({
          repo: REPO,
          issueNumber: n,
          planId: p,
          attachedBy: 'bench',
          source: 'api',
          attachedAt: 0,
        });
    const run = await createDeploymentRun(h.fleet, { repo: REPO });
    if (!run.ok) throw new Error(run.refusal.message);
    const times: number[] = [];
    const statements = countStatements(store.sql);
    for (let i = 0; i < sized(21, 2); i++) {
      statements.reset();
      const t0 = performance.now();
      const d = await dispatchStage(h.fleet, run.value.id, 'qa');
      times.push(performance.now() - t0);
      if (!d.ok) throw new Error(d.refusal.message);
    }
    print(
      `gate_check_50_members_ms${engine.suffix}`,
      median(times.slice(1)),
      `ms (50 members, 3 plans each, ${engine.name === 'sqlite' ? 'file database' : 'PostgreSQL on loopback'})`,
    );
    // What the issue on structure asks to bring down: the gate step's round trips to the database, per check (the last one's).
    print(`gate_check_50_members_statements${engine.suffix}`, statements.count(), 'statements per check');

    const env = { driver: 'bench', lease: null, stage: 'qa', commit: run.value.commit };
    const never = () => new Promise<void>(() => {});
    await dispatchIdempotent(
      h.fleet,
      { runId: run.value.id, stage: 'qa', requestId: 'bench-replay-1', envelope: env },
      { responseLimitMs: 60_000 },
      never,
    );
    const n = sized(5_000, 50);
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const r = await dispatchIdempotent(
        h.fleet,
        { runId: run.value.id, stage: 'qa', requestId: 'bench-replay-1', envelope: env },
        { responseLimitMs: 60_000 },
        never,
      );
      if (!r.replayed) throw new Error('not a replay');
    }
    print(`dispatch_replays_per_s${engine.suffix}`, Math.round(n / ((performance.now() - t0) / 1000)), 'replays/s');
    await store.close();
  }

  {
    // DP03: protection-rule answers, each read, decided and recorded, with 500 deployment runs of the repository in the store.
    const store = await engine.open({ file: true });
    const delivery = {
      stages: [
        { name: 'staging', kind: 'deploy', command: 'true' },
        { name: 'qa', kind: 'qa' },
        { name: 'production', kind: 'deploy', command: 'true' },
      ],
    };
    const h = await makeDeliveryHarness({ config: { delivery }, store });
    const parsed = parseDeliverySettings(REPO, delivery);
    if (parsed.state !== 'valid') throw new Error('bad bench settings');
    const { settings } = parsed;
    // Earlier runs at other commits, all finished (one run of a repository is active at a time).
    for (let i = 0; i < sized(500, 5); i++) {
      await store.deploymentRuns.create({
        id: `dr-bench-${i}`,
        repo: REPO,
        commit: `${i}`.padStart(40, 'f'),
        settings,
        creator: null,
        supersedes: null,
        members: [{ issueNumber: 1, prNumber: 101 }],
        at: i,
      });
      await store.deploymentRuns.setStatus(`dr-bench-${i}`, 'succeeded', i);
    }
    const run = await createDeploymentRun(h.fleet, { repo: REPO });
    if (!run.ok) throw new Error(run.refusal.message);
    await store.deploymentRuns.setStage({ runId: run.value.id, stage: 'qa', state: 'settled', at: 1 });
    const n = sized(1_000, 20);
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      const v = await reviewProtectionRequest(h.fleet, {
        repo: h.forge.repo(REPO).ref,
        environment: 'production',
        sha: run.value.commit,
        workflowRunId: i + 1,
        event: 'workflow_dispatch',
        sender: null,
      });
      if (v.decision !== 'approved') throw new Error(`unexpected ${v.decision}`);
    }
    print(
      `protection_reviews_per_s${engine.suffix}`,
      Math.round(n / ((performance.now() - t0) / 1000)),
      'answers/s (read, decide, answer, record; 500 runs in the store)',
    );
    await store.close();
  }
}
