import { AUTOLAND, addClaimPull, makeHarness, report } from '../test/helpers/fleet.js';

// LD05's figures, from a simulation through yoke's real pass and landing code (the engine, its producers,
// autoland) over a fake GitHub: every lander takes one period T and judges exactly the tree it is given (the
// head merged onto its base), accepting it unless two changes in it break the branch together; a fix takes
// T and repairs its PR. Cap 4. The pass runs at the start of each period: it merges, then launches.

const REPO = 'bench/landing';

export interface LandingFigures {
  /** Lander runs per landed PR. */
  runsPerPr: number;
  /** Periods T until the last PR landed. */
  timeT: number;
  /** Periods at whose start the default branch held a tree no lander accepted. */
  redSteps: number;
  landed: number;
}

const headOf = (pr: number, v: number) =>
  `${pr.toString(16).padStart(4, '0')}${'0'.repeat(28)}${v.toString(16).padStart(8, '0')}`;

export async function simulateLanding(n: number, conflicts: readonly [number, number][]): Promise<LandingFigures> {
  const h = makeHarness({ policy: { globalCap: 4, landerAttemptsPerHead: 3 } });
  const repo = h.forge.addRepo(REPO, { ...AUTOLAND, fix_forward: { enabled: true, max_attempts: 3 } });
  const trees = new Map<string, Set<string>>([['c0', new Set()]]);
  const version = new Map<number, number>();
  const accepted = new Set<string>();
  const key = (t: Set<string>) => [...t].sort().join(',');
  const broken = (t: Set<string>) => conflicts.some(([a, b]) => t.has(`${a}@0`) && t.has(`${b}@0`));
  const merge = h.forge.merge.bind(h.forge);
  h.forge.merge = async (ref, number, sha, method) => {
    const tip = repo.history.at(-1)!;
    const res = await merge(ref, number, sha, method);
    if (res.ok) trees.set(repo.history.at(-1)!, new Set([...trees.get(tip)!, `${number}@${version.get(number) ?? 0}`]));
    return res;
  };
  for (let pr = 1; pr <= n; pr++) await addClaimPull(h, REPO, { number: pr, issue: pr, headSha: headOf(pr, 0) });
  let t = 0;
  let red = 0;
  let lastLanded = 0;
  while (t < 200) {
    await h.engine.reaperTick();
    await h.engine.schedulerTick();
    const tip = trees.get(repo.history.at(-1)!)!;
    if (tip.size && !accepted.has(key(tip))) red++;
    if (repo.merged.length > lastLanded) lastLanded = repo.merged.length;
    if (!repo.pulls.length) break;
    // One period T passes: every run that is live ends.
    t++;
    h.clock.advance(60_000);
    for (const run of await h.store.runs.listLive()) {
      if (run.kind === 'lander') {
        // The head's stack, then the head, merged onto its base (LD05).
        const tree = new Set([
          ...(trees.get(run.baseSha ?? '') ?? new Set<string>()),
          ...[...run.stack, { pr: run.prNumber!, head: run.headSha! }].map(
            (m) => `${m.pr}@${parseInt(m.head.slice(-8), 16)}`,
          ),
        ]);
        const ok = run.baseSha !== null && !broken(tree);
        if (ok) accepted.add(key(tree));
        await report(h, run.id, 'success', ok ? 'accept' : 'reject');
      } else if (run.kind === 'fix') {
        const v = (version.get(run.prNumber!) ?? 0) + 1;
        version.set(run.prNumber!, v);
        const pull = repo.pulls.find((p) => p.number === run.prNumber);
        if (pull) pull.headSha = headOf(run.prNumber!, v);
        await report(h, run.id, 'success');
      } else await report(h, run.id, 'success');
    }
  }
  const runs = await h.store.runs.listForRepo(REPO);
  if (process.env.LANDING_TRACE)
    console.log(runs.map((r) => `${r.kind}#${r.prNumber}@${r.baseSha}:${r.verdict ?? r.outcome}`).join('\n'));
  const landers = runs.filter((r) => r.kind === 'lander').length;
  return { runsPerPr: landers / Math.max(1, repo.merged.length), timeT: t, redSteps: red, landed: repo.merged.length };
}

/** The figures issue 44 names: 10 accepted PRs that do not conflict, then the same with 2 of the 10 breaking the branch together. */
export async function benchLanding(print: (name: string, value: number, unit: string) => void): Promise<void> {
  const clean = await simulateLanding(10, []);
  print('landing_runs_per_pr_clean', clean.runsPerPr, 'lander runs per landed PR (10 PRs, none conflicting, cap 4)');
  print('landing_time_clean_T', clean.timeT, 'T to land all 10');
  const conflicting = await simulateLanding(10, [[3, 8]]);
  print(
    'landing_runs_per_pr_conflicting',
    conflicting.runsPerPr,
    'lander runs per landed PR (2 of the 10 conflicting)',
  );
  print('landing_time_conflicting_T', conflicting.timeT, 'T to land all 10');
  print(
    'landing_red_steps',
    clean.redSteps + conflicting.redSteps,
    'steps at which the default branch held a tree no lander accepted',
  );
}
