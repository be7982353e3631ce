import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { effectiveCap } from '../../src/fleet/cap.js';
import { stageRank } from '../../src/fleet/candidate.js';
import { requestStart, resetRepo } from '../../src/fleet/runs/controls.js';
import type { PassReport } from '../../src/fleet/engine/pass.js';
import { isAfkKind, type Outcome, type Run } from '../../src/store/fleet/runs.js';
import { AUTOLAND, makeHarness, type Harness } from '../helpers/fleet.js';
import { testEngine } from '../helpers/test-store.js';

// Random interleavings of ticks, kicks, manual starts, run completions,
// deadline expiries and launcher failures over repos with different caps.

const REPOS = ['acme/wide', 'acme/narrow', 'acme/plain'] as const;
const POLICY = {
  globalCap: 2,
  repoCaps: { 'acme/wide': 4, 'acme/narrow': 1 },
  pauseThreshold: 3,
  landerAttemptsPerHead: 2,
};

type Step =
  | { t: 'scheduler' }
  | { t: 'reaper' }
  | { t: 'kick' }
  | { t: 'concurrent' }
  | { t: 'start'; repo: number; issue: number }
  | { t: 'complete'; pick: number; ok: boolean; accept: boolean }
  | { t: 'expire'; minutes: number }
  | { t: 'launcherFail' }
  | { t: 'reset'; repo: number }
  /** TR33: someone requests changes on an open claim PR: a writer (maint) or a reader (rita). */
  | { t: 'review'; pick: number; writer: boolean };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ t: 'scheduler' as const }) },
  { weight: 3, arbitrary: fc.constant({ t: 'reaper' as const }) },
  { weight: 2, arbitrary: fc.constant({ t: 'kick' as const }) },
  { weight: 2, arbitrary: fc.constant({ t: 'concurrent' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('start' as const), repo: fc.nat(2), issue: fc.integer({ min: 1, max: 4 }) }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant('complete' as const),
      pick: fc.nat(10),
      ok: fc.boolean(),
      accept: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('expire' as const), minutes: fc.integer({ min: 1, max: 90 }) }) },
  { weight: 1, arbitrary: fc.constant({ t: 'launcherFail' as const }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('reset' as const), repo: fc.nat(2) }) },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('review' as const), pick: fc.nat(10), writer: fc.boolean() }),
  },
);

interface Ledger {
  events: (
    { e: 'end'; run: Run; outcome: Outcome } | { e: 'add' | 'reset'; repo: string } | { e: 'unpause'; repo: string }
  )[];
}

function instrument(h: Harness): Ledger {
  const ledger: Ledger = { events: [] };
  const runs = h.store.runs;
  const end = runs.end.bind(runs);
  runs.end = async (id, outcome, reason, at) => {
    const run = (await runs.get(id))!;
    const changed = await end(id, outcome, reason, at);
    if (changed) ledger.events.push({ e: 'end', run, outcome });
    return changed;
  };
  const repos = h.store.repos;
  const add = repos.addFailure.bind(repos);
  repos.addFailure = (name, threshold, now) => (
    ledger.events.push({ e: 'add', repo: name }),
    add(name, threshold, now)
  );
  const reset = repos.resetFailures.bind(repos);
  repos.resetFailures = (name, now) => (ledger.events.push({ e: 'reset', repo: name }), reset(name, now));
  const unpause = repos.unpause.bind(repos);
  repos.unpause = (name, now) => (ledger.events.push({ e: 'unpause', repo: name }), unpause(name, now));
  return ledger;
}

function world(): Harness {
  const h = makeHarness({ policy: POLICY });
  h.forge.addRepo('acme/wide', AUTOLAND);
  h.forge.addRepo('acme/narrow', AUTOLAND);
  h.forge.addRepo('acme/plain', { auto: true });
  for (const r of REPOS) for (let i = 1; i <= 4; i++) h.forge.addIssue(r, i);
  for (const r of REPOS) h.forge.repo(r).permissions = { maint: 'write', rita: 'read' };
  return h;
}

let reviewSeq = 0;

