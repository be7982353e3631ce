import { effectiveCap, type CapPolicy, type LivenessSnapshot } from '../cap.js';
import { subjectKey, waitingItem, type SpawnStage, type Waiting, type WaitingItem } from '../candidate.js';
import { protectedGlobs } from './protected-paths.js';
import type { RepoFacts } from '../repo-facts.js';
import type { PassOutcome } from './spawn-pass.js';
import type { RunKind } from '../../store/fleet/runs.js';

// `yoke plan OWNER/REPO`: what the next pass would do for one repository, and
// why not for the rest, changing nothing (Renovate's dryRun). The engine
// gathers as a pass does and runs the spawn pass with a launch that only
// says yes; this turns that into what a maintainer reads. Pure.

export interface NextPassLaunch {
  /** Its place among all the launches of the pass, fleet-wide: the cap is shared. */
  order: number;
  stage: SpawnStage;
  kind: RunKind;
  subject: string;
  title: string | null;
  why: string;
}

export interface NextPass {
  repo: string;
  cap: number;
  /** Live runs now, fleet-wide (the cap counts them all) and here. */
  live: { fleet: number; here: number };
  /** Spent today (UTC), in US dollars, with the limits; null when the pass could not read the repository. */
  spend: { repo: number; fleet: number; repoLimit: number | null; fleetLimit: number | null } | null;
  /** The protected paths in force: a claim PR that changes one waits for a writer's approval. */
  protectedPaths: string[] | null;
  /** Launches the same pass makes in other repositories: the cap is theirs too. */
  launchesElsewhere: number;
  launches: NextPassLaunch[];
  waiting: WaitingItem[];
}

export function planNextPass(input: {
  repo: string;
  /** What the pass gathered: the liveness snapshot, and what its producers passed over. */
  gathered: { snapshot: LivenessSnapshot; waiting: readonly Waiting[] };
  outcomes: readonly PassOutcome[];
  facts: RepoFacts | null;
  policy: CapPolicy;
}): NextPass {
  const { repo, gathered, outcomes, facts } = input;
  const launched = outcomes.filter((o) => o.result.kind === 'launched');
  const launches = launched.flatMap((o, i): NextPassLaunch[] =>
    o.candidate.repo === repo
      ? [
          {
            order: i + 1,
            stage: o.candidate.stage,
            kind: o.candidate.kind,
            subject: o.candidate.subject,
            title: o.candidate.title ?? null,
            why: o.candidate.why,
          },
        ]
      : [],
  );
  const passedOver = outcomes.flatMap((o) =>
    o.why && o.candidate.repo === repo
      ? [
          waitingItem({
            repo,
            stage: o.candidate.stage,
            subject: o.candidate.subject,
            ...(o.candidate.title !== undefined ? { title: o.candidate.title } : {}),
            reason: o.why,
          }),
        ]
      : [],
  );
  const liveHere = [...gathered.snapshot.liveSubjects].filter((k) => k.startsWith(subjectKey(repo, ''))).length;
  return {
    repo,
    cap: effectiveCap(input.policy, repo),
    live: { fleet: gathered.snapshot.liveCount, here: liveHere },
    spend: facts
      ? {
          repo: facts.spentToday.repo,
          fleet: facts.spentToday.fleet,
          repoLimit: facts.config.budget?.daily_usd ?? null,
          fleetLimit: facts.fleetDailyUsd,
        }
      : null,
    protectedPaths: facts ? protectedGlobs(facts.config.protected_paths) : null,
    launchesElsewhere: launched.length - launches.length,
    launches,
    waiting: [...passedOver, ...gathered.waiting.filter((w) => w.repo === repo).map(waitingItem)],
  };
}