/** TR33: a change request lands on one of the open claim PRs (any repository), by a writer or a reader. */
function review(h: Harness, step: Extract<Step, { t: 'review' }>): void {
  const pulls = REPOS.flatMap((r) => h.forge.repo(r).pulls);
  if (pulls.length === 0) return;
  const pull = pulls[step.pick % pulls.length]!;
  const id = ++reviewSeq;
  pull.reviews.push({
    id,
    author: step.writer ? 'maint' : 'rita',
    state: 'CHANGES_REQUESTED',
    commitId: pull.headSha,
    body: `ask ${id}`,
    submittedAt: h.clock.now(),
  });
}

let shaSeq = 0;
const nextSha = () => (++shaSeq).toString(16).padStart(7, '0');

/** A live run finishes: its process reports and exits, and its effect lands on the forge. */
async function complete(h: Harness, step: Extract<Step, { t: 'complete' }>): Promise<void> {
  const live = (await h.store.runs.listLive()).filter((r) => h.launcher.table.running.has(r.id));
  if (live.length === 0) return;
  const run = live[step.pick % live.length]!;
  const outcome = step.ok ? 'success' : 'failure';
  const verdict = run.kind === 'lander' && step.ok ? (step.accept ? 'accept' : 'reject') : null;
  await h.store.runs.recordReport(run.id, { outcome, verdict, summary: null }, 0);
  if (step.ok && isAfkKind(run.kind) && run.issueNumber !== null) {
    const repo = h.forge.repo(run.repo);
    const number = 100 + repo.pulls.length + Math.floor(Math.random() * 1e6);
    h.forge.addPull(run.repo, {
      number,
      headSha: nextSha(),
      labels: [],
      body: `Closes #${run.issueNumber}\n\nYoke-Run: ${run.id}`,
    });
  }
  if (step.ok && run.kind === 'fix' && run.prNumber !== null) {
    const pull = h.forge.repo(run.repo).pulls.find((p) => p.number === run.prNumber);
    if (pull) pull.headSha = nextSha();
  }
  h.launcher.finish(run.id);
}

function checkPass(p: PassReport): void {
  const launched = p.outcomes.filter((o) => o.result.kind === 'launched');
  const ranks = launched.map((o) => stageRank(o.candidate.stage));
  expect([...ranks].sort((a, b) => a - b)).toEqual(ranks);
  // Nothing of a later stage launched while an earlier-stage candidate, held back by a cap at least as high, waited.
  p.outcomes.forEach((o, i) => {
    if (o.result.kind !== 'launched') return;
    const capL = effectiveCap(POLICY, o.candidate.repo);
    for (const e of p.outcomes.slice(0, i)) {
      if (
        (e.result.kind === 'shed' || e.result.kind === 'over_cap') &&
        stageRank(e.candidate.stage) < stageRank(o.candidate.stage)
      ) {
        expect(effectiveCap(POLICY, e.candidate.repo)).toBeLessThan(capL);
      }
    }
  });
}

/** TR33: a reader's ask starts nothing; a writer's is open or carried by exactly the fix of its PR that started; none is lost. */
async function checkAsks(h: Harness): Promise<void> {
  for (const r of REPOS) {
    const runs = new Map((await h.store.runs.listForRepo(r)).map((run) => [run.id, run]));
    for (const ask of await h.store.asks.listForRepo(r)) {
      if (ask.author === 'rita') {
        expect([ask.declined, ask.carriedByRun]).toEqual(['not_a_writer', null]);
        continue;
      }
      expect(ask.declined).toBeNull();
      if (ask.carriedByRun === null) continue;
      const run = runs.get(ask.carriedByRun)!;
      expect([run.kind, run.prNumber]).toEqual(['fix', ask.number]);
      // A fix that never started hands its asks back.
      expect(run.outcomeReason ?? '').not.toMatch(/^launch failed/);
      expect(run.why).toMatch(/reviews? by @maint/);
    }
  }
}

async function checkInvariants(h: Harness, ledger: Ledger): Promise<void> {
  // The fleet-wide live count never exceeded the cap of the repo each run was launched for.
  for (const run of await h.store.runs.listAll(10_000)) {
    expect(run.capAtLaunch).toBe(effectiveCap(POLICY, run.repo));
    expect(run.liveAtLaunch).toBeLessThanOrEqual(run.capAtLaunch);
  }
  for (const e of h.launcher.table.log) {
    if (e.event === 'start') expect(e.concurrent).toBeLessThanOrEqual(effectiveCap(POLICY, e.repo));
  }
  // No subject has two live runs, in the store or out there.
  const live = await h.store.runs.listLive();
  expect(new Set(live.map((r) => `${r.repo}:${r.subject}`)).size).toBe(live.length);
  const running = [...h.launcher.table.running.values()];
  expect(new Set(running.map((s) => `${s.repo.fullName}:${s.subject}`)).size).toBe(running.length);
  // Only AFK outcomes moved a counter: every move directly follows the AFK end that caused it.
  ledger.events.forEach((ev, i) => {
    if (ev.e === 'add' || ev.e === 'reset') {
      const prev = ledger.events[i - 1];
      expect(prev?.e).toBe('end');
      if (prev?.e !== 'end') return;
      expect(isAfkKind(prev.run.kind)).toBe(true);
      expect(prev.run.repo).toBe(ev.repo);
      expect(ev.e === 'add' ? ['failure', 'timeout'] : ['success']).toContain(prev.outcome);
    }
    if (ev.e === 'end' && isAfkKind(ev.run.kind) && ev.outcome !== 'cancelled') {
      expect(ledger.events[i + 1]?.e).toBe(ev.outcome === 'success' ? 'reset' : 'add');
    }
  });
}

describe('the fleet under random interleavings', () => {
  it('SP05 SP08 SP13 SP14 TR33 keeps the cap, one run per subject, stage priority (review-driven fixes after landers, before new work), AFK-only strikes and every writer’s ask at every step', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 5, maxLength: 45 }), async (steps) => {
        const h = world();
        const ledger = instrument(h);
        const passes: PassReport[] = [];
        for (const step of steps) {
          switch (step.t) {
            case 'scheduler':
              passes.push(await h.engine.schedulerTick());
              break;
            case 'reaper':
              passes.push(await h.engine.reaperTick());
              break;
            case 'kick':
              passes.push(await h.engine.kick());
              break;
            case 'concurrent':
              passes.push(
                ...(await Promise.all([
                  h.engine.schedulerTick(),
                  h.engine.reaperTick(),
                  h.engine.kick(),
                  h.engine.schedulerTick(),
                ])),
              );
              break;
            case 'start': {
              const res = await requestStart(h.fleet, REPOS[step.repo]!, step.issue, { by: 'maint' });
              if (!res.ok)
                expect([
                  'repo_paused',
                  'subject_busy',
                  'issue_not_found',
                  'repo_not_opted_in',
                  'repo_not_installed',
                ]).toContain(res.refusal.code);
              passes.push(await h.engine.kick());
              break;
            }
            case 'complete':
              await complete(h, step);
              break;
            case 'expire':
              h.clock.advance(step.minutes * 60_000);
              break;
            case 'launcherFail':
              h.launcher.failNext++;
              break;
            case 'reset':
              await resetRepo(h.fleet, REPOS[step.repo]!);
              passes.push(await h.engine.kick());
              break;
            case 'review':
              review(h, step);
              break;
          }
          await h.engine.lock.run(async () => {});
          for (const p of passes.splice(0)) checkPass(p);
          await checkInvariants(h, ledger);
          await checkAsks(h);
          // A paused repo never gets a new AFK launch.
          for (const r of REPOS) {
            const state = await h.store.repos.get(r);
            if (state?.pausedSince == null) continue;
            const afterPause = (await h.store.runs.listForRepo(r)).filter(
              (run) => isAfkKind(run.kind) && run.launchedAt > state.pausedSince!,
            );
            expect(afterPause).toEqual([]);
          }
        }
      }),
      // On PostgreSQL (YOKE_TEST_ENGINE=postgres) each world is a database of its own: fewer, in the same time.
      { numRuns: testEngine === 'PostgreSQL' ? 25 : 150 },
    );
  });
});
